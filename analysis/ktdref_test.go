package analysis

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gekc/metrics"
)

// The committed reference reads, and holds the paper's Table 3 as its
// appendix prints it (spot checks of a baseline and a GeKC of each data
// set); a data set it lacks has no values.
func TestReadKTDReference(t *testing.T) {
	ref, err := ReadKTDReference(filepath.Join("..", "results", KTDReferenceName))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		dataset, model, objective string
		want                      metrics.KTDStat
	}{
		{"FB15k-237", "uniform", "", metrics.KTDStat{Mean: 0.589, Std: 0.012}},
		{"FB15k-237", "complex2", "mle", metrics.KTDStat{Mean: 0.102, Std: 0.010}},
		{"WN18RR", NNMFAugName, "", metrics.KTDStat{Mean: 0.607, Std: 0.028}},
		{"WN18RR", "cp2", "pll", metrics.KTDStat{Mean: 0.768, Std: 0.036}},
		{"ogbl-biokg", "training set", "", metrics.KTDStat{Mean: 0.029, Std: 0.010}},
		{"ogbl-biokg", "cp+", "mle", metrics.KTDStat{Mean: 0.738, Std: 0.030}},
	} {
		if got, ok := ref.Lookup(tc.dataset, tc.model, tc.objective); !ok || got != tc.want {
			t.Errorf("%s %s %s: %+v (%v), want %+v", tc.dataset, tc.model, tc.objective, got, ok, tc.want)
		}
	}
	if _, ok := ref.Lookup("umls", "uniform", ""); ok || ref.covers("umls") || !ref.covers("WN18RR") {
		t.Error("UMLS has values, or WN18RR none")
	}
	var none *KTDReference
	if _, ok := none.Lookup("FB15k-237", "uniform", ""); ok || none.covers("FB15k-237") {
		t.Error("a nil reference has values")
	}
}

func TestReadKTDReferenceErrors(t *testing.T) {
	const header = "# a comment\ndataset\tmodel\tobjective\tktd\tktd_sd\n"
	for _, tc := range []struct{ name, text, want string }{
		{"no header", "# only a comment\n", ": no header line"},
		{"other header", "dataset\tmodel\tobjective\tktd\n", ":1: header"},
		{"short row", header + "FB15k-237\tuniform\t-\t0.5\n", ":3: 4 fields, want 5"},
		{"baseline with an objective", header + "FB15k-237\tuniform\tpll\t0.5\t0.1\n", ":3: "},
		{"model without one", header + "FB15k-237\tcp2\t-\t0.5\t0.1\n", ":3: "},
		{"no data set", header + "\tcp2\tmle\t0.5\t0.1\n", ":3: "},
		{"baseline with an empty objective", header + "FB15k-237\tuniform\t\t0.5\t0.1\n", ":3: "},
		{"bad KTD", header + "FB15k-237\tcp2\tmle\tx\t0.1\n", `:3: ktd: "x" is not a number`},
		{"negative spread", header + "FB15k-237\tcp2\tmle\t0.5\t-0.1\n", `:3: ktd_sd: "-0.1" is not a non-negative number`},
		{"NaN", header + "FB15k-237\tcp2\tmle\tNaN\t0.1\n", `:3: ktd: "NaN"`},
		{"twice", header + "FB15k-237\tcp2\tmle\t0.5\t0.1\nFB15k-237\tcp2\tmle\t0.4\t0.1\n", ":4: FB15k-237 cp2 mle is on line 3 already"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), KTDReferenceName)
			if err := os.WriteFile(path, []byte(tc.text), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := ReadKTDReference(path); err == nil || !strings.Contains(err.Error(), path+tc.want) {
				t.Errorf("error %v, want one containing %q", err, path+tc.want)
			}
		})
	}
	// A negative KTD (the unbiased estimate can be) reads.
	path := filepath.Join(t.TempDir(), KTDReferenceName)
	if err := os.WriteFile(path, []byte(header+"FB15k-237\tcp2\tmle\t-0.001\t0.002\r\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if ref, err := ReadKTDReference(path); err != nil {
		t.Error(err)
	} else if st, _ := ref.Lookup("FB15k-237", "cp2", "mle"); st.Mean != -0.001 {
		t.Errorf("a negative KTD read as %+v", st)
	}
}

// ktd.md sets the reference's value beside each row where the reference
// covers the table's data set ("–" where it has none for the row), and
// has no such column where it does not.
func TestKTDTablesReference(t *testing.T) {
	path := filepath.Join(t.TempDir(), KTDReferenceName)
	text := "dataset\tmodel\tobjective\tktd\tktd_sd\numls\tuniform\t-\t0.5\t0.01\numls\tcomplex2\tmle\t0.25\t0.02\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	ref, err := ReadKTDReference(path)
	if err != nil {
		t.Fatal(err)
	}
	rows := []KTDRow{ktdRow("uniform", "", "", 0.8312), ktdRow("complex2", "mle", "complex2-mle-s0", 0.0136), ktdRow("cp2", "mle", "cp2-mle-s0", 0.02)}
	set := KTDSetting{Features: "complex-pll-s0", DrawSize: 661, Samples: 25000}
	plainTSV, plain, err := KTDTables(rows, set, nil)
	if err != nil {
		t.Fatal(err)
	}
	tsv, md, err := KTDTables(rows, set, ref)
	if err != nil {
		t.Fatal(err)
	}
	if string(tsv) != string(plainTSV) {
		t.Error("the reference changed ktd.tsv")
	}
	for _, want := range []string{"|   paper KTD   |", "| 0.831 ± 0.002 | 0.500 ± 0.010 |", "| 0.014 ± 0.002 | 0.250 ± 0.020 |", "| 0.020 ± 0.002 | –  ", "only the order of the rows compares"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("ktd.md has no %q:\n%s", want, md)
		}
	}
	if strings.Contains(string(plain), "paper KTD") {
		t.Errorf("without a reference:\n%s", plain)
	}
	for i := range rows {
		rows[i].Dataset = "nations"
	}
	if _, md, _ := KTDTables(rows, set, ref); strings.Contains(string(md), "paper KTD") {
		t.Errorf("a data set the reference lacks:\n%s", md)
	}
}

// Whatever ReadKTDReference accepts holds finite values with non-negative
// spreads, each under a key its file named; nothing panics.
func FuzzReadKTDReference(f *testing.F) {
	f.Add([]byte("# c\ndataset\tmodel\tobjective\tktd\tktd_sd\nFB15k-237\tuniform\t-\t0.589\t0.012\nFB15k-237\tcp2\tmle\t0.070\t0.007\n"))
	f.Add([]byte("dataset\tmodel\tobjective\tktd\tktd_sd\r\nWN18RR\tNNMFAug\t-\t-1e-3\t0\r\n"))
	f.Add([]byte("dataset\tmodel\tobjective\tktd\tktd_sd\nx\tcp2\t-\t1\t1\n"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(t.TempDir(), KTDReferenceName)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		ref, err := ReadKTDReference(path)
		if err != nil {
			if !strings.HasPrefix(err.Error(), path) {
				t.Errorf("error %q does not name the file", err)
			}
			return
		}
		for k, st := range ref.rows {
			if math.IsNaN(st.Mean) || math.IsInf(st.Mean, 0) || !(st.Std >= 0) || math.IsInf(st.Std, 0) {
				t.Errorf("%v: %+v", k, st)
			}
			if got, ok := ref.Lookup(k[0], k[1], k[2]); !ok || got != st || !strings.Contains(string(b), k[0]) {
				t.Errorf("%v: looked up %+v, %v", k, got, ok)
			}
		}
	})
}
