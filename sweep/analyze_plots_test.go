package sweep

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gekc/grid"
	"gekc/report"
	"gekc/report/reporttest"
	"gekc/sweep/sweeptest"
)

// runAnalysis runs a with its output going to buffers, returned as text.
func runAnalysis(a Analysis) (stdout, stderr string, err error) {
	var out, errOut bytes.Buffer
	a.Stdout, a.Stderr = &out, &errOut
	err = a.Run(context.Background())
	return out.String(), errOut.String(), err
}

// mustAnalyze is runAnalysis that fails the test on an error.
func mustAnalyze(t *testing.T, a Analysis) (stdout, stderr string) {
	t.Helper()
	stdout, stderr, err := runAnalysis(a)
	if err != nil {
		t.Fatalf("-analyze %s of %d runs: %v\n%s", a.Kind, len(a.Runs), err, stderr)
	}
	return stdout, stderr
}

// trainedSweep trains every run of the grid src for real, on the data
// sets under data, as the command does by default (the grid's samples,
// -state-every 5m), and fails the test unless every run finishes.
func trainedSweep(t *testing.T, src, data string) toySweep {
	t.Helper()
	g, err := grid.ParseGrid("grid.toml", []byte(src), nil)
	must(t, err)
	ts := toySweep{g: g, out: filepath.Join(t.TempDir(), "out"), data: data}
	s := New(g, g.Runs, Options{Out: ts.out, DataRoot: data, Run: Train, StateEvery: 5 * time.Minute, Quiet: true})
	must(t, s.Prepare())
	if tally := s.Run(context.Background()); tally.Finished != len(g.Runs) {
		t.Fatalf("%+v; want all %d runs finished", tally, len(g.Runs))
	}
	return ts
}

// readPNG checks that the file at path is a plausible figure of a run
// (reporttest.Figure).
func readPNG(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	must(t, err)
	reporttest.Figure(t, path, data, report.RunColor)
}

// -analyze plots draws curves.png of finished and diverged runs from
// metrics.json alone (the fake trainer draws none, and the toy data set
// has no files at all), and leaves failed runs and runs never started
// alone; an unknown kind is an error listing the kinds.
func TestAnalyzePlots(t *testing.T) {
	ts := newToySweep(t)
	ids := ts.ids()
	diverged, failed := ids[1], ids[2]
	fake := newFake()
	fake.Diverge = sweeptest.IDs(diverged)
	fake.Fail = sweeptest.IDs(failed)
	s := New(ts.g, ts.g.Runs[:4], Options{Out: ts.out, DataRoot: ts.data, Run: fake.run, Quiet: true})
	must(t, s.Prepare())
	if tally := s.Run(context.Background()); tally.Finished != 2 || tally.Diverged != 1 || tally.Failed != 1 {
		t.Fatalf("%+v; want 2 finished, 1 diverged, 1 failed", tally)
	}
	_, stderr := mustAnalyze(t, Analysis{Kind: "plots", Out: ts.out, DataRoot: ts.data, Runs: ts.g.Runs})
	if !strings.Contains(stderr, "wrote "+curvesName+" of 3 runs") {
		t.Errorf("stderr: %s", stderr)
	}
	for i, id := range ids {
		path := filepath.Join(ts.out, runsDirName, id, curvesName)
		want := i <= 3 && id != failed
		if fileExists(path) != want {
			t.Errorf("%s: %s exists %v, want %v", id, curvesName, fileExists(path), want)
			continue
		}
		if want {
			readPNG(t, path)
		}
	}
	sweeptest.NoTempFiles(t, ts.out)
	if _, _, err := runAnalysis(Analysis{Kind: "nonsense", Out: ts.out, DataRoot: ts.data, Runs: ts.g.Runs}); err == nil ||
		!strings.Contains(err.Error(), "plots, paper or tables") {
		t.Errorf("-analyze nonsense: %v", err)
	}
}
