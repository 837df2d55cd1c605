package analysis

import (
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gekc/kg"
	"gekc/metrics"

	"gonum.org/v1/gonum/mat"
)

func ktdRow(model, objective, run string, mean float64) KTDRow {
	return KTDRow{Dataset: "umls", Model: model, Objective: objective, Run: run,
		Stat: metrics.KTDStat{Mean: mean, Std: 0.002, Draws: 100}} // values of 6 digits: ktd.tsv keeps %.6g
}

func TestKTDTSVRoundTrip(t *testing.T) {
	rows := []KTDRow{
		ktdRow("training set", "", "", 0.0021),
		ktdRow("uniform", "", "", 0.8312),
		ktdRow("NNMFAug", "", "", 0.4101),
		ktdRow("complex2", "mle", "complex2-mle-s0", 0.0136),
		ktdRow("complex2", "pll", "complex2-pll-s0", 0.0311), // a record without the LL
	}
	rows[1].LL, rows[1].HasLL = -13.6392, true
	rows[2].LL, rows[2].HasLL = math.Inf(-1), true
	rows[2].Across, rows[2].Tests = 2827, 3134
	rows[3].LL, rows[3].HasLL = -9.2741, true
	set := KTDSetting{Features: "complex-pll-s0", Digest: "0123456789ab", DrawSize: 661, Samples: 25000}
	tsv, md, err := KTDTables(rows, set, nil)
	if err != nil {
		t.Fatal(err)
	}
	if note := "and 2,827 of the 3,134 test triples of umls lie across its clusters."; !strings.Contains(string(md), note) {
		t.Errorf("ktd.md without NNMFAug's count %q:\n%s", note, md)
	}
	// Only NNMFAug's row, with its LL, has a count of test triples across
	// clusters, and not more than there are.
	for i, count := range [][2]int{{0, 0}, {1, 0}, {3, 2}, {-1, 2}} {
		bad := slices.Clone(rows)
		bad[2].Across, bad[2].Tests = count[0], count[1]
		bad[3].Across, bad[3].Tests = 1, 2 // a run's
		if i > 0 {
			bad[3] = rows[3]
		}
		if _, _, err := KTDTables(bad, set, nil); err == nil || !strings.Contains(err.Error(), "test triples across clusters") {
			t.Errorf("counts %v (and a run's, %v): error %v", count, i == 0, err)
		}
	}
	path := filepath.Join(t.TempDir(), KTDTSVName)
	if err := os.WriteFile(path, tsv, 0o644); err != nil {
		t.Fatal(err)
	}
	got, gotSet, err := ReadKTDTSV(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, rows) || gotSet != set {
		t.Errorf("read back %+v, %+v\nwant %+v, %+v", got, gotSet, rows, set)
	}

	// A table from before the setting was recorded reads with a zero setting.
	old := "dataset\tmodel\tobjective\trun\tktd_mean\tktd_std\tdraws\n" +
		"umls\tuniform\t\t\t0.8312\t0.08312\t100\n" +
		"umls\tcomplex2\tmle\tcomplex2-mle-s0\t0.0136\t0.00136\t100\n"
	if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	got, gotSet, err = ReadKTDTSV(path)
	if err != nil || len(got) != 2 || gotSet != (KTDSetting{}) || got[1].Run != "complex2-mle-s0" {
		t.Errorf("old table: %+v, %+v, %v", got, gotSet, err)
	}

	// A table from before NNMFAug's count was recorded reads without it,
	// one from before ψ's digest was with neither, and one from before the
	// test LL was with none of the three.
	without := func(columns ...int) string {
		var lines []string
		for _, line := range strings.Split(string(tsv), "\n") {
			if f := strings.Split(line, "\t"); len(f) == len(ktdColumns) {
				for _, c := range columns { // from the last
					f = slices.Delete(f, c, c+1)
				}
				line = strings.Join(f, "\t")
			}
			lines = append(lines, line)
		}
		return strings.Join(lines, "\n")
	}
	uncounted := slices.Clone(rows)
	uncounted[2].Across, uncounted[2].Tests = 0, 0
	if err := os.WriteFile(path, []byte(without(9, 8)), 0o644); err != nil {
		t.Fatal(err)
	}
	got, gotSet, err = ReadKTDTSV(path)
	if err != nil || !reflect.DeepEqual(got, uncounted) || gotSet != set {
		t.Errorf("a table without across_clusters: %+v, %+v, %v", got, gotSet, err)
	}
	if _, md, err := KTDTables(got, gotSet, nil); err != nil || !strings.Contains(string(md), "this table did not record how many") {
		t.Errorf("ktd.md of a table without NNMFAug's count (%v):\n%s", err, md)
	}
	undigested := set
	undigested.Digest = ""
	if err := os.WriteFile(path, []byte(without(12, 9, 8)), 0o644); err != nil {
		t.Fatal(err)
	}
	got, gotSet, err = ReadKTDTSV(path)
	if err != nil || !reflect.DeepEqual(got, uncounted) || gotSet != undigested {
		t.Errorf("a table without features_digest: %+v, %+v, %v", got, gotSet, err)
	}
	if err := os.WriteFile(path, []byte(without(12, 9, 8, 7)), 0o644); err != nil {
		t.Fatal(err)
	}
	got, gotSet, err = ReadKTDTSV(path)
	want := slices.Clone(uncounted)
	for i := range want {
		want[i].LL, want[i].HasLL = 0, false
	}
	if err != nil || !reflect.DeepEqual(got, want) || gotSet != undigested {
		t.Errorf("a table without test_ll: %+v, %+v, %v", got, gotSet, err)
	}

	// Lines ended by \r\n read the same.
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(string(tsv), "\n", "\r\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, gotSet, err = ReadKTDTSV(path); err != nil || !reflect.DeepEqual(got, rows) || gotSet != set {
		t.Errorf("\\r\\n lines: %+v, %+v, %v", got, gotSet, err)
	}

	// A header alone is no rows.
	if err := os.WriteFile(path, tsv[:bytes.IndexByte(tsv, '\n')+1], 0o644); err != nil {
		t.Fatal(err)
	}
	if got, gotSet, err = ReadKTDTSV(path); err != nil || got != nil || gotSet != (KTDSetting{}) {
		t.Errorf("a header alone: %v, %+v, %v", got, gotSet, err)
	}

	// No file is no rows.
	got, gotSet, err = ReadKTDTSV(filepath.Join(t.TempDir(), KTDTSVName))
	if err != nil || got != nil || gotSet != (KTDSetting{}) {
		t.Errorf("missing file: %v, %+v, %v", got, gotSet, err)
	}
}

func TestReadKTDTSVErrors(t *testing.T) {
	header := "dataset\tmodel\tobjective\trun\tktd_mean\tktd_std\tdraws\tfeatures\tdraw_size\tsamples\n"
	good := "umls\tcp2\tmle\tcp2-mle-s0\t0.01\t0.001\t100\tcomplex-s0\t661\t25000\n"
	llHeader := strings.Join(ktdColumns, "\t") + "\n"
	goodLL := "umls\tcp2\tmle\tcp2-mle-s0\tbest valid MRR, epoch 3\t0.01\t0.001\t-9.27\t\t\t100\tcomplex-s0\t0123456789ab\t661\t25000\n"
	nnmf := "umls\tNNMFAug\t\t\t\t0.4\t0.02\t-22.1\t2827\t3134\t100\tcomplex-s0\t0123456789ab\t661\t25000\n"
	for _, tc := range []struct {
		name, text, want string
	}{
		{"empty file", "", ":1: header"},
		{"unknown header", "a\tb\n", ":1: header"},
		{"short row", header + good + "umls\tcp2\n", ":3: fields: 2, want 10"},
		{"bad mean", header + strings.Replace(good, "0.01", "x", 1), ":2: ktd_mean"},
		{"bad draws", header + strings.Replace(good, "\t100\t", "\tmany\t", 1), ":2: draws"},
		{"path as run", header + strings.Replace(good, "cp2-mle-s0", "../x", 1), ":2: run"},
		{"baseline with a run", header + strings.Replace(good, "\tcp2\t", "\tuniform\t", 1), ":2: run"},
		{"model without a run", header + strings.Replace(good, "cp2-mle-s0", "", 1), ":2: run"},
		{"no features", header + strings.Replace(good, "complex-s0", "", 1), ":2: features"},
		{"bad samples", header + strings.Replace(good, "25000", "all", 1), ":2: samples"},
		{"two settings", header + good + strings.NewReplacer("\t661\t", "\t500\t", "cp2-mle-s0", "cp2-mle-s1").Replace(good), ":3: setting"},
		{"a run twice", header + good + good, ":3: row: cp2 cp2-mle-s0 is on line 2 already"},
		{"a baseline twice", header + strings.Repeat("umls\tuniform\t\t\t0.8\t0.01\t100\tcomplex-s0\t661\t25000\n", 2), ":3: row"},
		{"no draws", header + strings.Replace(good, "\t100\t", "\t0\t", 1), ":2: draws: 0 is not positive"},
		{"negative samples", header + strings.Replace(good, "25000", "-1", 1), ":2: samples: -1 is not positive"},
		{"bad test LL", llHeader + strings.Replace(goodLL, "-9.27", "x", 1), `:2: test_ll: "x" is not a log-likelihood`},
		{"positive test LL", llHeader + strings.Replace(goodLL, "-9.27", "9.27", 1), `:2: test_ll: "9.27" is not a log-likelihood`},
		{"NaN test LL", llHeader + strings.Replace(goodLL, "-9.27", "NaN", 1), `:2: test_ll: "NaN" is not a log-likelihood`},
		{"digest not hexadecimal", llHeader + strings.Replace(goodLL, "0123456789ab", "ψ-s0", 1), `:2: features_digest: "ψ-s0" is not hexadecimal`},
		{"two digests", llHeader + goodLL + strings.NewReplacer("0123456789ab", "ba9876543210", "cp2-mle-s0", "cp2-mle-s1").Replace(goodLL), ":3: setting"},
		{"a count for a run", llHeader + strings.Replace(goodLL, "\t\t\t100\t", "\t\t3\t100\t", 1), `:2: across_clusters: a count for cp2`},
		{"a count without NNMFAug's LL", llHeader + strings.Replace(nnmf, "-22.1", "", 1), `:2: across_clusters: a count for NNMFAug`},
		{"more across than tested", llHeader + strings.Replace(nnmf, "2827", "3135", 1), `:2: across_clusters: "3135" is not a count of the 3134 test triples`},
		{"a negative count", llHeader + strings.Replace(nnmf, "2827", "-1", 1), `:2: across_clusters: "-1"`},
		{"no tests", llHeader + strings.Replace(nnmf, "3134", "", 1), `:2: test_triples`},
		{"the training set's test LL", llHeader + strings.NewReplacer("\tcp2\tmle\tcp2-mle-s0\tbest valid MRR, epoch 3\t", "\ttraining set\t\t\t\t").Replace(goodLL), ":2: test_ll: the training set has none"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), KTDTSVName)
			if err := os.WriteFile(path, []byte(tc.text), 0o644); err != nil {
				t.Fatal(err)
			}
			_, _, err := ReadKTDTSV(path)
			if err == nil || !strings.Contains(err.Error(), path+tc.want) {
				t.Errorf("error %v, want one containing %q", err, path+tc.want)
			}
		})
	}
}

func TestMergeKTDRows(t *testing.T) {
	set := KTDSetting{Features: "complex-s0", DrawSize: 1000, Samples: 25000}
	old := []KTDRow{
		ktdRow("training set", "", "", 0.04),
		ktdRow("uniform", "", "", 0.49),
		ktdRow("NNMFAug", "", "", 0.41), // measured only when asked: kept, not recomputed
		ktdRow("cp2", "pll", "a", 0.39),
		ktdRow("cp2", "mle", "b", 0.03),
		ktdRow("cp+", "pll", "c", 0.03),
	}
	fresh := []KTDRow{
		ktdRow("training set", "", "", 0.041),
		ktdRow("uniform", "", "", 0.491),
		ktdRow("complex2", "mle", "d", 0.05),
		ktdRow("cp2", "mle", "b", 0.031),
	}
	withDigest := func(d string) KTDSetting { s := set; s.Digest = d; return s }
	digested := withDigest("0123456789ab")
	all := func(string) bool { return true }
	runs := func(rows []KTDRow) (ids []string) {
		for _, r := range rows {
			ids = append(ids, r.Model+":"+r.Run)
		}
		return ids
	}
	for _, tc := range []struct {
		name       string
		set        KTDSetting
		oldSet     KTDSetting
		keep       func(string) bool
		want       []string
		kept, gone int
		other      []string
	}{
		{"same setting", set, set, all,
			[]string{"training set:", "uniform:", "NNMFAug:", "cp2:a", "cp2:b", "cp+:c", "complex2:d"}, 2, 0, nil},
		{"a run gone", set, set, func(id string) bool { return id != "c" },
			[]string{"training set:", "uniform:", "NNMFAug:", "cp2:a", "cp2:b", "complex2:d"}, 1, 1, nil},
		{"another ψ", set, KTDSetting{Features: "complex-s1", DrawSize: 1000, Samples: 25000}, all,
			[]string{"training set:", "uniform:", "cp2:b", "complex2:d"}, 0, 0, []string{"a", "c"}},
		{"other sizes", set, KTDSetting{Features: "complex-s0", DrawSize: 500, Samples: 25000}, all,
			[]string{"training set:", "uniform:", "cp2:b", "complex2:d"}, 0, 0, []string{"a", "c"}},
		{"setting unknown", set, KTDSetting{}, all,
			[]string{"training set:", "uniform:", "cp2:b", "complex2:d"}, 0, 0, []string{"a", "c"}},
		{"both settings unknown", KTDSetting{}, KTDSetting{}, all,
			[]string{"training set:", "uniform:", "cp2:b", "complex2:d"}, 0, 0, []string{"a", "c"}},
		{"gone, and of another setting", set, KTDSetting{}, func(id string) bool { return id != "a" },
			[]string{"training set:", "uniform:", "cp2:b", "complex2:d"}, 0, 1, []string{"c"}},
		{"ψ trained again under its ID", digested, withDigest("fedcba987654"), all,
			[]string{"training set:", "uniform:", "cp2:b", "complex2:d"}, 0, 0, []string{"a", "c"}},
		{"the same digest", digested, digested, all,
			[]string{"training set:", "uniform:", "NNMFAug:", "cp2:a", "cp2:b", "cp+:c", "complex2:d"}, 2, 0, nil},
		// Before digests, the baselines tell: here they moved.
		{"no digest then, and the baselines moved", digested, set, all,
			[]string{"training set:", "uniform:", "cp2:b", "complex2:d"}, 0, 0, []string{"a", "c"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := MergeKTDRows(fresh, tc.set, old, tc.oldSet, tc.keep)
			if got := runs(m.Rows); !reflect.DeepEqual(got, tc.want) || m.Kept != tc.kept || m.Gone != tc.gone || !reflect.DeepEqual(m.Other, tc.other) {
				t.Errorf("rows %v, kept %d, gone %d, other %v; want %v, %d, %d, %v", got, m.Kept, m.Gone, m.Other, tc.want, tc.kept, tc.gone, tc.other)
			}
			for _, r := range m.Rows {
				want, ok := map[string]float64{"training set:": 0.041, "uniform:": 0.491, "NNMFAug:": 0.41, "cp2:b": 0.031, "complex2:d": 0.05}[r.Model+":"+r.Run]
				if ok && r.Stat.Mean != want {
					t.Errorf("%s:%s is %v, not its fresh value %v", r.Model, r.Run, r.Stat.Mean, want)
				}
			}
		})
	}
	// A fresh NNMFAug row replaces the old one, in the baselines' place.
	withNNMF := append(append([]KTDRow{}, fresh[:2]...), ktdRow("NNMFAug", "", "", 0.42))
	withNNMF = append(withNNMF, fresh[2:]...)
	if m := MergeKTDRows(withNNMF, set, old, set, all); len(m.Rows) != 7 || m.Rows[2].Model != "NNMFAug" || m.Rows[2].Stat.Mean != 0.42 {
		t.Errorf("a fresh NNMFAug: %v, %+v", runs(m.Rows), m.Rows[2])
	}
	// A table from before digests whose baselines the fresh ones repeat is
	// of this ψ: its rows are kept under the digest; without a digest now,
	// or without baselines to compare, they are not adopted.
	sameBaselines := append([]KTDRow{old[0], old[1]}, fresh[2:]...)
	if m := MergeKTDRows(sameBaselines, digested, old, set, all); !m.Adopted || m.Kept != 2 || len(m.Other) != 0 {
		t.Errorf("no digest then, the same baselines: adopted %v, kept %d, other %v", m.Adopted, m.Kept, m.Other)
	}
	// NNMFAug's fit is not compared: another value does not stop it.
	withNNMF = append([]KTDRow{old[0], old[1], ktdRow("NNMFAug", "", "", 0.42)}, fresh[2:]...)
	if m := MergeKTDRows(withNNMF, digested, old, set, all); !m.Adopted || m.Kept != 2 {
		t.Errorf("no digest then, the same baselines but NNMFAug's: adopted %v, kept %d", m.Adopted, m.Kept)
	}
	if m := MergeKTDRows(sameBaselines, set, old, set, all); m.Adopted || m.Kept != 2 {
		t.Errorf("no digest then or now: adopted %v, kept %d; want the rows kept as the same setting", m.Adopted, m.Kept)
	}
	if m := MergeKTDRows(fresh[2:], digested, old, set, all); m.Adopted || m.Kept != 0 || len(m.Other) != 2 {
		t.Errorf("no digest then, no baselines now: adopted %v, kept %d, other %v", m.Adopted, m.Kept, m.Other)
	}
	otherStd := slices.Clone(sameBaselines)
	otherStd[1].Stat.Std = 0.003
	if m := MergeKTDRows(otherStd, digested, old, set, all); m.Adopted {
		t.Errorf("no digest then, a baseline's std moved: adopted")
	}
	// No earlier table: the fresh rows as they are.
	if m := MergeKTDRows(fresh, set, nil, KTDSetting{}, all); !reflect.DeepEqual(m.Rows, fresh) || m.Kept+m.Gone+len(m.Other) != 0 {
		t.Errorf("no old table: %+v", m)
	}
	// An old table holding a run twice (ReadKTDTSV refuses one) still
	// gives the run once.
	twice := append(append([]KTDRow{}, old...), ktdRow("cp2", "pll", "a", 0.5))
	if m := MergeKTDRows(fresh, set, twice, set, all); len(m.Rows) != 7 || m.Kept != 2 {
		t.Errorf("a run twice: %v, kept %d", runs(m.Rows), m.Kept)
	}
}

// Uniform's log-likelihood against the paper's Table 4 (its appendix's
// average test log-likelihoods), which prints it for the three data sets.
func TestUniformLL(t *testing.T) {
	for _, tc := range []struct {
		name  string
		e, r  int
		paper float64
	}{
		{"FB15k-237", 14541, 237, -24.638},
		{"WN18RR", 40943, 11, -23.638},
		{"ogbl-biokg", 93773, 51, -26.829},
	} {
		if got := UniformLL(tc.e, tc.r); math.Abs(got-tc.paper) > 0.0005 {
			t.Errorf("%s: %.4f, the paper %.3f", tc.name, got, tc.paper)
		}
	}
	if got, want := UniformLL(2, 3), math.Log(1.0/12); math.Abs(got-want) > 1e-15 {
		t.Errorf("2 entities, 3 relations: %g, want log(1/12) = %g", got, want)
	}
}

// ktd.md rounds the decimal text ktd.tsv keeps, halves away from zero:
// ktd.md is what the file gives.
func TestKeptRounded(t *testing.T) {
	for _, tc := range []struct {
		x      float64
		digits int
		want   string
	}{
		{0.0435000012, ktdDigits, "0.044"}, // kept as 0.0435; the float 0.0435 is below it
		{0.0625000001, ktdDigits, "0.063"},
		{0.1234996, ktdDigits, "0.124"}, // kept as 0.1235: what the file gives
		{-24.637515190162105, llDigits, "-24.638"},
		{-13.63919, llDigits, "-13.639"},
		{math.Inf(-1), llDigits, "-Inf"},
		{-0.0001, ktdDigits, "-0.000"},
	} {
		if got := keptRounded(tc.x, tc.digits); got != tc.want {
			t.Errorf("keptRounded(%v, %d) = %s, want %s", tc.x, tc.digits, got, tc.want)
		}
	}
}

// KTDTables refuses a row ktd.tsv could not be read back with.
func TestKTDTablesRefuseLL(t *testing.T) {
	set := KTDSetting{Features: "complex-s0", DrawSize: 100, Samples: 1000}
	for _, r := range []KTDRow{
		{Dataset: "umls", Model: "cp2", Objective: "mle", Run: "a", LL: 0.5, HasLL: true},
		{Dataset: "umls", Model: "cp2", Objective: "mle", Run: "a", LL: math.Inf(1), HasLL: true},
		{Dataset: "umls", Model: "cp2", Objective: "mle", Run: "a", LL: math.NaN(), HasLL: true},
		{Dataset: "umls", Model: "training set", LL: -3, HasLL: true},
	} {
		if _, _, err := KTDTables([]KTDRow{r}, set, nil); err == nil || !strings.Contains(err.Error(), "test LL") {
			t.Errorf("%+v: %v", r, err)
		}
	}
}

func TestKTDRunSeed(t *testing.T) {
	if KTDRunSeed("cp2-mle-s0") != KTDRunSeed("cp2-mle-s0") || KTDRunSeed("cp2-mle-s0") == KTDRunSeed("cp2-mle-s1") {
		t.Error("a run's seed is not a function of its ID alone")
	}
}

func FuzzReadKTDTSV(f *testing.F) {
	header := "dataset\tmodel\tobjective\trun\tktd_mean\tktd_std\tdraws\tfeatures\tdraw_size\tsamples\n"
	f.Add([]byte(header + "umls\tcp2\tmle\tcp2-mle-s0\t0.01\t0.001\t100\tcomplex-s0\t661\t25000\n"))
	f.Add([]byte(header + "umls\tuniform\t\t\t0.8\t0.01\t100\tcomplex-s0\t661\t25000\n"))
	f.Add([]byte("dataset\tmodel\tobjective\trun\tktd_mean\tktd_std\tdraws\numls\tcp2\tmle\t../x\t0.01\t0.001\t100\n"))
	f.Add([]byte(""))
	f.Add([]byte("dataset\tmodel\tobjective\trun\tsampled\tktd_mean\tktd_std\tdraws\tfeatures\tdraw_size\tsamples\n" +
		"umls\ttraining set\t\t\t\t0.01\t0.002\t100\tcomplex-s0\t661\t25000\n" +
		"umls\tcp2\tmle\tcp2-mle-s0\tbest valid LL, epoch 5\t0.01\t0.001\t100\tcomplex-s0\t661\t25000\n"))
	f.Add([]byte(strings.Join(ktdColumns, "\t") + "\n" +
		"umls\tuniform\t\t\t\t0.8\t0.01\t-13.639191\t\t\t100\tcomplex-s0\tab12\t661\t25000\n" +
		"umls\tNNMFAug\t\t\t\t0.4\t0.02\t-12.5\t500\t661\t100\tcomplex-s0\tab12\t661\t25000\n" +
		"umls\tcp2\tmle\tcp2-mle-s0\tbest valid LL, epoch 5\t0.01\t0.001\t-Inf\t\t\t100\tcomplex-s0\tab12\t661\t25000\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(t.TempDir(), KTDTSVName)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		rows, set, err := ReadKTDTSV(path)
		if err != nil {
			return
		}
		// What reads without error writes back and reads again the same.
		tsv, _, err := KTDTables(rows, set, nil)
		if err != nil {
			t.Fatal(err)
		}
		if set == (KTDSetting{}) {
			return // an old table: its rows, not its setting, come back
		}
		if err := os.WriteFile(path, tsv, 0o644); err != nil {
			t.Fatal(err)
		}
		again, set2, err := ReadKTDTSV(path)
		if err != nil || set2 != set || len(again) != len(rows) {
			t.Fatalf("round trip: %v, %+v against %+v, %d rows against %d", err, set2, set, len(again), len(rows))
		}
		for i := range rows {
			a, b := again[i], rows[i]
			if a.Dataset != b.Dataset || a.Model != b.Model || a.Objective != b.Objective || a.Run != b.Run || a.Sampled != b.Sampled || a.Stat.Draws != b.Stat.Draws || a.HasLL != b.HasLL {
				t.Fatalf("row %d read back as %+v, want %+v", i, a, b)
			}
			if want, _ := strconv.ParseFloat(kept(b.LL, llDigits), 64); b.HasLL && a.LL != want {
				t.Fatalf("row %d read back as %+v, want %+v", i, a, b)
			}
		}
	})
}

// TestCommittedKTDTables: every committed ktd*.md is what its ktd*.tsv
// gives, each row names ψ and sizes, and each run with a row has its
// record, so the two tables cannot drift apart and no KTD outlives its run.
func TestCommittedKTDTables(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("..", "results", "*", "ktd*.tsv")) // ktd.tsv and tables of other ψ (-ktd-table)
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatal("no committed ktd.tsv")
	}
	ref, err := ReadKTDReference(filepath.Join("..", "results", KTDReferenceName))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		dir := filepath.Dir(p)
		rows, set, err := ReadKTDTSV(p)
		if err != nil {
			t.Fatal(err)
		}
		if set == (KTDSetting{}) {
			t.Errorf("%s: no ψ and sizes on its rows", p)
		}
		tsv, md, err := KTDTables(rows, set, ref)
		if err != nil {
			t.Fatal(err)
		}
		if committedTSV, err := os.ReadFile(p); err != nil || !bytes.Equal(tsv, committedTSV) {
			t.Errorf("%s does not write back as it is (%v)", p, err)
		}
		mdPath := strings.TrimSuffix(p, ".tsv") + ".md"
		committed, err := os.ReadFile(mdPath)
		if err != nil {
			t.Fatal(err)
		}
		if string(md) != string(committed) {
			t.Errorf("%s differs from what %s gives", mdPath, p)
		}
		for _, r := range rows {
			if r.Model == "uniform" && !r.HasLL {
				t.Errorf("%s: uniform has no test LL", p)
			}
			if r.Run == "" {
				continue
			}
			if _, err := os.Stat(filepath.Join(dir, "runs", r.Run, "metrics.json")); err != nil {
				t.Errorf("%s: run %s has a KTD but no record: %v", dir, r.Run, err)
			}
		}
	}
}

// NNMFAug's baseline on Nations: a row like the other baselines', one
// cluster per entity where the graph has fewer than 50, and the report's
// log-likelihood and count of test triples across clusters as its model
// gives them.
func TestNNMFAugBaseline(t *testing.T) {
	ds := nations(t)
	psi := func(ts []kg.Triple) *mat.Dense { // ψ: one-hot subject and object
		n := ds.Entities.Len()
		x := mat.NewDense(len(ts), 2*n, nil)
		for i, tr := range ts {
			x.Set(i, int(tr.S), 1)
			x.Set(i, n+int(tr.O), 1)
		}
		return x
	}
	rep, err := NNMFAugBaseline(metrics.TripleFeatures(psi), "nations", ds, 100, 2000, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Row.Model != NNMFAugName || rep.Row.Run != "" || rep.Row.Stat.Draws != KTDDraws || !(rep.Row.Stat.Mean > 0) {
		t.Errorf("row %+v", rep.Row)
	}
	if rep.Model.Clusters() != ds.Entities.Len() {
		t.Errorf("%d clusters of Nations' %d entities: want one each (50 asked)", rep.Model.Clusters(), ds.Entities.Len())
	}
	var want float64
	across := 0
	for _, tr := range ds.Test {
		want += rep.Model.PaperLogProb(tr)
		if math.IsInf(rep.Model.LogProb(tr), -1) {
			across++
		}
	}
	if want /= float64(len(ds.Test)); math.Abs(rep.PaperLL-want) > 1e-12 || rep.Row.Across != across || rep.Row.Tests != len(ds.Test) {
		t.Errorf("report %g, %d of %d; want %g, %d of %d", rep.PaperLL, rep.Row.Across, rep.Row.Tests, want, across, len(ds.Test))
	}
}

// Runs of one configuration sampled alike get a row over their seeds in
// ktd.md: the KTDs' mean ± two sample standard deviations, and the LLs'
// likewise; a run alone, sampled otherwise, or of another configuration
// (another batch size, say) gets none.
func TestKTDTablesOverSeeds(t *testing.T) {
	set := KTDSetting{Features: "psi", DrawSize: 1000, Samples: 25000}
	run := func(id, sampled string, ktd, ll float64) KTDRow {
		model, obj, _ := strings.Cut(id, "-")
		obj, _, _ = strings.Cut(obj, "-")
		return KTDRow{Dataset: "FB15k-237", Model: model, Objective: obj, Run: id, Sampled: sampled,
			Stat: metrics.KTDStat{Mean: ktd, Std: 0.01, Draws: 100}, LL: ll, HasLL: true}
	}
	base := []KTDRow{{Dataset: "FB15k-237", Model: "training set", Stat: metrics.KTDStat{Mean: 0.05, Std: 0.005, Draws: 100}}}
	for _, c := range []struct {
		name string
		rows []KTDRow
		want []string // the over-seeds rows, in order; none: no such table
	}{
		{"one seed each", append(base, run("cp2-pll-d1000-b1000-lr0.001-s1-d9746986", "best valid LL, epoch 4", 0.38, -17.1),
			run("cp2-mle-d1000-b1000-lr0.001-s1-d9746986", "best valid LL, epoch 4", 0.03, -16.0)), nil},
		{"two batch sizes", append(base, run("complex2-pll-d1000-b5000-lr0.001-s0-e77e734f", "best valid MRR, epoch 26", 0.398, -18.186),
			run("complex2-pll-d1000-b2000-lr0.001-s0-e77e734f", "best valid MRR, epoch 17", 0.393, -18.065)), nil},
		{"two seeds, a third sampled otherwise", append(base,
			run("cp2-pll-d1000-b1000-lr0.001-s1-d9746986", "best valid LL, epoch 4", 0.38, -17.1),
			run("complex2-pll-d1000-b2000-lr0.001-s3-e77e734f", "best valid MRR, epoch 15", 0.387, -18.0),
			run("cp2-pll-d1000-b1000-lr0.001-s2-d9746986", "best valid LL, epoch 5", 0.40, -17.2),
			run("cp2-pll-d1000-b1000-lr0.001-s0-d9746986", "best valid MRR, epoch 13", 0.39, -18.2)),
			[]string{"| FB15k-237 | cp2   | pll       | best valid LL | 2 | 0.390 ± 0.028  | -17.150 ± 0.141    | `cp2-pll-d1000-b1000-lr0.001-d9746986` |"}},
		{"three seeds", append(base,
			run("complex2-pll-d1000-b2000-lr0.001-s3-e77e734f", "best valid MRR, epoch 15", 0.387, -17.997),
			run("complex2-pll-d1000-b2000-lr0.001-s4-e77e734f", "best valid MRR, epoch 20", 0.377, -18.164),
			run("complex2-pll-d1000-b2000-lr0.001-s5-e77e734f", "best valid MRR, epoch 18", 0.382, -18.0)),
			[]string{"| FB15k-237 | complex2 | pll       | best valid MRR | 3 | 0.382 ± 0.010  | -18.054 ± 0.191    | `complex2-pll-d1000-b2000-lr0.001-e77e734f` |"}},
	} {
		_, md, err := KTDTables(c.rows, set, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, over, found := strings.Cut(string(md), "Over seeds")
		if found != (c.want != nil) {
			t.Errorf("%s: over-seeds table present %v, want %v:\n%s", c.name, found, c.want != nil, md)
			continue
		}
		var got []string
		for _, line := range strings.Split(over, "\n") {
			if strings.HasPrefix(line, "| FB15k-237") {
				got = append(got, line)
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: over-seeds rows\n%q\nwant\n%q", c.name, got, c.want)
		}
	}
}
