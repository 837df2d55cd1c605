package analysis

// The analyses' tests run them on results directories that the runner
// (gekc/sweep) trained, for real or with sweeptest's fake trainer, as the
// command does.

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"gekc/grid"
	"gekc/report"
	"gekc/report/reporttest"
	"gekc/resultsdir"
	"gekc/sweep"
	"gekc/sweep/sweeptest"
)

// The results directory's names, as the tests spell them.
const (
	runsDirName         = resultsdir.RunsDirName
	metricsName         = resultsdir.MetricsName
	resultsTSVName      = resultsdir.ResultsTSVName
	curvesName          = resultsdir.CurvesName
	calibrationPlotName = resultsdir.CalibrationPlotName
	samplesName         = resultsdir.SamplesName
	calTSVName          = CalibrationTSVName
	calMarkdownName     = CalibrationMarkdownName
	auditTSVName        = AuditTSVName
	auditMDName         = AuditMarkdownName
)

var readRecord = resultsdir.ReadRecordFile

// analysisJob is an analysis as a test states it: its kind and options.
type analysisJob struct {
	Kind, Title, Features, KTDTable string
	NNMFAug                         bool
	Reference, KTDReference         string
	Samples                         int
	Out, DataRoot                   string
	Runs                            []grid.Run
	Stdout, Stderr                  io.Writer
}

func (a analysisJob) options() Options {
	return Options{Title: a.Title, Features: a.Features, KTDTable: a.KTDTable, NNMFAug: a.NNMFAug, Reference: a.Reference,
		KTDReference: a.KTDReference, Samples: a.Samples, Out: a.Out, DataRoot: a.DataRoot, Runs: a.Runs, Stdout: a.Stdout, Stderr: a.Stderr}
}

// runAnalysis runs a with its output going to buffers, returned as text.
func runAnalysis(a analysisJob) (stdout, stderr string, err error) {
	var out, errOut bytes.Buffer
	a.Stdout, a.Stderr = &out, &errOut
	err = Analyze(context.Background(), a.Kind, a.options())
	return out.String(), errOut.String(), err
}

// mustAnalyze is runAnalysis that fails the test on an error.
func mustAnalyze(t *testing.T, a analysisJob) (stdout, stderr string) {
	t.Helper()
	stdout, stderr, err := runAnalysis(a)
	if err != nil {
		t.Fatalf("-analyze %s of %d runs: %v\n%s", a.Kind, len(a.Runs), err, stderr)
	}
	return stdout, stderr
}

// readCalibrationTSV and readAuditTSV read a table of the results
// directory whose runs are in runsDir.
func readCalibrationTSV(path, runsDir string) ([]CalibrationRow, error) {
	return ReadCalibrationTSV(path, recordedRun(filepath.Dir(runsDir)))
}

func readAuditTSV(path, runsDir string) ([]AuditRow, error) {
	return ReadAuditTSV(path, recordedRun(filepath.Dir(runsDir)))
}

// toySweep is a results directory, its grid and a data root.
type toySweep struct {
	g         *grid.Grid
	out, data string
}

func (ts toySweep) ids() []string {
	ids := make([]string, len(ts.g.Runs))
	for i, r := range ts.g.Runs {
		ids[i] = r.ID
	}
	return ids
}

// newToySweep is sweeptest.ToyGrid (or src) on an empty data set "toy":
// the fake trainer reads no data.
func newToySweep(t *testing.T) toySweep { return newSweepOf(t, sweeptest.ToyGrid) }

func newSweepOf(t *testing.T, src string) toySweep {
	t.Helper()
	g, out, data := sweeptest.NewToy(t, src)
	return toySweep{g: g, out: out, data: data}
}

// trainedSweep trains every run of the grid src for real, on the data
// sets under data, as the command does by default (the grid's samples,
// -state-every 5m), and fails the test unless every run finishes.
func trainedSweep(t *testing.T, src, data string) toySweep {
	t.Helper()
	g, err := grid.ParseGrid("grid.toml", []byte(src), nil)
	must(t, err)
	ts := toySweep{g: g, out: filepath.Join(t.TempDir(), "out"), data: data}
	s := sweep.New(g, g.Runs, sweep.Options{Out: ts.out, DataRoot: data, Run: sweep.Train, StateEvery: 5 * time.Minute, Quiet: true})
	must(t, s.Prepare())
	if tally := s.Run(context.Background()); tally.Finished != len(g.Runs) {
		t.Fatalf("%+v; want all %d runs finished", tally, len(g.Runs))
	}
	return ts
}

// fakeTrainer is sweeptest's Trainer as a sweep.RunFunc.
type fakeTrainer struct {
	sweeptest.Trainer
	mu sync.Mutex
}

func newFake() *fakeTrainer { return &fakeTrainer{} }

func (f *fakeTrainer) run(ctx context.Context, job sweep.Job) (*sweep.Outcome, error) {
	r, err := f.Run(ctx, job.ID, job.Spec, job.RunDir, job.Observer)
	if err != nil {
		return nil, err
	}
	return &sweep.Outcome{Status: r.Status, Epochs: r.Epochs, BestEpoch: r.BestEpoch, Valid: r.Valid, Test: r.Test, Notes: r.Notes}, nil
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// containsAll returns an error naming the substrings s lacks.
var containsAll = reporttest.ContainsAll

// shippedData returns the repository's data root, which must hold the
// named dataset.
func shippedData(t *testing.T, dataset string) string { return sweeptest.ShippedData(t, dataset) }

// readPNG checks that the file at path is a plausible figure of a run
// (reporttest.Figure).
func readPNG(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	must(t, err)
	reporttest.Figure(t, path, data, report.RunColor)
}

func exampleSpec() grid.RunSpec { return sweeptest.ExampleSpec() }
