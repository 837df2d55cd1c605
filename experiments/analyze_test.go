package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gekc/analysis"
	"gekc/sweep/sweeptest"
)

// The command's side of -analyze (the analyses are sweep's, tested there:
// sweep.TestAnalyzePlots, TestCalibrationEndToEnd): the kind dispatches,
// -only selects the runs analysed, plots and paper read no data set while
// the other kinds check theirs first (exit 2), and a failed analysis exits
// 1 saying why.
func TestAnalyzeDispatch(t *testing.T) {
	fx := newSweepFixture(t, sweeptest.ToyGrid)
	if code, _, stderr := runInProcess(t, context.Background(), newFake(), fx.args("-only", "0-1")...); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	noData, missing := filepath.Join(fx.dir, "no-data"), filepath.Join(fx.dir, "nope.tsv")
	for _, tt := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"-analyze", "plots", "-only", "1", "-data", noData}, exitOK, "wrote curves.png of 1 runs"}, // of 2 finished
		{[]string{"-analyze", "paper", "-data", noData}, exitRunsFailed, "has no values for the datasets"},   // the paper's: no toy
		{[]string{"-analyze", "paper", "-reference", missing}, exitRunsFailed, missing},
		{[]string{"-analyze", "calibration", "-data", noData}, exitUsage, "dataset directory not found: " + filepath.Join(noData, "toy")},
		{[]string{"-analyze", "ktd"}, exitRunsFailed, "experiments: -analyze ktd needs -features"},
		{[]string{"-analyze", "nonsense"}, exitRunsFailed, `experiments: -analyze "nonsense": want samples, ktd, tsne, calibration, plots, paper or tables`},
	} {
		code, _, stderr := runInProcess(t, context.Background(), newFake(), fx.args(tt.args...)...)
		if code != tt.code || !strings.Contains(stderr, tt.stderr) {
			t.Errorf("%v: exit %d, want %d with %q:\n%s", tt.args, code, tt.code, tt.stderr, stderr)
		}
	}
}

// -reference reaches the sweep, which writes paper.md beside results.md
// (what paper.md holds, and when, is sweep.TestSweepWritesPaperMD); a
// reference that cannot be read stops the command before any training.
func TestSweepReferenceFlag(t *testing.T) {
	fx := newSweepFixture(t, sweeptest.ToyGrid)
	ref := filepath.Join(fx.dir, "ref.tsv")
	must(t, os.WriteFile(ref, []byte("dataset\tmodel\tobjective\tmrr\ntoy\tcp2\tpll\t0.5\n"), 0o644))
	if code, _, stderr := runInProcess(t, context.Background(), newFake(), fx.args("-only", "0", "-reference", ref)...); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !fileExists(filepath.Join(fx.out, "paper.md")) {
		t.Error("no paper.md from a -reference that covers the sweep's data set")
	}
	bad := filepath.Join(fx.dir, "bad.tsv")
	must(t, os.WriteFile(bad, []byte("dataset\tmodel\tobjective\tmrr\ntoy\tcp2\tpll\t24.5\n"), 0o644))
	code, _, stderr := runInProcess(t, context.Background(), newFake(), fx.args("-only", "1", "-reference", bad)...)
	if code != exitUsage || !strings.Contains(stderr, bad+":2: column mrr") {
		t.Errorf("bad reference: exit %d: %s", code, stderr)
	}
	if rows := readRows(t, fx.out); len(rows) != 1 {
		t.Errorf("%d rows after the bad reference, want the 1 from before", len(rows))
	}
}

// Without -reference, -analyze paper compares with the paper's values in
// the repository, found from the working directory or, started outside
// the repository (a long sweep kept elsewhere), from the grid; it needs
// no data set, and prints paper.md.
func TestDefaultPaperReferenceFound(t *testing.T) {
	repoGrid, err := filepath.Abs(filepath.Join("..", "grids", "fb15k237-d1000.toml"))
	must(t, err)
	src, err := os.ReadFile(repoGrid)
	must(t, err)
	data, err := os.ReadFile(filepath.Join("..", "results", "fb15k237-d1000", "results.tsv"))
	must(t, err)
	outside := filepath.Join(t.TempDir(), "grid.toml")
	must(t, os.WriteFile(outside, src, 0o644))
	for _, tt := range []struct{ dir, grid string }{
		{"", outside},           // in the repository's experiments/, a grid kept elsewhere
		{t.TempDir(), repoGrid}, // outside the repository, a grid of it
	} {
		out := t.TempDir()
		must(t, os.WriteFile(filepath.Join(out, "results.tsv"), data, 0o644))
		var stdout, stderr bytes.Buffer
		code := runCLI(context.Background(), []string{"-grid", tt.grid, "-out", out, "-data", filepath.Join(out, "no-data"), "-analyze", "paper"},
			cliEnv{stdout: &stdout, stderr: &stderr, getenv: func(string) string { return "" }, dir: tt.dir, run: newFake().run, quiet: true})
		if code != exitOK {
			t.Fatalf("%+v: exit %d: %s", tt, code, stderr.String())
		}
		if !strings.Contains(stdout.String(), "Reference: `paper-reference.tsv`") {
			t.Errorf("%+v: stdout:\n%s", tt, stdout.String())
		}
	}
}

// A grid with paper = false (the KTD's ψ, trained as another paper's
// model) gets no paper.md from the paper's values, though they cover its
// data set and d; -analyze paper says why it refuses, -reference still
// compares it when asked, and a paper.md left from before is pointed out.
func TestNotPaperGrid(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "grids", "fb15k237-d1000.toml"))
	must(t, err)
	const run = "complex-pll-d1000-b500-lr0.001-s0-d9746986"
	for _, tt := range []struct {
		name    string
		prefix  string
		args    []string
		stale   bool // a paper.md in -out before
		code    int
		paperMD bool
		stderr  string
	}{
		{"the paper's grid", "", []string{"-analyze", "tables"}, false, exitOK, true, ""},
		{"paper = false", "paper = false\n", []string{"-analyze", "tables"}, false, exitOK, false, ""},
		{"paper = false, -analyze paper", "paper = false\n", []string{"-analyze", "paper"}, false, exitUsage, false, "says paper = false"},
		{"paper = false, -reference", "paper = false\n",
			[]string{"-analyze", "tables", "-reference", filepath.Join("..", "results", "paper-reference.tsv")}, false, exitOK, true, ""},
		{"paper = false, a paper.md from before", "paper = false\n", []string{"-analyze", "tables"}, true, exitOK, true, "is left from before"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			grid, out := filepath.Join(dir, "grid.toml"), filepath.Join(dir, "out")
			must(t, os.WriteFile(grid, append([]byte(tt.prefix), src...), 0o644))
			must(t, os.MkdirAll(filepath.Join(out, "runs", run), 0o755))
			for _, f := range []string{"config.toml", "metrics.json"} {
				data, err := os.ReadFile(filepath.Join("..", "results", "fb15k237-d1000", "runs", run, f))
				must(t, err)
				must(t, os.WriteFile(filepath.Join(out, "runs", run, f), data, 0o644))
			}
			if tt.stale {
				must(t, os.WriteFile(filepath.Join(out, "paper.md"), []byte("# old\n"), 0o644))
			}
			code, _, stderr := runInProcess(t, context.Background(), newFake(),
				append([]string{"-grid", grid, "-out", out, "-data", filepath.Join(dir, "no-data")}, tt.args...)...)
			if code != tt.code || !strings.Contains(stderr, tt.stderr) {
				t.Fatalf("exit %d, want %d with %q: %s", code, tt.code, tt.stderr, stderr)
			}
			if got := fileExists(filepath.Join(out, "paper.md")); got != tt.paperMD {
				t.Errorf("paper.md written: %v, want %v", got, tt.paperMD)
			}
		})
	}
}

// -features and -samples reach the KTD analysis (the analysis itself is
// sweep.TestKTDEndToEnd): the rows of the table it writes, here the
// baselines alone, record ψ's run, its digest and the sample size, and
// the command prints ktd.md.
func TestAnalyzeKTDFlags(t *testing.T) {
	fx := newSweepFixture(t, "[defaults]\ndataset = \"nations\"\nmodel = \"complex\"\nobjective = \"pll\"\n"+
		"rank = 2\nbatch_size = 2000\nlearning_rate = 0.01\nepochs = 1\n[[sweep]]\n")
	args := []string{"-grid", fx.grid, "-data", shippedData(t, "nations"), "-out", fx.out}
	trainCLI(t, args)
	psi := fx.runIDs(t)[0]
	stdout, _ := trainCLI(t, args, "-analyze", "ktd", "-features", psi, "-samples", "20")
	tsv, err := os.ReadFile(filepath.Join(fx.out, analysis.KTDTSVName))
	must(t, err)
	rows := strings.Split(strings.TrimSpace(string(tsv)), "\n")[1:]
	setting := regexp.MustCompile("\t" + regexp.QuoteMeta(psi) + "\t[0-9a-f]{12}\t20\t20$") // ψ, its digest, draws of 20 triples, 20 samples
	for _, row := range rows {
		if !setting.MatchString(row) {
			t.Errorf("row without the setting of the flags: %q", row)
		}
	}
	md, err := os.ReadFile(filepath.Join(fx.out, analysis.KTDMarkdownName))
	must(t, err)
	if len(rows) != 2 || stdout != string(md) {
		t.Errorf("%d rows; stdout:\n%s\nwant %s:\n%s", len(rows), stdout, analysis.KTDMarkdownName, md)
	}
}
