package sweep

import (
	"context"
	"path/filepath"
	"sync"
	"testing"

	"gekc/grid"
	"gekc/sweep/sweeptest"
	"time"
)

// fakeTrainer is the runner's tests' run function: sweeptest's Trainer
// (progress, checkpoints, failures on demand, metrics from the spec), with
// the last job of each run kept for the tests to inspect.
type fakeTrainer struct {
	sweeptest.Trainer
	mu   sync.Mutex
	jobs map[string]Job
}

func newFake() *fakeTrainer { return &fakeTrainer{jobs: map[string]Job{}} }

func (f *fakeTrainer) run(ctx context.Context, job Job) (*Outcome, error) {
	f.mu.Lock()
	f.jobs[job.ID] = job
	f.mu.Unlock()
	r, err := f.Run(ctx, job.ID, job.Spec, job.RunDir, job.Observer)
	if err != nil {
		return nil, err
	}
	return &Outcome{Status: r.Status, Epochs: r.Epochs, BestEpoch: r.BestEpoch, Valid: r.Valid, Test: r.Test, Notes: r.Notes}, nil
}

// toySweep is a results directory and a data root holding sweeptest.ToyGrid's
// (empty) data set directory: the fake trainer reads no data.
type toySweep struct {
	g         *grid.Grid
	out, data string
}

func newToySweep(t *testing.T) toySweep { return newSweepOf(t, sweeptest.ToyGrid) }

// newSweepOf is newToySweep for another grid on the data set "toy".
func newSweepOf(t *testing.T, src string) toySweep {
	t.Helper()
	g, out, data := sweeptest.NewToy(t, src)
	return toySweep{g: g, out: out, data: data}
}

func (ts toySweep) ids() []string {
	ids := make([]string, len(ts.g.Runs))
	for i, r := range ts.g.Runs {
		ids[i] = r.ID
	}
	return ids
}

// run sweeps every run of the grid with fake, jobs at a time.
func (ts toySweep) run(t *testing.T, fake *fakeTrainer, jobs int) Tally {
	t.Helper()
	return ts.runCtx(t, context.Background(), fake, jobs)
}

func (ts toySweep) runCtx(t *testing.T, ctx context.Context, fake *fakeTrainer, jobs int) Tally {
	t.Helper()
	s := New(ts.g, ts.g.Runs, Options{Out: ts.out, DataRoot: ts.data, Run: fake.run, Jobs: jobs, Quiet: true})
	must(t, s.Prepare())
	return s.Run(ctx)
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
