package train

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"slices"
	"testing"

	"gekc/kg"
	"gekc/objectives"

	"gorgonia.org/tensor"
)

// scriptMRRAndLL makes Run's validations return the (MRR, log-likelihood)
// pairs in script, in order.
func scriptMRRAndLL(t *testing.T, script [][2]float64) *int {
	t.Helper()
	real := validationMetrics
	t.Cleanup(func() { validationMetrics = real })
	calls := 0
	validationMetrics = func(evaluators, split, *kg.Filter, *kg.Schema, EvalConfig) (map[string]float64, error) {
		if calls >= len(script) {
			t.Fatalf("validation %d: the script has %d", calls+1, len(script))
		}
		calls++
		return map[string]float64{"mrr": script[calls-1][0], "ll": script[calls-1][1]}, nil
	}
	return &calls
}

// The log-likelihood track and StopOnLL, on scripted validations worked out
// by hand. The MRR rises until epoch 6 and then stalls; the log-likelihood
// peaks at epoch 2 (PLL's pattern) in one script and keeps rising until
// epoch 9 in the other (MLE's).
func TestStoppingOnMRRAndLL(t *testing.T) {
	mrr := []float64{0.10, 0.20, 0.25, 0.28, 0.30, 0.31, 0.30, 0.305, 0.31, 0.30, 0.29, 0.28, 0.27, 0.26}
	llPeakEarly := []float64{-20, -17, -17.5, -18, -18.2, -18.4, -18.5, -18.6, -18.7, -18.8, -18.9, -19, -19.1, -19.2}
	nan := math.NaN()
	llDiverging := []float64{-20, -19, -18, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan}
	llRising := []float64{-20, -19, -18.5, -18.2, -18.0, -17.9, -17.85, -17.8, -17.79, -17.795, -17.8, -17.81, -17.82, -17.83}
	for _, c := range []struct {
		name                   string
		ll                     []float64
		eval                   EvalConfig
		wantStop, wantBest     int
		wantLLEpoch, wantSince int
	}{
		// Patience 3 after the best MRR at epoch 6: epochs 7, 8, 9.
		{"MRR alone", llRising, EvalConfig{}, 9, 6, 9, 0},
		// The paper's rule waits for more than 3 validations without a
		// rise. The early log-likelihood peak has long stalled: the MRR
		// decides, at its 4th validation without a rise.
		{"both, LL stalled early", llPeakEarly, EvalConfig{StopOnLL: true}, 10, 6, 2, 8},
		// The log-likelihood improves until epoch 9: four more epochs.
		{"both, LL rising", llRising, EvalConfig{StopOnLL: true}, 13, 6, 9, 4},
		// A rise of the log-likelihood under 0.02 nats does not count:
		// epochs 7 (+0.05), 8 (+0.05) count, 9 (+0.01) does not.
		{"both, LL min delta", llRising, EvalConfig{StopOnLL: true, LLMinDelta: 0.02}, 12, 6, 8, 4},
		// A NaN log-likelihood is no rise: it cannot keep the run going.
		{"both, LL NaN", llDiverging, EvalConfig{StopOnLL: true}, 10, 6, 3, 7},
		// Under an MRR min delta of 0.015 epoch 6 (+0.01) is no
		// improvement: the best is epoch 5 and the stop comes at 8.
		{"MRR min delta", llRising, EvalConfig{MinDelta: 0.015}, 8, 5, 8, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			script := make([][2]float64, len(mrr))
			for i := range mrr {
				script[i] = [2]float64{mrr[i], c.ll[i]}
			}
			scriptMRRAndLL(t, script)
			cfg := Config{Model: "cp2", Rank: 2, Objective: objectives.MLE{}, LearningRate: 0.01, BatchSize: 16, Epochs: len(mrr),
				Patience: 3, Seed: 1, Eval: c.eval}
			cfg.Eval.SkipTest = true
			res, err := Run(context.Background(), cfg, typedTiny(t), nil)
			if err != nil {
				t.Fatal(err)
			}
			if stop := res.Epochs[len(res.Epochs)-1].Epoch; stop != c.wantStop {
				t.Errorf("stopped after epoch %d, want %d", stop, c.wantStop)
			}
			if res.BestEpoch != c.wantBest {
				t.Errorf("best epoch %d, want %d", res.BestEpoch, c.wantBest)
			}
			if res.LL.Epoch != c.wantLLEpoch || res.LL.Best != c.ll[c.wantLLEpoch-1] {
				t.Errorf("log-likelihood track %+v, want epoch %d (%v)", res.LL, c.wantLLEpoch, c.ll[c.wantLLEpoch-1])
			}
			if !math.IsNaN(res.LL.Test) {
				t.Errorf("test log-likelihood %v with SkipTest", res.LL.Test)
			}
			if got := c.wantStop - c.wantLLEpoch; res.LL.Since != got {
				t.Errorf("%d validations since the best log-likelihood, want %d", res.LL.Since, got)
			}
		})
	}
}

// The test log-likelihood reported at the best validation log-likelihood is
// that of the parameters the run had at that epoch: a second run, trained
// for exactly that many epochs and selecting on the log-likelihood (so its
// last epoch is its best), reports the same test log-likelihood. The run is
// chosen so that the two selections disagree (here the log-likelihood
// peaks at epoch 5, the MRR at 7), else the test would not tell the two
// numbers apart.
func TestTestLLAtBestLL(t *testing.T) {
	ds := typedTiny(t)
	cfg := Config{Model: "complex2", Rank: 3, Objective: objectives.PLL{Weights: objectives.Weights{Subject: 1, Object: 1, Relation: 1}},
		LearningRate: 0.1, BatchSize: 8, Epochs: 15, Seed: 1, Eval: EvalConfig{LogLikelihood: true}}
	res, err := Run(context.Background(), cfg, ds, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := res.Test["ll_at_best_ll"]
	if !ok || res.LL.Epoch < 1 {
		t.Fatalf("no test log-likelihood at the best validation one: track %+v, test %v", res.LL, res.Test)
	}
	if res.LL.Epoch == res.BestEpoch {
		t.Fatalf("the best MRR and the best log-likelihood are both at epoch %d: pick a run where they differ", res.BestEpoch)
	}
	again := cfg
	again.Epochs = res.LL.Epoch
	again.Eval.Select = "ll"
	ref, err := Run(context.Background(), again, ds, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ref.BestEpoch != res.LL.Epoch {
		t.Fatalf("the rerun selected epoch %d, want its last, %d", ref.BestEpoch, res.LL.Epoch)
	}
	if want := ref.Test["ll"]; math.Abs(got-want) > 1e-9*math.Abs(want) {
		t.Errorf("test log-likelihood at the best validation one %v, want %v (epoch %d)", got, want, res.LL.Epoch)
	}
	if got == res.Test["ll"] {
		t.Errorf("it equals the test log-likelihood of the MRR-selected epoch %d", res.BestEpoch)
	}
}

// With KeepBestLL a run also returns the parameters of its best validation
// log-likelihood: those a rerun selecting on the log-likelihood ends with,
// bit for bit; kept across a stop and resume too. A state that did not keep
// them (written without KeepBestLL) gives none, and a note says why. The
// configuration is TestTestLLAtBestLL's: the two selections disagree.
func TestKeepBestLL(t *testing.T) {
	ds := typedTiny(t)
	cfg := Config{Model: "complex2", Rank: 3, Objective: objectives.PLL{Weights: objectives.Weights{Subject: 1, Object: 1, Relation: 1}},
		LearningRate: 0.1, BatchSize: 8, Epochs: 15, Seed: 1, Eval: EvalConfig{LogLikelihood: true}, KeepBestLL: true}
	params := func(m map[string]*tensor.Dense) map[string][]float32 {
		out := map[string][]float32{}
		for n, p := range m {
			out[n] = slices.Clone(p.Data().([]float32))
		}
		return out
	}
	ofModel := func(res *Result) map[string][]float32 {
		out := map[string][]float32{}
		for _, n := range res.Model.ParamNames() {
			out[n] = slices.Clone(res.Model.Param(n).Data().([]float32))
		}
		return out
	}
	var saved *State
	first := cfg
	first.SaveState = keepStateAfter(6, &saved)
	res, err := Run(context.Background(), first, ds, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.BestLLParams == nil || res.LL.Epoch < 1 || res.LL.Epoch == res.BestEpoch {
		t.Fatalf("best-LL parameters kept: %v; LL epoch %d, selected epoch %d (want two different epochs)", res.BestLLParams != nil, res.LL.Epoch, res.BestEpoch)
	}
	if saved == nil || saved.BestLLParams == nil || saved.LL == nil || saved.LL.Epoch != res.LL.Epoch {
		t.Fatalf("the state after epoch 6 does not hold the best-LL parameters of epoch %d", res.LL.Epoch)
	}
	again := cfg
	again.Epochs, again.Eval.Select, again.KeepBestLL = res.LL.Epoch, "ll", false
	ref, err := Run(context.Background(), again, ds, nil)
	if err != nil {
		t.Fatal(err)
	}
	kept, selected := params(res.BestLLParams), ofModel(res)
	if want := ofModel(ref); !reflect.DeepEqual(kept, want) {
		t.Errorf("the kept parameters differ from those the rerun selected at epoch %d", res.LL.Epoch)
	}
	if reflect.DeepEqual(kept, selected) {
		t.Errorf("the kept parameters equal the MRR-selected ones (epoch %d)", res.BestEpoch)
	}
	if m := res.Memory.Best; m != 2*res.Memory.Parameters {
		t.Errorf("memory of the best copies %d, want two copies of the parameters, %d", m, 2*res.Memory.Parameters)
	}

	resumedCfg := cfg
	resumedCfg.Resume = saved.Clone()
	resumed, err := Run(context.Background(), resumedCfg, ds, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resumed.BestLLParams == nil || !reflect.DeepEqual(params(resumed.BestLLParams), kept) {
		t.Errorf("resumed after epoch 6: best-LL parameters differ from the uninterrupted run's")
	}
	if !resumed.UseBestLLParams() || !reflect.DeepEqual(ofModel(resumed), kept) {
		t.Errorf("UseBestLLParams did not load them into the model")
	}

	// Resumed from a state without them, the run cannot know them, nor can
	// a state it saves claim them: resumed again from its state after
	// epoch 8, it still has none.
	without := saved.Clone()
	without.BestLLParams = nil
	resumedCfg.Resume = without
	var later *State
	resumedCfg.SaveState = keepStateAfter(8, &later)
	blind, err := Run(context.Background(), resumedCfg, ds, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("the parameters at the best validation log-likelihood (epoch %d) were not kept: the run resumed from a state that did not keep them", res.LL.Epoch)
	if blind.BestLLParams != nil || !slices.Contains(blind.Notes, want) || blind.UseBestLLParams() {
		t.Errorf("resumed from a state without them: kept %v, notes %q", blind.BestLLParams != nil, blind.Notes)
	}
	if later == nil || later.BestLLParams != nil {
		t.Fatalf("the state after epoch 8 of the run resumed without them holds best-LL parameters (or none was saved)")
	}
	resumedCfg.Resume, resumedCfg.SaveState = later, nil
	twice, err := Run(context.Background(), resumedCfg, ds, nil)
	if err != nil {
		t.Fatal(err)
	}
	if twice.BestLLParams != nil || !slices.Contains(twice.Notes, want) {
		t.Errorf("resumed twice: kept %v, notes %q", twice.BestLLParams != nil, twice.Notes)
	}

	// A state without a log-likelihood track (written before runs kept
	// one) gives none either, even if the log-likelihood rises after it.
	untracked := saved.Clone()
	untracked.LL, untracked.BestLLParams = nil, nil
	resumedCfg.Resume = untracked
	old, err := Run(context.Background(), resumedCfg, ds, nil)
	if err != nil {
		t.Fatal(err)
	}
	if old.BestLLParams != nil || !slices.Contains(old.Notes, "the parameters at the best validation log-likelihood were not kept: the run resumed from a state written before runs tracked it") {
		t.Errorf("resumed from a state without an LL track: kept %v, notes %q", old.BestLLParams != nil, old.Notes)
	}
}

// A run resumed from a state without a log-likelihood track (written before
// runs kept one) does not report a test log-likelihood at a best epoch it
// cannot know, and says so.
func TestResumeWithoutLLTrack(t *testing.T) {
	ds := typedTiny(t)
	cfg := Config{Model: "cp2", Rank: 2, Objective: objectives.MLE{}, LearningRate: 0.05, BatchSize: 8, Epochs: 4, Seed: 1,
		Eval: EvalConfig{LogLikelihood: true}}
	var saved *State
	first := cfg
	first.SaveState = keepStateAfter(2, &saved)
	full, err := Run(context.Background(), first, ds, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := full.Test["ll_at_best_ll"]; !ok || saved == nil || saved.LL == nil {
		t.Fatalf("the uninterrupted run: test %v, saved state %+v", full.Test, saved)
	}
	resumed := *saved.Clone()
	resumed.LL = nil
	cfg.Resume = &resumed
	res, err := Run(context.Background(), cfg, ds, nil)
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := res.Test["ll_at_best_ll"]; ok {
		t.Errorf("reported %v without knowing the best epoch", v)
	}
	if res.LL.Epoch != -1 {
		t.Errorf("track %+v, want none", res.LL)
	}
	if res.Test["mrr"] != full.Test["mrr"] || res.Test["ll"] != full.Test["ll"] {
		t.Errorf("resumed test metrics %v, want the uninterrupted run's %v", res.Test, full.Test)
	}
	noted := false
	for _, n := range res.Notes {
		noted = noted || n == "no test log-likelihood at the best validation log-likelihood: the run resumed from a state written before runs tracked it"
	}
	if !noted {
		t.Errorf("notes %q do not say why", res.Notes)
	}
}

// The paper's rule when the log-likelihood stalls, then rises again, then
// stalls: the rise restarts its count. The MRR peaks at epoch 2; the
// log-likelihood rises at 2, stalls at 3 and 4, rises at 5. Patience 3:
// the MRR has been stalled more than 3 validations from epoch 6, the
// log-likelihood only from epoch 9 (a count not restarted at epoch 5 would
// stop the run at 7).
func TestStoppingLLStallsThenRises(t *testing.T) {
	mrr := []float64{0.10, 0.30, 0.29, 0.28, 0.27, 0.26, 0.25, 0.24, 0.23, 0.22, 0.21, 0.20}
	ll := []float64{-20, -19, -19.5, -19.6, -18.5, -18.6, -18.7, -18.8, -18.9, -19, -19.1, -19.2}
	script := make([][2]float64, len(mrr))
	for i := range mrr {
		script[i] = [2]float64{mrr[i], ll[i]}
	}
	scriptMRRAndLL(t, script)
	cfg := Config{Model: "cp2", Rank: 2, Objective: objectives.MLE{}, LearningRate: 0.01, BatchSize: 16, Epochs: len(mrr),
		Patience: 3, Seed: 1, Eval: EvalConfig{StopOnLL: true, SkipTest: true}}
	res, err := Run(context.Background(), cfg, typedTiny(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if stop := res.Epochs[len(res.Epochs)-1].Epoch; stop != 9 || res.BestEpoch != 2 || res.LL.Epoch != 5 || res.LL.Since != 4 {
		t.Errorf("stopped after epoch %d (best %d), log-likelihood track %+v; want 9, 2, epoch 5 and 4 since", stop, res.BestEpoch, res.LL)
	}
}

// A run selected on the validation LL keeps no second copy: its selected
// parameters are the best-LL ones. So does an energy model (no LL) and a
// run without the LL among its metrics.
func TestKeepBestLLOnlyWhereItDiffers(t *testing.T) {
	ds := typedTiny(t)
	base := Config{Model: "complex2", Rank: 3, Objective: objectives.MLE{}, LearningRate: 0.1, BatchSize: 8, Epochs: 3, Seed: 1,
		Eval: EvalConfig{LogLikelihood: true, Select: "ll"}, KeepBestLL: true}
	energy := base
	energy.Model, energy.Objective, energy.Eval.Select = "complex", objectives.PLL{Weights: objectives.Weights{Subject: 1, Object: 1}}, "mrr"
	noLL := base
	noLL.Eval.LogLikelihood, noLL.Eval.Select = false, "mrr"
	for name, cfg := range map[string]Config{"select ll": base, "energy": energy, "no ll metric": noLL} {
		mem, err := EstimateMemory(cfg, DataSizes{Entities: ds.Entities.Len(), Relations: ds.Relations.Len(), Train: len(ds.Train)})
		if err != nil {
			t.Fatal(err)
		}
		if mem.Best != mem.Parameters {
			t.Errorf("%s: estimate holds %d bytes of best copies, want one copy (%d)", name, mem.Best, mem.Parameters)
		}
		res, err := Run(context.Background(), cfg, ds, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.BestLLParams != nil || res.Memory.Best != res.Memory.Parameters {
			t.Errorf("%s: kept best-LL parameters %v, %d bytes of best copies; want none, one copy", name, res.BestLLParams != nil, res.Memory.Best)
		}
	}
}
