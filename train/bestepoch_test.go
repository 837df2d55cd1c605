package train

import (
	"context"
	"maps"
	"slices"
	"testing"

	"gekc/kg"
	"gekc/metrics"
	"gekc/models"
	"gekc/objectives"
)

// The best-epoch contract: a run whose validation metric peaks before its
// last epoch returns the parameters it had after BestEpoch, and reports as
// test and validation metrics exactly what those parameters score when
// evaluated afresh. The parameters after each epoch are captured through
// SaveState, which sees the live ones.
func TestBestEpochContract(t *testing.T) {
	ds := typedTiny(t)
	for _, c := range []struct {
		model string
		obj   objectives.Objective
		every int
	}{
		{"cp2", objectives.MLE{}, 1},
		{"complex+", objectives.PLL{Weights: objectives.Uniform}, 1},
		{"complex", objectives.PLL{Weights: objectives.Uniform}, 2},
	} {
		t.Run(c.model, func(t *testing.T) {
			cfg := Config{Model: c.model, Rank: 3, Objective: c.obj, LearningRate: 0.2, BatchSize: 8, Epochs: 60, Patience: 2, Seed: 3,
				Eval: EvalConfig{Hits: []int{1, 3}, BatchSize: 4, Select: "mrr", Every: c.every, LogLikelihood: true}}
			after := map[int]map[string][]float32{} // epoch → parameters
			cfg.SaveState = func(s *State) error {
				p := map[string][]float32{}
				for n, x := range s.Params {
					p[n] = slices.Clone(x.Data().([]float32))
				}
				after[s.Epoch] = p
				return nil
			}
			res, err := Run(context.Background(), cfg, ds, nil)
			if err != nil {
				t.Fatal(err)
			}
			last := res.Epochs[len(res.Epochs)-1].Epoch
			if res.Status != Finished || res.BestEpoch >= last {
				t.Fatalf("status %s, best epoch %d of %d: the test needs a run that peaks early", res.Status, res.BestEpoch, last)
			}
			t.Logf("best epoch %d, stopped after %d", res.BestEpoch, last)
			best, ok := after[res.BestEpoch]
			if !ok {
				t.Fatalf("no parameters captured after epoch %d", res.BestEpoch)
			}
			for _, n := range res.Model.ParamNames() {
				if !slices.Equal(res.Model.Param(n).Data().([]float32), best[n]) {
					t.Errorf("returned %s differs from its value after the best epoch %d", n, res.BestEpoch)
				}
			}

			// The best epoch's parameters in a fresh model, evaluated afresh.
			sz := models.Sizes{Entities: ds.Entities.Len(), Relations: ds.Relations.Len(), Rank: cfg.Rank}
			m, err := models.New(c.model, sz, models.Options{Seed: 99})
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range m.ParamNames() {
				copy(m.Param(n).Data().([]float32), best[n])
			}
			ev, err := metrics.NewEvaluator(m, cfg.Eval.BatchSize) // the run's programs, batch for batch
			if err != nil {
				t.Fatal(err)
			}
			filter := kg.NewFilter(ds.Train, ds.Valid, ds.Test)
			valid, test := splitsOf(ds)
			wantTest, err := evaluate(evaluators{ev, ev}, test, filter, ds.Schema, cfg.Eval, false)
			if err != nil {
				t.Fatal(err)
			}
			wantValid, err := evaluate(evaluators{ev, ev}, valid, filter, ds.Schema, cfg.Eval, true)
			if err != nil {
				t.Fatal(err)
			}
			// The test log-likelihood at the best validation log-likelihood
			// is that of the parameters after that epoch, evaluated afresh.
			if withLL := c.model != "complex"; withLL {
				llParams, ok := after[res.LL.Epoch]
				if !ok {
					t.Fatalf("no parameters captured after epoch %d, the best log-likelihood's", res.LL.Epoch)
				}
				for _, n := range m.ParamNames() {
					copy(m.Param(n).Data().([]float32), llParams[n])
				}
				ll, err := ev.LogLikelihood(test.triples)
				if err != nil {
					t.Fatal(err)
				}
				wantTest["ll_at_best_ll"] = ll
				t.Logf("best log-likelihood at epoch %d", res.LL.Epoch)
			}
			if !maps.Equal(res.Test, wantTest) {
				t.Errorf("test metrics %v; the best epoch's parameters score %v", res.Test, wantTest)
			}
			if !maps.Equal(res.Valid, wantValid) {
				t.Errorf("validation metrics %v; the best epoch's parameters score %v", res.Valid, wantValid)
			}
			for _, e := range res.Epochs {
				if e.Epoch == res.BestEpoch && !maps.Equal(e.Valid, wantValid) {
					t.Errorf("epoch %d recorded validation %v; its parameters score %v", e.Epoch, e.Valid, wantValid)
				}
			}
		})
	}
}

// A distilled run whose fine-tuning only makes validation worse keeps the
// model as converted: best epoch 0, its parameters returned unchanged and
// their own test metrics reported.
func TestDistilledModelCompetesWithFineTuning(t *testing.T) {
	ds := typedTiny(t)
	cfg := Config{Model: "cp2", Rank: 3, Objective: objectives.MLE{}, LearningRate: 0.2, BatchSize: 8, Epochs: 30, Patience: 3, Seed: 3,
		Eval: EvalConfig{Hits: []int{1}, LogLikelihood: true}}
	src, err := Run(context.Background(), cfg, ds, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Init = func(m *models.Model) error {
		for _, n := range m.ParamNames() {
			copy(m.Param(n).Data().([]float32), src.Model.Param(n).Data().([]float32))
		}
		return nil
	}
	cfg.LearningRate, cfg.Epochs, cfg.Eval.Select = 3, 3, "ll" // steps far too large: every epoch validates worse
	res, err := Run(context.Background(), cfg, ds, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.BestEpoch != 0 {
		t.Fatalf("best epoch %d: fine-tuning improved, the test needs it not to (%v)", res.BestEpoch, res.Epochs)
	}
	for _, n := range res.Model.ParamNames() {
		if !slices.Equal(res.Model.Param(n).Data().([]float32), src.Model.Param(n).Data().([]float32)) {
			t.Errorf("returned %s is not the converted model's", n)
		}
	}
	// The metrics before training have no log-likelihood track.
	srcBefore := maps.Clone(src.Test)
	delete(srcBefore, "ll_at_best_ll")
	if !maps.Equal(res.Test, src.Test) || !maps.Equal(res.Initial, srcBefore) {
		t.Errorf("test metrics %v, initial %v; the converted model scores %v", res.Test, res.Initial, src.Test)
	}
}
