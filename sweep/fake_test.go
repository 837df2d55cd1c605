package sweep

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
	"time"

	"gekc/grid"
	"gekc/internal/atomicfile"
	"gekc/report"
	"gekc/train"
)

// fakeTrainer is a RunFunc that trains nothing but behaves like training:
// it reports progress, writes a partial then a final checkpoint, sleeps per
// epoch while honouring ctx, and derives metrics from the spec. The
// runner's tests drive sweeps with it.
type fakeTrainer struct {
	sleep                  time.Duration
	fail, diverge, panicOn *regexp.Regexp
	block                  chan struct{} // if non-nil, the first call waits here (or on ctx)
	started                chan string   // if non-nil, receives each ID as it starts
	mu                     sync.Mutex
	calls                  map[string]int
	jobs                   map[string]Job // the last job of each ID
}

func newFake() *fakeTrainer { return &fakeTrainer{calls: map[string]int{}, jobs: map[string]Job{}} }

func (f *fakeTrainer) callCount(id string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[id]
}

func (f *fakeTrainer) run(ctx context.Context, job Job) (*Outcome, error) {
	f.mu.Lock()
	f.calls[job.ID]++
	f.jobs[job.ID] = job
	block := f.block
	f.block = nil
	f.mu.Unlock()
	if f.started != nil {
		f.started <- job.ID
	}
	// A checkpoint that is not yet final, as a killed run would leave it.
	if err := os.WriteFile(filepath.Join(job.RunDir, "checkpoint.npz"), []byte("partial"), 0o644); err != nil {
		return nil, err
	}
	if block != nil {
		select {
		case <-block:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if f.panicOn != nil && f.panicOn.MatchString(job.ID) {
		panic("fake panic in " + job.ID)
	}
	epochs := min(job.Spec.Epochs, 3)
	var recs []train.EpochRecord
	for e := 1; e <= epochs; e++ {
		const steps = 4
		job.Observer.EpochStart(e, steps)
		for step := 1; step <= steps; step++ {
			select {
			case <-time.After(f.sleep / steps):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			job.Observer.Step(step, 1/float64(e*step))
		}
		rec := train.EpochRecord{Epoch: e, TrainLoss: 1 / float64(e), Seconds: f.sleep.Seconds(), Valid: map[string]float64{"mrr": 0.1 * float64(e)}}
		if f.diverge != nil && f.diverge.MatchString(job.ID) {
			rec.TrainLoss = math.NaN()
			job.Observer.EpochEnd(rec)
			return &Outcome{Status: train.Diverged, Epochs: append(recs, rec), Notes: []string{"loss became NaN"}}, nil
		}
		recs = append(recs, rec)
		job.Observer.EpochEnd(rec)
	}
	if f.fail != nil && f.fail.MatchString(job.ID) {
		return nil, fmt.Errorf("fake failure for %s", job.ID)
	}
	if err := atomicfile.WriteFile(filepath.Join(job.RunDir, "checkpoint.npz"), []byte("final "+job.ID), 0o644); err != nil {
		return nil, err
	}
	mrr := 0.3 + 0.01*float64(job.Spec.Seed) + 0.001*float64(len(job.Spec.Model))
	return &Outcome{Status: train.Finished, Epochs: recs, BestEpoch: epochs,
		Valid: map[string]float64{"mrr": mrr + 0.02, "ll": -10}, Test: map[string]float64{"mrr": mrr, "ll": -11}}, nil
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
