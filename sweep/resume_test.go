package sweep

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "gekc/graph/openblas" // train as the command does, and as fast
	"gekc/grid"
	"gekc/internal/filelock"
	"gekc/resultsdir"
	"gekc/runspec"
	"gekc/sweep/sweeptest"
	"gekc/tfevents"
	"gekc/train"
	"gekc/train/ckpt"

	"gorgonia.org/tensor"
)

// The resume tests train for real on the shipped Nations data: a resumed
// run must end with the record of one trained without a stop, which only
// real training can show.

// newNationsSweep returns a sweep of the grid src on the shipped data.
func newNationsSweep(t *testing.T, src string) toySweep {
	t.Helper()
	g, err := grid.ParseGrid("g.toml", []byte(src), runspec.Validate)
	must(t, err)
	return toySweep{g: g, out: filepath.Join(t.TempDir(), "out"), data: shippedData(t, "nations")}
}

// train sweeps runs (every run of the grid when none is given) with run,
// saving resume states at most every stateEvery; it returns the tally and
// what the sweep printed on stderr.
func (ts toySweep) train(t *testing.T, ctx context.Context, run RunFunc, stateEvery time.Duration, runs ...grid.Run) (Tally, string) {
	t.Helper()
	if runs == nil {
		runs = ts.g.Runs
	}
	var stderr bytes.Buffer
	s := New(ts.g, runs, Options{Out: ts.out, DataRoot: ts.data, Run: run, StateEvery: stateEvery, Stderr: &stderr, Quiet: true})
	must(t, s.Prepare())
	return s.Run(ctx), stderr.String()
}

// cancelAfter is an Observer that cancels the sweep's context when an
// epoch ends: what SIGINT does, at a known point of the run.
type cancelAfter struct {
	train.Observer
	epoch  int
	cancel context.CancelFunc
}

func (c cancelAfter) EpochEnd(rec train.EpochRecord) {
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
		return Train(ctx, job)
	}
}

// A run interrupted after epoch 2 keeps only its resume state; started
// again it continues from there and its metrics.json (epochs, losses,
// validation and test metrics) equals that of the run trained without
// interruption. The state goes once the run is final, and a state that
// cannot be read costs its epochs, not the run.
func TestInterruptedRunResumesFromItsState(t *testing.T) {
	src := `name = "resume"
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
	whole := newNationsSweep(t, src)
	if tally, stderr := whole.train(t, context.Background(), Train, 0); tally != (Tally{Finished: 3}) {
		t.Fatalf("uninterrupted sweep: %+v: %s", tally, stderr)
	}
	ids := whole.ids()

	ts := newNationsSweep(t, src)
	ctx, stopAfter2 := stoppedAfterEpoch(t, 2)
	if tally, stderr := ts.train(t, ctx, stopAfter2, 0, ts.g.Runs[0]); tally != (Tally{Interrupted: 1}) || !strings.Contains(stderr, "resume after epoch 2") {
		t.Fatalf("interrupted sweep: %+v, want the run interrupted and a word on resuming: %s", tally, stderr)
	}
	dir := filepath.Join(ts.out, resultsdir.RunsDirName, ids[0])
	entries, err := os.ReadDir(dir)
	must(t, err)
	curves := false
	for _, e := range entries {
		switch {
		case strings.HasPrefix(e.Name(), tfevents.FilePrefix):
			curves = true // its epochs so far, for TensorBoard
		case e.Name() != resultsdir.RunLockName && e.Name() != ckpt.StateName:
			t.Errorf("interrupted run left %s", e.Name())
		}
	}
	if !curves {
		t.Error("the interrupted run's TensorBoard event file is gone")
	}
	wantDryRunStatus(t, ts.out, whole.out, ts.g.Runs[0], "pending, resumes after epoch 2", 2)
	// While another process trains it (holds its lock), it is running.
	lock, err := filelock.TryLock(filepath.Join(dir, resultsdir.RunLockName))
	must(t, err)
	wantDryRunStatus(t, ts.out, whole.out, ts.g.Runs[0], "running, saved after epoch 2", 2)
	must(t, lock.Unlock())

	// The second run's state is garbage: it trains from scratch, with a note.
	must(t, os.MkdirAll(filepath.Join(ts.out, resultsdir.RunsDirName, ids[1]), 0o755))
	must(t, os.WriteFile(filepath.Join(ts.out, resultsdir.RunsDirName, ids[1], ckpt.StateName), []byte("not a zip"), 0o644))
	// So does a third run whose state is well formed but of other tables
	// (a state saved by another version of the model).
	tiny := func() map[string]*tensor.Dense {
		return map[string]*tensor.Dense{"entity": tensor.New(tensor.WithShape(2, 2), tensor.WithBacking([]float32{1, 2, 3, 4}))}
	}
	must(t, os.MkdirAll(filepath.Join(ts.out, resultsdir.RunsDirName, ids[2]), 0o755))
	must(t, ckpt.WriteState(filepath.Join(ts.out, resultsdir.RunsDirName, ids[2], ckpt.StateName), ids[2],
		&train.State{Epoch: 1, BestEpoch: -1, Best: math.Inf(-1), Params: tiny(), BestParams: tiny()}, time.Second, nil))

	tally, stderr := ts.train(t, context.Background(), Train, 0)
	if tally != (Tally{Finished: 3}) {
		t.Fatalf("resumed sweep: %+v: %s", tally, stderr)
	}
	if strings.Contains(stderr, "TensorBoard") {
		t.Errorf("a resumed or restarted run's event file was not written: %s", stderr)
	}
	for i, id := range ids {
		got := assertSameTraining(t, ts.out, whole.out, id)
		wantSameCurves(t, filepath.Join(ts.out, resultsdir.RunsDirName, id), filepath.Join(whole.out, resultsdir.RunsDirName, id))
		note := []string{"resumed after epoch 2", "resume state ignored", "resume state ignored"}[i]
		if !strings.Contains(strings.Join(got.Notes, "\n"), note) {
			t.Errorf("%s: notes %q lack %q", id, got.Notes, note)
		}
		// The resumed run was trained by two processes; the others by one,
		// as was every run of the uninterrupted sweep.
		if i == 0 {
			wantSegments(t, got, [][4]int{{0, 0, 2, 0}, {2, 0, 5, 0}}, true)
		} else {
			wantSegments(t, got, nil, true)
		}
		if want, err := resultsdir.ReadRecord(filepath.Join(whole.out, resultsdir.RunsDirName, id)); err != nil || want.Segments != nil {
			t.Errorf("%s trained by one process: segments %+v (%v), want none", id, want.Segments, err)
		}
		if fileExists(filepath.Join(ts.out, resultsdir.RunsDirName, id, ckpt.StateName)) {
			t.Errorf("%s: finished run kept its resume state", id)
		}
	}
	sweeptest.EachRowOnce(t, ts.out, ids)
	sweeptest.NoTempFiles(t, ts.out)
}

// stopAtStep is an Observer that cancels the sweep's context after step
// `step` of epoch `epoch`: SIGTERM (a SLURM time limit) arriving mid-epoch.
type stopAtStep struct {
	train.Observer
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

// A run stopped mid-epoch saves its state at once, whatever StateEvery,
// with its place in the epoch; started again it continues from that step
// and its metrics.json equals that of the run trained without a stop.
func TestRunStoppedMidEpochResumesFromThatStep(t *testing.T) {
	src := `name = "midepoch"
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
	whole := newNationsSweep(t, src)
	if tally, stderr := whole.train(t, context.Background(), Train, time.Hour); tally != (Tally{Finished: 1}) {
		t.Fatalf("uninterrupted sweep: %+v: %s", tally, stderr)
	}
	id := whole.ids()[0]

	ts := newNationsSweep(t, src)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop := func(ctx context.Context, job Job) (*Outcome, error) {
		// Nations: 1592 training triples, 6 steps of 300 per epoch.
		job.Observer = stopAtStep{Observer: job.Observer, epoch: 3, step: 4, cancel: cancel, current: new(int)}
		return Train(ctx, job)
	}
	if tally, stderr := ts.train(t, ctx, stop, time.Hour); tally != (Tally{Interrupted: 1}) || !strings.Contains(stderr, "resume in epoch 3 after step 4") {
		t.Fatalf("stopped sweep: %+v, want the run interrupted and a word on resuming: %s", tally, stderr)
	}
	statePath := filepath.Join(ts.out, resultsdir.RunsDirName, id, ckpt.StateName)
	meta, err := ckpt.ReadStateInfo(statePath)
	must(t, err)
	if meta.Epoch != 2 || meta.Batch != 4 || meta.Steps != 16 {
		t.Errorf("state saved after epoch %d, step %d of the next, %d steps in all; want 2, 4, 16", meta.Epoch, meta.Batch, meta.Steps)
	}
	if len(meta.Segments) != 1 || meta.Segments[0].ToEpoch != 2 || meta.Segments[0].ToBatch != 4 || meta.Segments[0].Host == "" {
		t.Errorf("state's segments %+v, want this process's, up to epoch 2 and step 4", meta.Segments)
	}
	// Written again as a state from before the account of processes: the
	// resumed run's record keeps what is known of the first (its wall time
	// and where it stopped) beside the second.
	st, _, err := ckpt.ReadState(statePath, id)
	must(t, err)
	must(t, ckpt.WriteState(statePath, id, st, meta.Wall, nil))
	// An epoch the stopped process finished after its last state (here
	// planted): the resumed run writes it again, once.
	runDir := filepath.Join(ts.out, resultsdir.RunsDirName, id)
	w, err := tfevents.Open(runDir, 2)
	must(t, err)
	must(t, w.Scalars(3, time.Now(), map[string]float64{"train/loss": 999}))
	w.Close()
	wantDryRunStatus(t, ts.out, whole.out, ts.g.Runs[0], "pending, resumes in epoch 3 after step 4", 2)
	if tally, stderr := ts.train(t, context.Background(), Train, time.Hour); tally != (Tally{Finished: 1}) {
		t.Fatalf("resumed sweep: %+v: %s", tally, stderr)
	}
	got := assertSameTraining(t, ts.out, whole.out, id)
	if !strings.Contains(strings.Join(got.Notes, "\n"), "resumed in epoch 3 after step 4") {
		t.Errorf("notes %q do not say where the run resumed", got.Notes)
	}
	wantSegments(t, got, [][4]int{{0, 0, 2, 4}, {2, 4, 4, 0}}, false)
	wantSameCurves(t, runDir, filepath.Join(whole.out, resultsdir.RunsDirName, id))
	if first := got.Segments[0]; first.Host != "" || first.SgemmGFLOPS != 0 || !first.Started.IsZero() || first.WallSeconds != meta.Wall.Seconds() {
		t.Errorf("first segment %+v, want only the state's wall time %v", first, meta.Wall)
	}
	sweeptest.EachRowOnce(t, ts.out, []string{id})
}

// wantSameCurves checks that a resumed run's TensorBoard file has each
// epoch once, with the uninterrupted run's training loss and validation.
func wantSameCurves(t *testing.T, resumed, whole string) {
	t.Helper()
	got, err := tfevents.ReadScalars(resumed)
	must(t, err)
	want, err := tfevents.ReadScalars(whole)
	must(t, err)
	if len(got) != len(want) || len(want) == 0 {
		t.Fatalf("%d epochs in the resumed run's event file, %d in the uninterrupted one's", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Step != int64(i+1) || w.Step != int64(i+1) || g.Values["train/loss"] != w.Values["train/loss"] || g.Values["valid/mrr"] != w.Values["valid/mrr"] {
			t.Errorf("event %d: step %d loss %v mrr %v; uninterrupted: step %d loss %v mrr %v", i, g.Step, g.Values["train/loss"], g.Values["valid/mrr"],
				w.Step, w.Values["train/loss"], w.Values["valid/mrr"])
		}
	}
}

// assertSameTraining checks that run id of the results directory out
// finished with the record of the same run in ref, trained without a stop:
// the same epochs (loss and validation metrics), test metrics (but for the
// step and sampling times) and best epoch. It returns the record of out.
func assertSameTraining(t *testing.T, out, ref, id string) *resultsdir.Record {
	t.Helper()
	want, err := resultsdir.ReadRecord(filepath.Join(ref, resultsdir.RunsDirName, id))
	must(t, err)
	got, err := resultsdir.ReadRecord(filepath.Join(out, resultsdir.RunsDirName, id))
	must(t, err)
	if got == nil || want == nil {
		t.Fatalf("%s: no metrics.json in %s or in %s", id, out, ref)
	}
	if got.Status != train.Finished || len(got.Epochs) != len(want.Epochs) {
		t.Fatalf("%s: %s %s with %d epochs; trained without a stop %d", id, got.Status, got.Error, len(got.Epochs), len(want.Epochs))
	}
	for e := range want.Epochs {
		if got.Epochs[e].TrainLoss != want.Epochs[e].TrainLoss || !reflect.DeepEqual(got.Epochs[e].Valid, want.Epochs[e].Valid) {
			t.Errorf("%s epoch %d: %v %v, trained without a stop %v %v", id, e+1, got.Epochs[e].TrainLoss, got.Epochs[e].Valid,
				want.Epochs[e].TrainLoss, want.Epochs[e].Valid)
		}
	}
	for _, timing := range []string{"step_ms", "sample_s"} {
		delete(got.Test, timing)
		delete(want.Test, timing)
	}
	if !reflect.DeepEqual(got.Test, want.Test) || got.BestEpoch != want.BestEpoch {
		t.Errorf("%s: test %v (best epoch %d), trained without a stop %v (%d)", id, got.Test, got.BestEpoch, want.Test, want.BestEpoch)
	}
	return got
}

// wantDryRunStatus checks -dry-run's status of run r, interrupted in out
// after epoch epochs: it begins with where it resumes, then gives the best
// validation MRR of its first epochs, as the uninterrupted run in whole
// recorded them (the two train alike), and a wall time.
func wantDryRunStatus(t *testing.T, out, whole string, r grid.Run, resumes string, epochs int) {
	t.Helper()
	rec, err := resultsdir.ReadRecord(resultsdir.RunDir(whole, r.ID))
	must(t, err)
	best, bestEpoch := math.Inf(-1), 0
	for _, e := range rec.Epochs[:epochs] {
		if v := e.Valid["mrr"]; v > best {
			best, bestEpoch = v, e.Epoch
		}
	}
	want := fmt.Sprintf("%s (best valid mrr %.4g at epoch %d; ", resumes, best, bestEpoch)
	if got := resultsdir.RunState(out, r); !strings.HasPrefix(got, want) || !strings.HasSuffix(got, "s trained)") {
		t.Errorf("-dry-run status %q, want %q…s trained)", got, want)
	}
}

// wantSegments checks the processes rec says trained it: want's [from
// epoch, from step, to epoch, to step] each, nil for a run trained by one
// process (no segments). Their wall times add up to the run's, a segment
// of this process names its host and Sgemm rate (all of them do when
// known), and the run's rate is known when every segment's is.
func wantSegments(t *testing.T, rec *resultsdir.Record, want [][4]int, known bool) {
	t.Helper()
	if len(rec.Segments) != len(want) {
		t.Fatalf("%s: %d segments %+v, want %d", rec.ID, len(rec.Segments), rec.Segments, len(want))
	}
	if want == nil {
		return
	}
	var wall float64
	for i, seg := range rec.Segments {
		if got := [4]int{seg.FromEpoch, seg.FromBatch, seg.ToEpoch, seg.ToBatch}; got != want[i] {
			t.Errorf("%s: segment %d from and to %v, want %v", rec.ID, i, got, want[i])
		}
		if (known || i == len(want)-1) && (seg.Host != rec.Host || seg.SgemmGFLOPS <= 0 || seg.Env["OPENBLAS_CORETYPE"] != rec.Env["OPENBLAS_CORETYPE"] || seg.Started.IsZero()) {
			t.Errorf("%s: segment %d %+v does not describe this process (host %q)", rec.ID, i, seg, rec.Host)
		}
		wall += seg.WallSeconds
	}
	if math.Abs(wall-float64(rec.WallSeconds)) > 0.01 {
		t.Errorf("%s: segments' wall times add up to %.3f s, the run's is %.3f s", rec.ID, wall, float64(rec.WallSeconds))
	}
	if rate := rec.TrainingSgemm(); (rate > 0) != known {
		t.Errorf("%s: training Sgemm rate %v from segments %+v (each process's known: %v)", rec.ID, rate, rec.Segments, known)
	}
}

// A run that keeps the parameters of its best validation log-likelihood
// (sample_from = "ll", as the d = 1000 seeds are trained), stopped mid-epoch
// after that epoch and resumed, ends as the run trained without a stop: the
// same record, the same best-LL epoch, and the same samples, drawn from
// parameters that only the resume state carried across the stop.
func TestBestLLParamsSurviveAStop(t *testing.T) {
	src := `name = "midepoch-ll"
[defaults]
dataset = "nations"
model = "cp2"
objective = "pll"
rank = 200
batch_size = 300
learning_rate = 0.1
epochs = 8
patience = 0
sample_from = "ll"
samples = 200
eval = { metrics = ["mrr", "ll"] }
`
	whole := newNationsSweep(t, src)
	if tally, stderr := whole.train(t, context.Background(), Train, time.Hour); tally != (Tally{Finished: 1}) {
		t.Fatalf("uninterrupted sweep: %+v: %s", tally, stderr)
	}
	id := whole.ids()[0]
	want, err := resultsdir.ReadRecord(filepath.Join(whole.out, resultsdir.RunsDirName, id))
	must(t, err)
	const stopEpoch = 6
	if want.LLEpoch == nil || *want.LLEpoch >= stopEpoch {
		t.Fatalf("best validation LL at epoch %s: pick a run where it comes before epoch %d, so that only the state keeps its parameters (%v)", epochOf(want.LLEpoch), stopEpoch, want.Epochs)
	}

	ts := newNationsSweep(t, src)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop := func(ctx context.Context, job Job) (*Outcome, error) {
		job.Observer = stopAtStep{Observer: job.Observer, epoch: stopEpoch, step: 2, cancel: cancel, current: new(int)}
		return Train(ctx, job)
	}
	if tally, stderr := ts.train(t, ctx, stop, time.Hour); tally != (Tally{Interrupted: 1}) {
		t.Fatalf("stopped sweep: %+v: %s", tally, stderr)
	}
	if tally, stderr := ts.train(t, context.Background(), Train, time.Hour); tally != (Tally{Finished: 1}) {
		t.Fatalf("resumed sweep: %+v: %s", tally, stderr)
	}
	got := assertSameTraining(t, ts.out, whole.out, id)
	if got.LLEpoch == nil || *got.LLEpoch != *want.LLEpoch {
		t.Errorf("best validation LL at epoch %s, want %d", epochOf(got.LLEpoch), *want.LLEpoch)
	}
	for _, name := range []string{resultsdir.SamplesName, ckpt.CheckpointLLName} {
		a, err := os.ReadFile(filepath.Join(whole.out, resultsdir.RunsDirName, id, name))
		must(t, err)
		b, err := os.ReadFile(filepath.Join(ts.out, resultsdir.RunsDirName, id, name))
		must(t, err)
		if !bytes.Equal(a, b) {
			t.Errorf("%s of the resumed run differs from the uninterrupted run's", name)
		}
	}
}

func epochOf(e *int) string {
	if e == nil {
		return "none"
	}
	return strconv.Itoa(*e)
}
