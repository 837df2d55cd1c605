package train

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"gekc/objectives"

	"gorgonia.org/tensor"
)

// stopAt is an Observer that cancels a run after step `step` of epoch
// `epoch`: what SIGTERM does, at a known point inside an epoch.
type stopAt struct {
	epoch, step int
	cancel      func()
	current     int
}

func (o *stopAt) EpochStart(epoch, steps int) { o.current = epoch }
func (o *stopAt) Step(done int, _ float64) {
	if o.current == o.epoch && done == o.step {
		o.cancel()
	}
}
func (o *stopAt) EpochEnd(EpochRecord) {}
func (o *stopAt) Log(string)           {}

// A run stopped after an epoch, or inside one, and resumed from the State
// it saved then ends exactly like the run that was never stopped: same
// epochs, same losses, same parameters, same test metrics. Covers an
// energy-based, a squared and a non-negative model, PLL and MLE, and every
// optimiser (their state is part of the State). Nations has 1592 training
// triples: 6 steps of 300 per epoch.
func TestResumedRunEqualsUninterruptedRun(t *testing.T) {
	ds := repoData(t, "nations")
	for _, c := range []struct {
		model string
		obj   objectives.Objective
		stop  int // epochs completed when the first attempt stops
		step  int // steps of the next epoch taken by then (0: stopped at the epoch's end)
		opt   Optimizer
	}{
		{"complex", objectives.PLL{Weights: objectives.Uniform}, 2, 0, Optimizer{}},
		{"cp2", objectives.MLE{}, 1, 0, Optimizer{}},
		{"complex+", objectives.PLL{Weights: objectives.Uniform}, 3, 0, Optimizer{}},
		{"complex", objectives.PLL{Weights: objectives.Uniform}, 2, 4, Optimizer{}},
		{"cp2", objectives.MLE{}, 0, 1, Optimizer{}},
		{"complex+", objectives.PLL{Weights: objectives.Uniform}, 4, 5, Optimizer{}},
		{"complex", objectives.PLL{Weights: objectives.Uniform}, 2, 3, Optimizer{Name: "adagrad", InitialAccumulator: 0.1}},
		{"cp2", objectives.MLE{}, 1, 2, Optimizer{Name: "sgd", Momentum: 0.9}},
		{"complex+", objectives.PLL{Weights: objectives.Uniform}, 1, 0, Optimizer{Name: "sgd"}},
	} {
		t.Run(fmt.Sprintf("%s/%s/epoch%d+step%d", c.model, c.opt.name(), c.stop, c.step), func(t *testing.T) {
			cfg := Config{Model: c.model, Rank: 6, Objective: c.obj, Optimizer: c.opt, LearningRate: 1e-2, BatchSize: 300, Epochs: 5, Seed: 3,
				Dtype: tensor.Float64, Eval: EvalConfig{LogLikelihood: true}}
			whole, err := Run(context.Background(), cfg, ds, nil)
			if err != nil {
				t.Fatal(err)
			}

			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var saved *State
			first := cfg
			first.SaveState = func(s *State) error {
				saved = s.Clone() // the last one is what a stopped run leaves
				if c.step == 0 && s.Epoch == c.stop {
					cancel()
				}
				return nil
			}
			var obs Observer
			if c.step > 0 {
				obs = &stopAt{epoch: c.stop + 1, step: c.step, cancel: cancel}
			}
			if _, err := Run(ctx, first, ds, obs); !errors.Is(err, context.Canceled) {
				t.Fatalf("first attempt: err %v, want it cancelled", err)
			}
			if saved == nil || saved.Epoch != c.stop || saved.Batch != c.step {
				t.Fatalf("saved state %+v; want epoch %d, step %d", saved, c.stop, c.step)
			}
			if wantSteps := 6*c.stop + c.step; saved.Steps != wantSteps {
				t.Errorf("saved state has taken %d steps, want %d", saved.Steps, wantSteps)
			}
			second := cfg
			second.Resume = saved
			resumed, err := Run(context.Background(), second, ds, nil)
			if err != nil {
				t.Fatal(err)
			}
			sameAsWhole(t, whole, resumed)
			want := fmt.Sprintf("resumed after epoch %d", c.stop)
			if c.step > 0 {
				want = fmt.Sprintf("resumed in epoch %d after step %d", c.stop+1, c.step)
			}
			if !containsPrefix(resumed.Notes, want) {
				t.Errorf("notes %q do not say the run was resumed", resumed.Notes)
			}
		})
	}
}

// sameAsWhole fails t unless got ended exactly like the run whole, trained
// without a stop (float64 parameters): every epoch's loss and validation,
// the best epoch, the test metrics and the parameters.
func sameAsWhole(t *testing.T, whole, got *Result) {
	t.Helper()
	if len(got.Epochs) != len(whole.Epochs) {
		t.Fatalf("the run has %d epochs, the whole run %d", len(got.Epochs), len(whole.Epochs))
	}
	for i := range whole.Epochs {
		w, r := whole.Epochs[i], got.Epochs[i]
		if w.Epoch != r.Epoch || w.TrainLoss != r.TrainLoss || !reflect.DeepEqual(w.Valid, r.Valid) {
			t.Errorf("epoch %d: loss %v, valid %v; the whole run had %v, %v", w.Epoch, r.TrainLoss, r.Valid, w.TrainLoss, w.Valid)
		}
	}
	if got.BestEpoch != whole.BestEpoch || !reflect.DeepEqual(got.Test, whole.Test) {
		t.Errorf("best epoch %d, test %v; the whole run: %d, %v", got.BestEpoch, got.Test, whole.BestEpoch, whole.Test)
	}
	for _, n := range whole.Model.ParamNames() {
		if !slices.Equal(whole.Model.Param(n).Data().([]float64), got.Model.Param(n).Data().([]float64)) {
			t.Errorf("parameter %q differs from the whole run's", n)
		}
	}
}

// keepStateAfter is a SaveState that copies into *into the state saved
// after epoch epoch (at its end), as a run stopped then would leave it.
func keepStateAfter(epoch int, into **State) func(*State) error {
	return func(s *State) error {
		if s.Epoch == epoch && s.Batch == 0 {
			*into = s.Clone()
		}
		return nil
	}
}

func containsPrefix(ss []string, prefix string) bool {
	return slices.ContainsFunc(ss, func(s string) bool { return len(s) >= len(prefix) && s[:len(prefix)] == prefix })
}

// A state that does not fit the model is refused with an error naming the
// table, not copied half-way.
func TestResumeRejectsMismatchedState(t *testing.T) {
	ds := repoData(t, "nations")
	cfg := Config{Model: "cp2", Rank: 4, Objective: objectives.MLE{}, LearningRate: 1e-2, BatchSize: 300, Epochs: 2, Seed: 1,
		Dtype: tensor.Float64}
	var saved *State
	cfg.SaveState = func(s *State) error { saved = s.Clone(); return nil }
	if _, err := Run(context.Background(), cfg, ds, nil); err != nil {
		t.Fatal(err)
	}
	if saved == nil {
		t.Fatal("no state saved")
	}
	bigger := cfg
	bigger.Rank, bigger.SaveState, bigger.Resume = 5, nil, saved
	if _, err := Run(context.Background(), bigger, ds, nil); !errors.Is(err, ErrStateMismatch) {
		t.Fatalf("a rank-4 state resuming a rank-5 model: err %v, want ErrStateMismatch", err)
	}
	missing := saved.Clone()
	for n := range missing.Params {
		delete(missing.Params, n)
		break
	}
	again := cfg
	again.SaveState, again.Resume = nil, missing
	if _, err := Run(context.Background(), again, ds, nil); !errors.Is(err, ErrStateMismatch) {
		t.Fatalf("a state without one of the parameters: err %v, want ErrStateMismatch", err)
	}
	// Adam's moments cannot continue an Adagrad run, nor can half of them
	// continue an Adam run.
	other := cfg
	other.SaveState, other.Resume, other.Optimizer = nil, saved, Optimizer{Name: "adagrad"}
	if _, err := Run(context.Background(), other, ds, nil); !errors.Is(err, ErrStateMismatch) {
		t.Fatalf("an Adam state resuming an Adagrad run: err %v, want ErrStateMismatch", err)
	}
	half := saved.Clone()
	for n := range half.Slots["adam_v"] {
		delete(half.Slots["adam_v"], n)
		break
	}
	again.Resume = half
	if _, err := Run(context.Background(), again, ds, nil); !errors.Is(err, ErrStateMismatch) {
		t.Fatalf("a state with one of Adam's moments of a parameter: err %v, want ErrStateMismatch", err)
	}
	// Steps taken but no optimiser state at all: Adam would restart its
	// moments and bias correction mid-run.
	none := saved.Clone()
	none.Slots = nil
	again.Resume = none
	if _, err := Run(context.Background(), again, ds, nil); !errors.Is(err, ErrStateMismatch) {
		t.Fatalf("a state of %d steps without optimiser state: err %v, want ErrStateMismatch", none.Steps, err)
	}
}

// cancelAtStart is an Observer that cancels a run as epoch `epoch` starts,
// before its first step: a run stopped that early saves a state without
// optimiser slots (they are created by a parameter's first update).
type cancelAtStart struct {
	epoch  int
	cancel func()
}

func (o *cancelAtStart) EpochStart(epoch, _ int) {
	if epoch == o.epoch {
		o.cancel()
	}
}
func (o *cancelAtStart) Step(int, float64)    {}
func (o *cancelAtStart) EpochEnd(EpochRecord) {}
func (o *cancelAtStart) Log(string)           {}

// A state saved before the first step holds no optimiser state at all; it
// fits every optimiser, and the run resumed from it ends like one never
// stopped. Only a parameter with some but not all of its slots is refused
// (TestResumeRejectsMismatchedState).
func TestResumeBeforeFirstStep(t *testing.T) {
	ds := repoData(t, "nations")
	for _, opt := range []Optimizer{{}, {Name: "adagrad", InitialAccumulator: 0.1}, {Name: "sgd", Momentum: 0.9}} {
		t.Run(opt.name(), func(t *testing.T) {
			cfg := Config{Model: "cp2", Rank: 4, Objective: objectives.MLE{}, Optimizer: opt, LearningRate: 1e-2, BatchSize: 300,
				Epochs: 2, Seed: 1, Dtype: tensor.Float64}
			whole, err := Run(context.Background(), cfg, ds, nil)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var saved *State
			first := cfg
			first.SaveState = func(s *State) error { saved = s.Clone(); return nil }
			if _, err := Run(ctx, first, ds, &cancelAtStart{epoch: 1, cancel: cancel}); !errors.Is(err, context.Canceled) {
				t.Fatalf("first attempt: err %v, want it cancelled", err)
			}
			if saved == nil || saved.Steps != 0 || len(saved.Slots) != 0 {
				t.Fatalf("saved state %+v; want one of 0 steps without optimiser state", saved)
			}
			second := cfg
			second.Resume = saved
			resumed, err := Run(context.Background(), second, ds, nil)
			if err != nil {
				t.Fatalf("resuming from a state saved before the first step: %v", err)
			}
			for _, n := range whole.Model.ParamNames() {
				if !slices.Equal(whole.Model.Param(n).Data().([]float64), resumed.Model.Param(n).Data().([]float64)) {
					t.Errorf("parameter %q differs from the whole run's", n)
				}
			}
		})
	}
}

// StateEvery spaces the saves: a positive interval shorter than a step
// saves at every step boundary inside an epoch as well as after it, and a
// run resumed from such an inside-the-epoch state ends like the whole run;
// an interval longer than the run saves nothing.
func TestStateEverySavesInsideLongEpochs(t *testing.T) {
	ds := repoData(t, "nations")
	cfg := Config{Model: "cp2", Rank: 4, Objective: objectives.MLE{}, LearningRate: 1e-2, BatchSize: 300, Epochs: 3, Seed: 2,
		Dtype: tensor.Float64}
	whole, err := Run(context.Background(), cfg, ds, nil)
	if err != nil {
		t.Fatal(err)
	}

	type at struct{ epoch, batch int }
	var got []at
	var inside *State
	often := cfg
	often.StateEvery = time.Nanosecond
	const write = 60 * time.Millisecond // a slow disk: 5 writes an epoch
	often.SaveState = func(s *State) error {
		got = append(got, at{s.Epoch, s.Batch})
		if s.Epoch == 1 && s.Batch == 4 {
			inside = s.Clone()
		}
		time.Sleep(write)
		return nil
	}
	res, err := Run(context.Background(), often, ds, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range res.Epochs { // 6 steps of a tiny model: milliseconds
		if e.Seconds >= 4*write.Seconds() {
			t.Errorf("epoch %d took %.3f s: the saves inside it (%v) are counted as training", e.Epoch, e.Seconds, 5*write)
		}
	}
	// 6 steps an epoch: states before steps 2..6 of each epoch (Batch 1..5,
	// Epoch the epochs completed) and after epochs 1 and 2 (not the last).
	var want []at
	for e := 0; e < 3; e++ {
		for b := 1; b <= 5; b++ {
			want = append(want, at{e, b})
		}
		if e+1 < 3 {
			want = append(want, at{e + 1, 0})
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("saved at (epoch, batch) %v, want %v", got, want)
	}

	resume := cfg
	resume.Resume = inside
	resumed, err := Run(context.Background(), resume, ds, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range whole.Model.ParamNames() {
		if !slices.Equal(whole.Model.Param(n).Data().([]float64), resumed.Model.Param(n).Data().([]float64)) {
			t.Errorf("parameter %q of the run resumed inside epoch 2 differs from the whole run's", n)
		}
	}

	rare := cfg
	rare.StateEvery = time.Hour
	calls := 0
	rare.SaveState = func(*State) error { calls++; return nil }
	if _, err := Run(context.Background(), rare, ds, nil); err != nil {
		t.Fatal(err)
	}
	if calls != 0 {
		t.Errorf("StateEvery of an hour: SaveState called %d times in a run of seconds, want 0", calls)
	}
}

// A run given fewer epochs with SaveFinal, then continued from its final
// State with more, ends exactly like the run given them all at the start:
// successive halving's promotion, the first rung untested (NoFinalTest)
// but tracking the test LL at its improvements. With early stopping, the
// State saved at the stop resumes to the test alone.
func TestSaveFinalContinuesToMoreEpochs(t *testing.T) {
	ds := repoData(t, "nations")
	for _, c := range []struct {
		name      string
		model     string
		obj       objectives.Objective
		first     int // epochs of the first rung
		patience  int
		wantSaves int // states saved by the first rung
	}{
		{"cp2-mle", "cp2", objectives.MLE{}, 2, 0, 1},
		{"complex-pll", "complex", objectives.PLL{Weights: objectives.Uniform}, 3, 0, 1},
		{"early-stop", "cp2", objectives.MLE{}, 7, 1, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := Config{Model: c.model, Rank: 6, Objective: c.obj, LearningRate: 5e-2, BatchSize: 300, Epochs: 9, Seed: 3,
				Patience: c.patience, Dtype: tensor.Float64, Eval: EvalConfig{LogLikelihood: true}}
			whole, err := Run(context.Background(), cfg, ds, nil)
			if err != nil {
				t.Fatal(err)
			}
			rung := cfg
			rung.Epochs, rung.SaveFinal, rung.StateEvery = c.first, true, time.Hour
			rung.Eval.NoFinalTest = true // as a search's rung: the test LL at improvements is still tracked
			var saved *State
			saves := 0
			rung.SaveState = func(s *State) error { saved, saves = s.Clone(), saves+1; return nil }
			short, err := Run(context.Background(), rung, ds, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, tested := short.Test["mrr"]; tested {
				t.Errorf("the rung with NoFinalTest was tested: %v", short.Test)
			}
			if _, ok := whole.Test["ll_at_best_ll"]; !ok && c.model != "complex" { // energy-based: no LL
				t.Fatalf("the whole run reports no ll_at_best_ll: %v", whole.Test)
			}
			if saves != c.wantSaves || saved == nil || saved.Epoch != lastEpochOf(short.Epochs) || saved.Batch != 0 {
				t.Fatalf("%d states saved, the last %+v; want %d, after the last epoch %d", saves, saved, c.wantSaves, lastEpochOf(short.Epochs))
			}
			next := cfg
			next.Resume = saved
			continued, err := Run(context.Background(), next, ds, nil)
			if err != nil {
				t.Fatal(err)
			}
			sameAsWhole(t, whole, continued)
			if c.patience > 0 && lastEpochOf(short.Epochs) >= c.first {
				t.Errorf("the first rung stopped at epoch %d, not before its %d: the early-stop case tests nothing", lastEpochOf(short.Epochs), c.first)
			}
		})
	}
}

func lastEpochOf(es []EpochRecord) int {
	if len(es) == 0 {
		return 0
	}
	return es[len(es)-1].Epoch
}
