package main

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"gekc/train"
	"gekc/train/ckpt"

	"gorgonia.org/tensor"
)

// cancelAfter is an Observer that cancels the sweep's context when an
// epoch ends: what SIGINT does, at a known point of the run.
type cancelAfter struct {
	Observer
	epoch  int
	cancel context.CancelFunc
}

func (c cancelAfter) EpochEnd(rec EpochRecord) {
	c.Observer.EpochEnd(rec)
	if rec.Epoch == c.epoch {
		c.cancel()
	}
}

// Real training on Nations. A run interrupted after epoch 2 keeps only its
// resume state; started again it continues from there and its metrics.json
// (epochs, losses, validation and test metrics) equals that of the run
// trained without interruption. The state goes once the run is final, and a
// state that cannot be read costs its epochs, not the run.
func TestInterruptedRunResumesFromItsState(t *testing.T) {
	data := shippedData(t, "nations")
	grid := `name = "resume"
[defaults]
dataset = "nations"
rank = 5
batch_size = 300
learning_rate = 0.01
epochs = 5
eval = { metrics = ["mrr", "hits", "ll"] }

[[sweep]]
model = ["complex", "cp2", "complex+"]
objective = "pll"
`
	cli := func(fx sweepFixture, ctx context.Context, run RunFunc, extra ...string) (int, string) {
		t.Helper()
		var out, errOut bytes.Buffer
		code := runCLI(ctx, append([]string{"-grid", fx.grid, "-data", data, "-out", fx.out, "-state-every", "0"}, extra...),
			cliEnv{stdout: &out, stderr: &errOut, getenv: func(string) string { return "" }, run: run, quiet: true})
		return code, out.String() + errOut.String()
	}
	whole := newSweepFixture(t, grid)
	if code, out := cli(whole, context.Background(), trainRun); code != exitOK {
		t.Fatalf("uninterrupted sweep: exit %d: %s", code, out)
	}
	ids := whole.runIDs(t)

	fx := newSweepFixture(t, grid)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stopAfter2 := func(ctx context.Context, job Job) (*Outcome, error) {
		job.Observer = cancelAfter{Observer: job.Observer, epoch: 2, cancel: cancel}
		return trainRun(ctx, job)
	}
	if code, out := cli(fx, ctx, stopAfter2, "-only", "0"); code != exitInterrupted || !strings.Contains(out, "resume after epoch 2") {
		t.Fatalf("interrupted sweep: exit %d, want %d and a word on resuming: %s", code, exitInterrupted, out)
	}
	dir := filepath.Join(fx.out, runsDirName, ids[0])
	entries, err := os.ReadDir(dir)
	must(t, err)
	for _, e := range entries {
		if e.Name() != runLockName && e.Name() != ckpt.StateName {
			t.Errorf("interrupted run left %s", e.Name())
		}
	}
	if got := runStatus(fx.out, ids[0]); got != "pending, resumes after epoch 2" {
		t.Errorf("-dry-run status %q", got)
	}

	// The second run's state is garbage: it trains from scratch, with a note.
	must(t, os.MkdirAll(filepath.Join(fx.out, runsDirName, ids[1]), 0o755))
	must(t, os.WriteFile(filepath.Join(fx.out, runsDirName, ids[1], ckpt.StateName), []byte("not a zip"), 0o644))
	// So does a third run whose state is well formed but of other tables
	// (a state saved by another version of the model).
	tiny := func() map[string]*tensor.Dense {
		return map[string]*tensor.Dense{"entity": tensor.New(tensor.WithShape(2, 2), tensor.WithBacking([]float32{1, 2, 3, 4}))}
	}
	must(t, os.MkdirAll(filepath.Join(fx.out, runsDirName, ids[2]), 0o755))
	must(t, ckpt.WriteState(filepath.Join(fx.out, runsDirName, ids[2], ckpt.StateName), ids[2],
		&train.State{Epoch: 1, BestEpoch: -1, Best: math.Inf(-1), Params: tiny(), BestParams: tiny()}, time.Second))

	if code, out := cli(fx, context.Background(), trainRun); code != exitOK {
		t.Fatalf("resumed sweep: exit %d: %s", code, out)
	}
	for i, id := range ids {
		want, err := readRecord(filepath.Join(whole.out, runsDirName, id, metricsName))
		must(t, err)
		got, err := readRecord(filepath.Join(fx.out, runsDirName, id, metricsName))
		must(t, err)
		if got.Status != StatusFinished {
			t.Fatalf("%s: %s %s", id, got.Status, got.Error)
		}
		if len(got.Epochs) != len(want.Epochs) {
			t.Fatalf("%s: %d epochs, the uninterrupted run %d", id, len(got.Epochs), len(want.Epochs))
		}
		for e := range want.Epochs {
			if got.Epochs[e].TrainLoss != want.Epochs[e].TrainLoss || !reflect.DeepEqual(got.Epochs[e].Valid, want.Epochs[e].Valid) {
				t.Errorf("%s epoch %d: %v %v, uninterrupted %v %v", id, e+1, got.Epochs[e].TrainLoss, got.Epochs[e].Valid,
					want.Epochs[e].TrainLoss, want.Epochs[e].Valid)
			}
		}
		delete(got.Test, "step_ms")
		delete(want.Test, "step_ms")
		if !reflect.DeepEqual(got.Test, want.Test) || got.BestEpoch != want.BestEpoch {
			t.Errorf("%s: test %v (best epoch %d), uninterrupted %v (%d)", id, got.Test, got.BestEpoch, want.Test, want.BestEpoch)
		}
		note := []string{"resumed after epoch 2", "resume state ignored", "resume state ignored"}[i]
		if !strings.Contains(strings.Join(got.Notes, "\n"), note) {
			t.Errorf("%s: notes %q lack %q", id, got.Notes, note)
		}
		if fileExists(filepath.Join(fx.out, runsDirName, id, ckpt.StateName)) {
			t.Errorf("%s: finished run kept its resume state", id)
		}
	}
	assertEachRowOnce(t, fx.out, ids)
	assertNoTempFiles(t, fx.dir)
}

// stopAtStep is an Observer that cancels the sweep's context after step
// `step` of epoch `epoch`: SIGTERM (a SLURM time limit) arriving mid-epoch.
type stopAtStep struct {
	Observer
	epoch, step int
	cancel      context.CancelFunc
	current     *int
}

func (o stopAtStep) EpochStart(epoch, steps int) {
	o.Observer.EpochStart(epoch, steps)
	*o.current = epoch
}

func (o stopAtStep) Step(done int, loss float64) {
	o.Observer.Step(done, loss)
	if *o.current == o.epoch && done == o.step {
		o.cancel()
	}
}

// A run stopped mid-epoch saves its state at once, whatever -state-every,
// with its place in the epoch; started again it continues from that step
// and its metrics.json equals that of the run trained without a stop.
func TestRunStoppedMidEpochResumesFromThatStep(t *testing.T) {
	data := shippedData(t, "nations")
	grid := `name = "midepoch"
[defaults]
dataset = "nations"
model = "complex2"
objective = "pll"
rank = 5
batch_size = 300
learning_rate = 0.01
epochs = 4
eval = { metrics = ["mrr", "hits", "ll"] }
`
	cli := func(fx sweepFixture, ctx context.Context, run RunFunc) (int, string) {
		t.Helper()
		var out, errOut bytes.Buffer
		code := runCLI(ctx, []string{"-grid", fx.grid, "-data", data, "-out", fx.out, "-state-every", "1h"},
			cliEnv{stdout: &out, stderr: &errOut, getenv: func(string) string { return "" }, run: run, quiet: true})
		return code, out.String() + errOut.String()
	}
	whole := newSweepFixture(t, grid)
	if code, out := cli(whole, context.Background(), trainRun); code != exitOK {
		t.Fatalf("uninterrupted sweep: exit %d: %s", code, out)
	}
	id := whole.runIDs(t)[0]

	fx := newSweepFixture(t, grid)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop := func(ctx context.Context, job Job) (*Outcome, error) {
		// Nations: 1592 training triples, 6 steps of 300 per epoch.
		job.Observer = stopAtStep{Observer: job.Observer, epoch: 3, step: 4, cancel: cancel, current: new(int)}
		return trainRun(ctx, job)
	}
	if code, out := cli(fx, ctx, stop); code != exitInterrupted || !strings.Contains(out, "resume in epoch 3 after step 4") {
		t.Fatalf("stopped sweep: exit %d, want %d and a word on resuming: %s", code, exitInterrupted, out)
	}
	meta, err := ckpt.ReadStateInfo(filepath.Join(fx.out, runsDirName, id, ckpt.StateName))
	must(t, err)
	if meta.Epoch != 2 || meta.Batch != 4 || meta.Steps != 16 {
		t.Errorf("state saved after epoch %d, step %d of the next, %d steps in all; want 2, 4, 16", meta.Epoch, meta.Batch, meta.Steps)
	}
	if got := runStatus(fx.out, id); got != "pending, resumes in epoch 3 after step 4" {
		t.Errorf("-dry-run status %q", got)
	}
	if code, out := cli(fx, context.Background(), trainRun); code != exitOK {
		t.Fatalf("resumed sweep: exit %d: %s", code, out)
	}
	want, err := readRecord(filepath.Join(whole.out, runsDirName, id, metricsName))
	must(t, err)
	got, err := readRecord(filepath.Join(fx.out, runsDirName, id, metricsName))
	must(t, err)
	if got.Status != StatusFinished || len(got.Epochs) != len(want.Epochs) {
		t.Fatalf("%s %s with %d epochs; the uninterrupted run %d", got.Status, got.Error, len(got.Epochs), len(want.Epochs))
	}
	for e := range want.Epochs {
		if got.Epochs[e].TrainLoss != want.Epochs[e].TrainLoss || !reflect.DeepEqual(got.Epochs[e].Valid, want.Epochs[e].Valid) {
			t.Errorf("epoch %d: %v %v, uninterrupted %v %v", e+1, got.Epochs[e].TrainLoss, got.Epochs[e].Valid,
				want.Epochs[e].TrainLoss, want.Epochs[e].Valid)
		}
	}
	delete(got.Test, "step_ms")
	delete(want.Test, "step_ms")
	if !reflect.DeepEqual(got.Test, want.Test) || got.BestEpoch != want.BestEpoch {
		t.Errorf("test %v (best epoch %d), uninterrupted %v (%d)", got.Test, got.BestEpoch, want.Test, want.BestEpoch)
	}
	if !strings.Contains(strings.Join(got.Notes, "\n"), "resumed in epoch 3 after step 4") {
		t.Errorf("notes %q do not say where the run resumed", got.Notes)
	}
	assertEachRowOnce(t, fx.out, []string{id})
}
