package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The command's side of -analyze (the analyses are sweep's, tested there:
// sweep.TestAnalyzePlots, TestCalibrationEndToEnd): the kind dispatches,
// -only selects the runs analysed, plots and paper read no data set while
// the other kinds check theirs first (exit 2), and a failed analysis exits
// 1 saying why.
func TestAnalyzeDispatch(t *testing.T) {
	fx := newSweepFixture(t, toyGrid)
	if code, _, stderr := runInProcess(t, context.Background(), newFake(), fx.args("-only", "0-1")...); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	noData, missing := filepath.Join(fx.dir, "no-data"), filepath.Join(fx.dir, "nope.tsv")
	for _, tt := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"-analyze", "plots"}, exitOK, "wrote " + curvesName + " of 2 runs"},
		{[]string{"-analyze", "plots", "-only", "1", "-data", noData}, exitOK, "wrote " + curvesName + " of 1 runs"},
		{[]string{"-analyze", "paper", "-data", noData}, exitRunsFailed, "has no values for the datasets"}, // the paper's: no toy
		{[]string{"-analyze", "paper", "-reference", missing}, exitRunsFailed, missing},
		{[]string{"-analyze", "calibration", "-data", noData}, exitUsage, "dataset directory not found: " + filepath.Join(noData, "toy")},
		{[]string{"-analyze", "ktd"}, exitRunsFailed, "experiments: -analyze ktd needs -features"},
		{[]string{"-analyze", "nonsense"}, exitRunsFailed, `experiments: -analyze "nonsense": want samples, ktd, calibration, plots, paper or tables`},
	} {
		code, _, stderr := runInProcess(t, context.Background(), newFake(), fx.args(tt.args...)...)
		if code != tt.code || !strings.Contains(stderr, tt.stderr) {
			t.Errorf("%v: exit %d, want %d with %q:\n%s", tt.args, code, tt.code, tt.stderr, stderr)
		}
	}
}

// -analyze paper compares a sweep's record with the paper's tables. It
// reads results.tsv alone (no dataset, no checkpoint): on a copy of the
// committed FB15k-237 d = 1000 record it reproduces the committed
// paper.md, and a missing reference or an empty sweep are clear errors.
func TestAnalyzePaper(t *testing.T) {
	src := filepath.Join("..", "results", "fb15k237-d1000")
	out := t.TempDir()
	for _, f := range []string{"grid.toml", resultsTSVName} {
		data, err := os.ReadFile(filepath.Join(src, f))
		must(t, err)
		must(t, os.WriteFile(filepath.Join(out, f), data, 0o644))
	}
	want, err := os.ReadFile(filepath.Join(src, "paper.md"))
	must(t, err)
	args := []string{"-grid", filepath.Join(out, "grid.toml"), "-out", out, "-data", filepath.Join(out, "no-data"), "-analyze", "paper"}
	code, stdout, stderr := runInProcess(t, context.Background(), newFake(), args...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if stdout != string(want) {
		t.Errorf("stdout is not the committed paper.md:\n%s", stdout)
	}
	got, err := os.ReadFile(filepath.Join(out, "paper.md"))
	must(t, err)
	if string(got) != string(want) {
		t.Errorf("paper.md differs from the committed one:\n%s", got)
	}
	assertNoTempFiles(t, out)

	missing := filepath.Join(out, "nope.tsv")
	code, _, stderr = runInProcess(t, context.Background(), newFake(), append(args, "-reference", missing)...)
	if code == exitOK || !strings.Contains(stderr, missing) {
		t.Errorf("-reference %s: exit %d: %s", missing, code, stderr)
	}
	empty := t.TempDir()
	must(t, os.WriteFile(filepath.Join(empty, "grid.toml"), []byte(toyGrid), 0o644))
	code, _, stderr = runInProcess(t, context.Background(), newFake(),
		"-grid", filepath.Join(empty, "grid.toml"), "-out", empty, "-analyze", "paper")
	if code == exitOK || !strings.Contains(stderr, "no run has ended yet") {
		t.Errorf("-analyze paper on an empty sweep: exit %d: %s", code, stderr)
	}
}

// A sweep whose dataset the reference covers writes paper.md with
// results.md after every run; one whose dataset it does not cover writes
// none; a bad -reference stops the sweep before any training.
func TestSweepWritesPaperMD(t *testing.T) {
	fx := newSweepFixture(t, toyGrid)
	ref := filepath.Join(fx.dir, "ref.tsv")
	must(t, os.WriteFile(ref, []byte("dataset\tmodel\tobjective\tmrr\ntoy\tcp2\tpll\t0.5\n"), 0o644))
	if code, _, stderr := runInProcess(t, context.Background(), newFake(), fx.args("-only", "0", "-reference", ref)...); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	md, err := os.ReadFile(filepath.Join(fx.out, "paper.md"))
	must(t, err)
	if !strings.Contains(string(md), "## toy") || !strings.Contains(string(md), "| CP²") {
		t.Errorf("paper.md:\n%s", md)
	}

	other := newSweepFixture(t, toyGrid)
	if code, _, stderr := runInProcess(t, context.Background(), newFake(), other.args("-only", "0")...); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if fileExists(filepath.Join(other.out, "paper.md")) {
		t.Error("paper.md written for a dataset the paper's reference does not cover")
	}

	// Values at another d cover nothing: no paper.md, and -analyze paper
	// says why.
	other2 := newSweepFixture(t, toyGrid)
	ref1000 := filepath.Join(other2.dir, "ref1000.tsv")
	must(t, os.WriteFile(ref1000, []byte("dataset\tmodel\tobjective\trank\tmrr\ntoy\tcp2\tpll\t1000\t0.5\n"), 0o644))
	if code, _, stderr := runInProcess(t, context.Background(), newFake(), other2.args("-only", "0", "-reference", ref1000)...); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if fileExists(filepath.Join(other2.out, "paper.md")) {
		t.Error("paper.md written for runs at d = 4 against values at d = 1000")
	}
	code, _, stderr := runInProcess(t, context.Background(), newFake(), other2.args("-analyze", "paper", "-reference", ref1000)...)
	if code == exitOK || !strings.Contains(stderr, "has no values for the datasets at the embedding sizes") {
		t.Errorf("-analyze paper at another d: exit %d: %s", code, stderr)
	}

	bad := filepath.Join(fx.dir, "bad.tsv")
	must(t, os.WriteFile(bad, []byte("dataset\tmodel\tobjective\tmrr\ntoy\tcp2\tpll\t24.5\n"), 0o644))
	code, _, stderr = runInProcess(t, context.Background(), newFake(), fx.args("-only", "1", "-reference", bad)...)
	if code == exitOK || !strings.Contains(stderr, bad+":2: column mrr") {
		t.Errorf("bad reference: exit %d: %s", code, stderr)
	}
	if rows := readRows(t, fx.out); len(rows) != 1 {
		t.Errorf("%d rows after the bad reference, want the 1 from before", len(rows))
	}
}

// Started outside the repository (a long sweep kept elsewhere) on a grid
// of the repository, the command still finds the paper's values there.
func TestPaperReferenceFoundFromTheGrid(t *testing.T) {
	out := t.TempDir()
	src := filepath.Join("..", "results", "fb15k237-d1000")
	data, err := os.ReadFile(filepath.Join(src, resultsTSVName))
	must(t, err)
	must(t, os.WriteFile(filepath.Join(out, resultsTSVName), data, 0o644))
	grid, err := filepath.Abs(filepath.Join("..", "grids", "fb15k237-d1000.toml"))
	must(t, err)
	var stdout, stderr bytes.Buffer
	code := runCLI(context.Background(), []string{"-grid", grid, "-out", out, "-analyze", "paper"},
		cliEnv{stdout: &stdout, stderr: &stderr, getenv: func(string) string { return "" }, dir: t.TempDir(), run: newFake().run, quiet: true})
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "Reference: `paper-reference.tsv`") {
		t.Errorf("stdout:\n%s", stdout.String())
	}
}
