package sweep

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"gekc/grid"
	"gekc/internal/atomicfile"
	"gekc/internal/fakerun"
	"gekc/report"
)

// fakeTrainer is the runner's tests' run function: fakerun's Trainer
// (progress, checkpoints, failures on demand, metrics from the spec), with
// the last job of each run kept for the tests to inspect.
type fakeTrainer struct {
	fakerun.Trainer
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

// toyGrid expands to 12 runs: 8 from the first block, 4 (seeds) from the second.
const toyGrid = `name = "toy"
[defaults]
dataset = "toy"
rank = 4
batch_size = 10
learning_rate = 0.01
epochs = 3

[[sweep]]
model = ["cp2", "complex2"]
objective = ["pll", "mle"]
seed = [0, 1]

[[sweep]]
model = "cp"
objective = "pll"
seeds = 4
`

// toyBase is a [defaults] block on the data set "toy" that satisfies
// grid.DefaultValidator, so that test grids only state what they test.
const toyBase = `[defaults]
dataset = "toy"
model = "cp"
objective = "pll"
rank = 4
batch_size = 10
learning_rate = 0.01
epochs = 2
`

// toySweep is a results directory and a data root holding toyGrid's
// (empty) data set directory: the fake trainer reads no data.
type toySweep struct {
	g         *grid.Grid
	out, data string
}

func newToySweep(t *testing.T) toySweep { return newSweepOf(t, toyGrid) }

// newSweepOf is newToySweep for another grid on the data set "toy".
func newSweepOf(t *testing.T, src string) toySweep {
	t.Helper()
	g, err := grid.ParseGrid("toy.toml", []byte(src), nil)
	must(t, err)
	dir := t.TempDir()
	ts := toySweep{g: g, out: filepath.Join(dir, "out"), data: filepath.Join(dir, "data")}
	must(t, os.MkdirAll(filepath.Join(ts.data, "toy"), 0o755))
	return ts
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

// assertEachRowOnce checks that results.tsv has exactly one row per ID
// and no other rows.
func assertEachRowOnce(t *testing.T, out string, ids []string) {
	t.Helper()
	table, err := report.ReadTSV(filepath.Join(out, resultsTSVName))
	must(t, err)
	count := map[string]int{}
	for _, r := range table.Rows {
		count[r["id"]]++
	}
	for _, id := range ids {
		if count[id] != 1 {
			t.Errorf("results.tsv has %d rows for %s, want 1", count[id], id)
		}
		delete(count, id)
	}
	for id, n := range count {
		t.Errorf("results.tsv has %d unexpected rows for %s", n, id)
	}
}

// assertNoTempFiles checks that no atomicfile temporary is left.
func assertNoTempFiles(t *testing.T, root string) {
	t.Helper()
	filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err == nil && atomicfile.IsTemp(d.Name()) {
			t.Errorf("temporary file left behind: %s", path)
		}
		return nil
	})
}
