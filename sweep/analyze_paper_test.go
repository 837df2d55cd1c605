package sweep

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gekc/report"
	"gekc/sweep/sweeptest"
)

// paperReference is the paper's table, the command's default reference.
var paperReference = filepath.Join("..", "results", "paper-reference.tsv")

// -analyze paper compares a sweep's record with the paper's tables. It
// reads results.tsv alone (no data set, no checkpoint): on a copy of the
// committed FB15k-237 d = 1000 record it reproduces the committed
// paper.md, and a missing reference or an empty sweep are clear errors.
func TestAnalyzePaper(t *testing.T) {
	src := filepath.Join("..", "results", "fb15k237-d1000")
	out := t.TempDir()
	data, err := os.ReadFile(filepath.Join(src, resultsTSVName))
	must(t, err)
	must(t, os.WriteFile(filepath.Join(out, resultsTSVName), data, 0o644))
	want, err := os.ReadFile(filepath.Join(src, PaperMDName))
	must(t, err)
	a := Analysis{Kind: "paper", Reference: paperReference, Out: out, DataRoot: filepath.Join(out, "no-data")}
	stdout, _ := mustAnalyze(t, a)
	if stdout != string(want) {
		t.Errorf("stdout is not the committed paper.md:\n%s", stdout)
	}
	got, err := os.ReadFile(filepath.Join(out, PaperMDName))
	must(t, err)
	if string(got) != string(want) {
		t.Errorf("paper.md differs from the committed one:\n%s", got)
	}
	sweeptest.NoTempFiles(t, out)

	missing := filepath.Join(out, "nope.tsv")
	a.Reference = missing
	if _, _, err := runAnalysis(a); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("reference %s: %v", missing, err)
	}
	a.Reference, a.Out = paperReference, t.TempDir()
	if _, _, err := runAnalysis(a); err == nil || !strings.Contains(err.Error(), "no run has ended yet") {
		t.Errorf("-analyze paper on an empty sweep: %v", err)
	}
}

// A sweep whose data set the reference covers writes paper.md with
// results.md after every run; one whose data set it does not cover, or
// only at another d, writes none, and -analyze paper says why.
func TestSweepWritesPaperMD(t *testing.T) {
	sweepWith := func(ref *report.Reference) toySweep {
		t.Helper()
		ts := newToySweep(t)
		s := New(ts.g, ts.g.Runs[:1], Options{Out: ts.out, DataRoot: ts.data, Run: newFake().run, Quiet: true, Reference: ref})
		must(t, s.Prepare())
		if tally := s.Run(context.Background()); tally.Finished != 1 {
			t.Fatalf("%+v", tally)
		}
		return ts
	}
	readRef := func(path, text string) *report.Reference {
		t.Helper()
		if text != "" {
			must(t, os.WriteFile(path, []byte(text), 0o644))
		}
		ref, err := report.ReadReference(path)
		must(t, err)
		return ref
	}
	dir := t.TempDir()

	ts := sweepWith(readRef(filepath.Join(dir, "ref.tsv"), "dataset\tmodel\tobjective\tmrr\ntoy\tcp2\tpll\t0.5\n"))
	md, err := os.ReadFile(filepath.Join(ts.out, PaperMDName))
	must(t, err)
	if !strings.Contains(string(md), "## toy") || !strings.Contains(string(md), "| CP²") {
		t.Errorf("paper.md:\n%s", md)
	}

	if ts := sweepWith(readRef(paperReference, "")); fileExists(filepath.Join(ts.out, PaperMDName)) {
		t.Error("paper.md written for a data set the paper's reference does not cover")
	}

	// Values at another d cover nothing: no paper.md, and -analyze paper
	// says why.
	ref1000 := filepath.Join(dir, "ref1000.tsv")
	ts = sweepWith(readRef(ref1000, "dataset\tmodel\tobjective\trank\tmrr\ntoy\tcp2\tpll\t1000\t0.5\n"))
	if fileExists(filepath.Join(ts.out, PaperMDName)) {
		t.Error("paper.md written for runs at d = 4 against values at d = 1000")
	}
	_, _, err = runAnalysis(Analysis{Kind: "paper", Reference: ref1000, Out: ts.out, DataRoot: ts.data, Runs: ts.g.Runs})
	if err == nil || !strings.Contains(err.Error(), "has no values for the datasets at the embedding sizes") {
		t.Errorf("-analyze paper at another d: %v", err)
	}
}
