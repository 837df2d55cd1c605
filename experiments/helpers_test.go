package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sync"
	"testing"
	"time"

	"gekc/grid"
	"gekc/internal/filelock"
	"gekc/report"
	"gekc/report/reporttest"
	"gekc/resultsdir"
	"gekc/sweep"
	"gekc/sweep/sweeptest"
	"gekc/train"
)

// Environment of helper processes: the test binary re-executes itself with
// helperEnv set and then behaves as the experiments command with a fake run
// function, configured by the other variables. Nothing of this is in the
// shipped command.
const (
	helperEnv     = "GEKC_EXPERIMENTS_HELPER" // "cli": run the command
	fakeSleepEnv  = "GEKC_FAKE_SLEEP"         // per epoch, e.g. "50ms"
	fakeCallsEnv  = "GEKC_FAKE_CALLS"         // file to which each call appends "<id>\n"
	fakeFailEnv   = "GEKC_FAKE_FAIL"          // regexp of IDs that fail
	fakeDivergeEn = "GEKC_FAKE_DIVERGE"       // regexp of IDs that diverge
)

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "cli" {
		f, err := fakeFromEnv()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
		os.Exit(mainWith(f.run, nil))
	}
	code := m.Run()
	removeMPIBuild()
	os.Exit(code)
}

// fakeTrainer is the command's tests' run function: sweeptest's Trainer,
// with the last job of each run kept for the tests to inspect.
type fakeTrainer struct {
	sweeptest.Trainer
	mu   sync.Mutex
	jobs map[string]sweep.Job
}

func newFake() *fakeTrainer { return &fakeTrainer{jobs: map[string]sweep.Job{}} }

// fakeFromEnv is the fake of a helper process, set by the environment.
func fakeFromEnv() (*fakeTrainer, error) {
	f := newFake()
	if s := os.Getenv(fakeSleepEnv); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			return nil, err
		}
		f.Sleep = d
	}
	f.CallsLog = os.Getenv(fakeCallsEnv)
	for env, dst := range map[string]**regexp.Regexp{fakeFailEnv: &f.Fail, fakeDivergeEn: &f.Diverge} {
		if s := os.Getenv(env); s != "" {
			re, err := regexp.Compile(s)
			if err != nil {
				return nil, err
			}
			*dst = re
		}
	}
	return f, nil
}

func (f *fakeTrainer) run(ctx context.Context, job sweep.Job) (*sweep.Outcome, error) {
	f.mu.Lock()
	f.jobs[job.ID] = job
	f.mu.Unlock()
	r, err := f.Run(ctx, job.ID, job.Spec, job.RunDir, job.Observer)
	if err != nil {
		return nil, err
	}
	return &sweep.Outcome{Status: r.Status, Epochs: r.Epochs, BestEpoch: r.BestEpoch, Valid: r.Valid, Test: r.Test, Notes: r.Notes}, nil
}

// sweepFixture is a grid file, a data root holding its dataset, and an
// output directory, all in a temporary directory.
type sweepFixture struct {
	dir, grid, data, out string
}

func newSweepFixture(t *testing.T, grid string) sweepFixture {
	t.Helper()
	dir := t.TempDir()
	fx := sweepFixture{dir: dir, grid: filepath.Join(dir, "toy.toml"), data: filepath.Join(dir, "data"), out: filepath.Join(dir, "out")}
	must(t, os.MkdirAll(filepath.Join(fx.data, "toy"), 0o755))
	must(t, os.WriteFile(fx.grid, []byte(grid), 0o644))
	return fx
}

func (fx sweepFixture) args(extra ...string) []string {
	return append([]string{"-grid", fx.grid, "-data", fx.data, "-out", fx.out}, extra...)
}

func (fx sweepFixture) runIDs(t *testing.T) []string {
	t.Helper()
	g, err := grid.LoadGrid(fx.grid, nil)
	must(t, err)
	ids := make([]string, len(g.Runs))
	for i, r := range g.Runs {
		ids[i] = r.ID
	}
	return ids
}

// runInProcess runs the command with fake as the run function.
func runInProcess(t *testing.T, ctx context.Context, fake *fakeTrainer, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = runCLI(ctx, args, cliEnv{stdout: &out, stderr: &errOut, getenv: func(string) string { return "" }, run: fake.run, quiet: true})
	return code, out.String(), errOut.String()
}

// readRows returns results.tsv's rows.
func readRows(t *testing.T, out string) []report.Row {
	t.Helper()
	table, err := report.ReadTSV(filepath.Join(out, "results.tsv"))
	must(t, err)
	return table.Rows
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// helperCommand is the test binary re-executed as the experiments command.
func helperCommand(t *testing.T, env []string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), helperEnv+"=cli"), env...)
	return cmd
}

// waitFor polls cond until it holds or the timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func recordStatus(t *testing.T, out, id string) train.Status {
	t.Helper()
	rec, err := readRecord(filepath.Join(out, "runs", id, "metrics.json"))
	must(t, err)
	if rec == nil {
		return ""
	}
	return rec.Status
}

// containsAll returns an error naming the substrings s lacks.
var containsAll = reporttest.ContainsAll

// shippedData returns the repository's data root, which must hold the
// named dataset.
func shippedData(t *testing.T, dataset string) string { return sweeptest.ShippedData(t, dataset) }

// trainCLI runs the command with real training on args and extra, and
// fails the test unless it exits 0.
func trainCLI(t *testing.T, args []string, extra ...string) (stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := runCLI(context.Background(), append(slices.Clone(args), extra...), cliEnv{stdout: &out, stderr: &errOut,
		getenv: func(string) string { return "" }, run: sweep.Train, quiet: true})
	if code != exitOK {
		t.Fatalf("%v: exit %d: %s", extra, code, errOut.String())
	}
	return out.String(), errOut.String()
}

// readRecord reads a run's metrics.json; nil if there is none.
func readRecord(path string) (*resultsdir.Record, error) {
	if filepath.Base(path) != "metrics.json" {
		return nil, fmt.Errorf("readRecord(%s): not a metrics.json", path)
	}
	return resultsdir.ReadRecord(filepath.Dir(path))
}

type fileLock struct{ l *filelock.Lock }

func (l *fileLock) unlock() error { return l.l.Unlock() }

// waitLock takes the exclusive lock the sweep takes on path.
func waitLock(path string) (*fileLock, error) {
	l, err := filelock.Wait(path)
	if err != nil {
		return nil, err
	}
	return &fileLock{l}, nil
}
