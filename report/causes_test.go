package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const causesRef = "dataset\tmodel\tobjective\trank\tmrr\tll\n" +
	"FB\tcp2\tpll\t1000\t0.315\t-17.1\n" +
	"FB\tcp2\tmle\t1000\t0.282\t-16.0\n" +
	"FB\tcomplex2\tpll\t1000\t0.334\t-17.1\n"

const causesHeader = "dataset\tmodel\tobjective\tmetric\tcause\n"

func TestAddCausesErrors(t *testing.T) {
	for _, c := range []struct{ name, src, want string }{
		{"header", "dataset\tmodel\tobjective\tcause\n", "causes.tsv:1: header"},
		{"no header", "# only a comment\n", "causes.tsv: no header line"},
		{"fields", causesHeader + "FB\tcp2\tpll\tll\n", "causes.tsv:2: 4 fields"},
		{"metric", causesHeader + "FB\tcp2\tpll\thits@1\twhy\n", `causes.tsv:2: metric "hits@1"`},
		{"empty", causesHeader + "FB\tcp2\tpll\tll\t \n", "causes.tsv:2: the cause is empty"},
		{"row", causesHeader + "WN\tcp2\tpll\tll\twhy\n", "causes.tsv:2: ref.tsv has no row WN cp2 pll"},
		{"twice", causesHeader + "FB\tcp2\tpll\tll\twhy\n# a comment\nFB\tcp2\tpll\tll\tagain\n", "causes.tsv:4: FB cp2 pll ll already has a cause on line 2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ref, err := ParseReference("ref.tsv", []byte(causesRef))
			must(t, err)
			err = ref.AddCauses("causes.tsv", []byte(c.src))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v; want one containing %q", err, c.want)
			}
		})
	}
}

// A row that misses gets its cause as a numbered note after the fixed
// ones; two rows with one cause share its note; a cause of a row that now
// matches is named for removal, and a row without a cause keeps its bare
// "no".
func TestCausesInPaper(t *testing.T) {
	dir := t.TempDir()
	refPath := filepath.Join(dir, "ref.tsv")
	must(t, os.WriteFile(refPath, []byte(causesRef), 0o644))
	must(t, os.WriteFile(CausesPath(refPath), []byte(causesHeader+
		"FB\tcp2\tpll\tll\tRole rows collapse.\n"+
		"FB\tcp2\tmle\tll\tRole rows collapse.\n"+
		"FB\tcp2\tmle\tmrr\tA stale cause.\n"), 0o644))
	ref, err := ReadReference(refPath)
	must(t, err)
	row := func(model, objective, mrr, ll string) Row {
		return Row{"id": model + objective, "config_id": model + objective, "dataset": "FB", "model": model, "objective": objective,
			"constraints": "none", "rank": "1000", "batch_size": "1000", "learning_rate": "0.001", "status": Finished,
			"select": "mrr", "valid_mrr": "0.3", "test_mrr": mrr, "test_ll": ll, "test_ll_at_best_ll": ll}
	}
	tab := &Table{Rows: []Row{row("cp2", "pll", "0.315", "-19"), row("cp2", "mle", "0.282", "-19"), row("complex2", "pll", "0.334", "-19")}}
	md, err := CompareMarkdown(tab, ref, DefaultTolerance)
	must(t, err)
	out := string(md)
	if err := containsAll(out, "Notes from ⁵ on give the investigated cause of a miss, from `ref-causes.tsv`.", "**no** (LL) ⁵ |", "⁵ Role rows collapse.  \n",
		"Causes given for rows that now match, to be removed: cp2 mle MRR (ref-causes.tsv:4)."); err != nil {
		t.Errorf("%v\n%s", err, out)
	}
	if n := strings.Count(out, "⁵"); n != 4 {
		t.Errorf("note ⁵ appears %d times; want once in the header, twice in the table and once below it\n%s", n, out)
	}
	if strings.Contains(out, "⁶") {
		t.Errorf("a second cause note for the same text\n%s", out)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "| ComplEx² | PLL") && !strings.HasSuffix(line, "| **no** (LL)   |") {
			t.Errorf("ComplEx² PLL, which has no cause, lost its bare verdict: %s", line)
		}
	}
}

// ReadReference reads no causes where there is no causes file, and
// reports a broken one.
func TestReadReferenceCausesFile(t *testing.T) {
	dir := t.TempDir()
	refPath := filepath.Join(dir, "paper-reference.tsv")
	must(t, os.WriteFile(refPath, []byte(causesRef), 0o644))
	ref, err := ReadReference(refPath)
	must(t, err)
	for _, r := range ref.Rows {
		if len(r.Causes) > 0 {
			t.Errorf("%s %s: causes %v without a causes file", r.Model, r.Objective, r.Causes)
		}
	}
	if got, want := CausesPath(refPath), filepath.Join(dir, "paper-reference-causes.tsv"); got != want {
		t.Errorf("CausesPath = %s; want %s", got, want)
	}
	must(t, os.WriteFile(CausesPath(refPath), []byte("no header here\n"), 0o644))
	if _, err := ReadReference(refPath); err == nil || !strings.Contains(err.Error(), "paper-reference-causes.tsv:1") {
		t.Errorf("a broken causes file: %v", err)
	}
}

func TestSuperscript(t *testing.T) {
	for n, want := range map[int]string{0: "⁰", 5: "⁵", 12: "¹²", 907: "⁹⁰⁷"} {
		if got := superscript(n); got != want {
			t.Errorf("superscript(%d) = %q; want %q", n, got, want)
		}
	}
}

// Whatever the bytes, parsing a reference and its causes returns a table or
// an error naming the file, and never panics.
func FuzzParseReferenceAndCauses(f *testing.F) {
	f.Add([]byte(causesRef), []byte(causesHeader+"FB\tcp2\tpll\tll\twhy\n"))
	f.Add([]byte("dataset\tmodel\tobjective\n"), []byte(causesHeader+"FB\tcp2\tpll\tmrr\t\n"))
	f.Add([]byte("# c\n"), []byte("\n\n"))
	f.Fuzz(func(t *testing.T, refData, causeData []byte) {
		ref, err := ParseReference("ref.tsv", refData)
		if err != nil {
			if !strings.Contains(err.Error(), "ref.tsv") {
				t.Fatalf("error without the file: %v", err)
			}
			return
		}
		if err := ref.AddCauses("causes.tsv", causeData); err != nil && !strings.Contains(err.Error(), "causes.tsv") {
			t.Fatalf("error without the file: %v", err)
		}
	})
}
