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

// stoppedAfterEpoch returns a context and a run function that trains for
// real and cancels that context when the given epoch ends.
func stoppedAfterEpoch(t *testing.T, epoch int) (context.Context, RunFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return ctx, func(ctx context.Context, job Job) (*Outcome, error) {
		job.Observer = cancelAfter{Observer: job.Observer, epoch: epoch, cancel: cancel}
		return trainRun(ctx, job)
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
	cli := stateCLI(t, data, "0")
	whole := newSweepFixture(t, grid)
	if code, out := cli(whole, context.Background(), trainRun); code != exitOK {
		t.Fatalf("uninterrupted sweep: exit %d: %s", code, out)
	}
	ids := whole.runIDs(t)

	fx := newSweepFixture(t, grid)
	ctx, stopAfter2 := stoppedAfterEpoch(t, 2)
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
		got := assertSameTraining(t, fx.out, whole.out, id)
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
	cli := stateCLI(t, data, "1h")
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
	got := assertSameTraining(t, fx.out, whole.out, id)
	if !strings.Contains(strings.Join(got.Notes, "\n"), "resumed in epoch 3 after step 4") {
		t.Errorf("notes %q do not say where the run resumed", got.Notes)
	}
	assertEachRowOnce(t, fx.out, []string{id})
}

// countEpochs is an Observer that counts the epochs that end.
type countEpochs struct {
	Observer
	n *int
}

func (c countEpochs) EpochEnd(rec EpochRecord) {
	c.Observer.EpochEnd(rec)
	*c.n++
}

// Real training on Nations. A run of patience 10 and 7 epochs that adopts
// the state a run of patience 2 and 4 epochs saved after epoch 2 (what is
// done to continue a run that stopped too early) trains on to the record
// it would have had from scratch, and says whose state it continued. Runs
// that differ in anything else, a selection of more than one run and a
// finished run are refused before anything is trained.
func TestRunAdoptsTheStateOfARunThatStopsSooner(t *testing.T) {
	data := shippedData(t, "nations")
	grid := `name = "adopt"
[defaults]
dataset = "nations"
model = "cp2"
objective = "pll"
rank = 5
batch_size = 300
learning_rate = 0.01
eval = { metrics = ["mrr", "hits", "ll"] }

[[sweep]]
patience = 2
epochs = 4

[[sweep]]
patience = 10
epochs = 7

[[sweep]]
patience = 10
epochs = 7
learning_rate = 0.02
`
	cli := stateCLI(t, data, "0")
	whole := newSweepFixture(t, grid)
	if code, out := cli(whole, context.Background(), trainRun, "-only", "1"); code != exitOK {
		t.Fatalf("run 1 from scratch: exit %d: %s", code, out)
	}
	ids := whole.runIDs(t)

	fx := newSweepFixture(t, grid)
	ctx, stopAfter2 := stoppedAfterEpoch(t, 2)
	if code, out := cli(fx, ctx, stopAfter2, "-only", "0"); code != exitInterrupted {
		t.Fatalf("run 0 stopped after epoch 2: exit %d: %s", code, out)
	}
	src := filepath.Join(fx.out, runsDirName, ids[0], ckpt.StateName)

	for _, c := range []struct {
		only, want string
	}{
		{"2", "learning_rate (0.02, not 0.01)"},
		{"1-2", "needs -only to select one run"},
	} {
		if code, out := cli(fx, context.Background(), trainRun, "-only", c.only, "-adopt-state", src); code != exitUsage || !strings.Contains(out, c.want) {
			t.Errorf("-only %s -adopt-state: exit %d, want %d and %q: %s", c.only, code, exitUsage, c.want, out)
		}
	}
	if fileExists(filepath.Join(fx.out, runsDirName, ids[2], ckpt.StateName)) || fileExists(filepath.Join(fx.out, runsDirName, ids[2], metricsName)) {
		t.Errorf("a refused adoption left a state or a record in run 2")
	}

	trained := 0 // epochs trained by this process: the adopted run's 3 to 7
	counting := func(ctx context.Context, job Job) (*Outcome, error) {
		job.Observer = countEpochs{Observer: job.Observer, n: &trained}
		return trainRun(ctx, job)
	}
	code, out := cli(fx, context.Background(), counting, "-only", "1", "-adopt-state", src)
	if trained != 5 {
		t.Errorf("the adopting run trained %d epochs, want 5: epochs 1 and 2 are the state's", trained)
	}
	if code != exitOK || !strings.Contains(out, "continued the resume state of run "+ids[0]+" after epoch 2") {
		t.Fatalf("run 1 adopting run 0's state: exit %d, want %d and a note naming run 0: %s", code, exitOK, out)
	}
	got := assertSameTraining(t, fx.out, whole.out, ids[1])
	if notes := strings.Join(got.Notes, "\n"); !strings.Contains(notes, "differ only in patience (10, not 2) and epochs (7, not 4)") {
		t.Errorf("notes %q do not say which run was continued and how the two differ", got.Notes)
	}
	if code, out := cli(fx, context.Background(), trainRun, "-only", "1", "-adopt-state", src); code != exitUsage || !strings.Contains(out, "finished already") {
		t.Errorf("adopting into a finished run: exit %d, want %d: %s", code, exitUsage, out)
	}
}

// stateCLI returns a runner of the command on the Nations data in data,
// for the state tests: quiet, with the given -state-every, and its stdout
// and stderr together.
func stateCLI(t *testing.T, data, stateEvery string) func(fx sweepFixture, ctx context.Context, run RunFunc, extra ...string) (int, string) {
	return func(fx sweepFixture, ctx context.Context, run RunFunc, extra ...string) (int, string) {
		t.Helper()
		var out, errOut bytes.Buffer
		code := runCLI(ctx, append([]string{"-grid", fx.grid, "-data", data, "-out", fx.out, "-state-every", stateEvery}, extra...),
			cliEnv{stdout: &out, stderr: &errOut, getenv: func(string) string { return "" }, run: run, quiet: true})
		return code, out.String() + errOut.String()
	}
}

// assertSameTraining checks that run id of the results directory out
// finished with the record of the same run in ref, trained without a stop:
// the same epochs (loss and validation metrics), test metrics (but for the
// step time) and best epoch. It returns the record of out.
func assertSameTraining(t *testing.T, out, ref, id string) *runRecord {
	t.Helper()
	want, err := readRecord(filepath.Join(ref, runsDirName, id, metricsName))
	must(t, err)
	got, err := readRecord(filepath.Join(out, runsDirName, id, metricsName))
	must(t, err)
	if got.Status != StatusFinished || len(got.Epochs) != len(want.Epochs) {
		t.Fatalf("%s: %s %s with %d epochs; trained without a stop %d", id, got.Status, got.Error, len(got.Epochs), len(want.Epochs))
	}
	for e := range want.Epochs {
		if got.Epochs[e].TrainLoss != want.Epochs[e].TrainLoss || !reflect.DeepEqual(got.Epochs[e].Valid, want.Epochs[e].Valid) {
			t.Errorf("%s epoch %d: %v %v, trained without a stop %v %v", id, e+1, got.Epochs[e].TrainLoss, got.Epochs[e].Valid,
				want.Epochs[e].TrainLoss, want.Epochs[e].Valid)
		}
	}
	delete(got.Test, "step_ms")
	delete(want.Test, "step_ms")
	if !reflect.DeepEqual(got.Test, want.Test) || got.BestEpoch != want.BestEpoch {
		t.Errorf("%s: test %v (best epoch %d), trained without a stop %v (%d)", id, got.Test, got.BestEpoch, want.Test, want.BestEpoch)
	}
	return got
}
