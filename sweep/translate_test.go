package sweep

import (
	"testing"
	"time"

	"gekc/grid"
	"gekc/metrics"
	"gekc/objectives"
	"gekc/train"

	"gorgonia.org/tensor"
)

// A grid run's every key reaches the training configuration.
func TestTrainConfigCarriesEveryKey(t *testing.T) {
	spec := grid.DefaultRunSpec()
	spec.Dataset, spec.Model, spec.Rank, spec.RelationRank = "d", "tucker2", 6, 3
	spec.Objective, spec.PLLWeights = "pll", grid.PLLWeights{Subject: 0.5, Relation: 2, Object: 1.5}
	spec.LearningRate, spec.BatchSize, spec.Epochs, spec.Patience, spec.Seed = 0.03, 77, 9, 4, 11
	spec.InitScale, spec.DType, spec.Constraints = 0.2, "float64", "domain"
	spec.Optimizer, spec.Momentum, spec.InitialAccumulator = "sgd", 0.5, 0.25
	spec.Eval = grid.EvalSpec{TiePolicy: "optimistic", Hits: []int{2, 7}, BatchSize: 13, Metrics: []string{"mrr", "ece", "sem"},
		Select: "mrr", Stop: "select_and_ll", MinDelta: 2e-4, LLMinDelta: 0.02, Every: 3, MaxValid: 50, SemK: []int{1, 4}}
	cfg, err := TrainConfig(spec)
	must(t, err)
	want := objectives.PLL{Weights: objectives.Weights{Subject: 0.5, Relation: 2, Object: 1.5}}
	if cfg.Objective != want {
		t.Errorf("objective %#v, want %#v", cfg.Objective, want)
	}
	for _, c := range []struct {
		key       string
		got, want any
	}{
		{"model", cfg.Model, "tucker2"}, {"rank", cfg.Rank, 6}, {"relation_rank", cfg.RelationRank, 3},
		{"learning_rate", cfg.LearningRate, 0.03}, {"batch_size", cfg.BatchSize, 77}, {"epochs", cfg.Epochs, 9},
		{"patience", cfg.Patience, 4}, {"seed", cfg.Seed, uint64(11)}, {"init_scale", cfg.InitScale, 0.2},
		{"dtype", cfg.Dtype, tensor.Float64}, {"constraints", cfg.Constrained, true},
		{"optimizer, momentum, initial_accumulator", cfg.Optimizer, train.Optimizer{Name: "sgd", Momentum: 0.5, InitialAccumulator: 0.25}},
		{"eval.tie_policy", cfg.Eval.TiePolicy, metrics.Optimistic}, {"eval.hits", len(cfg.Eval.Hits) == 2 && cfg.Eval.Hits[1] == 7, true},
		{"eval.batch_size", cfg.Eval.BatchSize, 13}, {"eval.select", cfg.Eval.Select, "mrr"}, {"eval.every", cfg.Eval.Every, 3},
		{"eval.max_valid", cfg.Eval.MaxValid, 50}, {"eval.metrics ll", cfg.Eval.LogLikelihood, false},
		{"eval.stop", cfg.Eval.StopOnLL, true}, {"eval.min_delta", cfg.Eval.MinDelta, 2e-4}, {"eval.ll_min_delta", cfg.Eval.LLMinDelta, 0.02},
		{"eval.metrics ece", cfg.Eval.ECE, true}, {"eval.sem_k", len(cfg.Eval.SemK) == 2 && cfg.Eval.SemK[1] == 4, true},
	} {
		if c.got != c.want {
			t.Errorf("%s: %v, want %v", c.key, c.got, c.want)
		}
	}
	spec.DType, spec.Constraints, spec.Objective = "float32", "none", "mle"
	spec.Eval.Metrics, spec.Eval.TiePolicy, spec.Eval.Stop = []string{"mrr", "ll"}, "realistic", "select"
	cfg, err = TrainConfig(spec)
	must(t, err)
	if cfg.Dtype != tensor.Float32 || cfg.Constrained || cfg.Objective != (objectives.MLE{}) || !cfg.Eval.LogLikelihood ||
		cfg.Eval.ECE || cfg.Eval.SemK != nil || cfg.Eval.TiePolicy != metrics.Realistic || cfg.Eval.StopOnLL {
		t.Errorf("second spec: %+v", cfg)
	}
	spec.N3, spec.F2 = 0.05, 0.001
	cfg, err = TrainConfig(spec)
	must(t, err)
	if want := (objectives.Regularized{Objective: objectives.MLE{}, N3: 0.05, F2: 0.001}); cfg.Objective != want {
		t.Errorf("n3, f2: objective %#v, want %#v", cfg.Objective, want)
	}
}

// A distilled run records epoch 0, the validation of the converted model:
// it is not a trained epoch, in results.tsv's epochs nor in
// seconds_per_epoch.
func TestEpochZeroIsNotATrainedEpoch(t *testing.T) {
	s := &Sweep{jobs: 1}
	rec := &Record{ID: "x", StartedAt: time.Now().UTC()}
	s.completeRecord(rec, &Outcome{Status: train.Finished, BestEpoch: 0, Epochs: []train.EpochRecord{
		{Epoch: 0, Seconds: 0, Valid: map[string]float64{"mrr": 0.5}},
		{Epoch: 1, Seconds: 3}, {Epoch: 2, Seconds: 5},
	}}, nil)
	if rec.SecondsPerEpoch != 4 {
		t.Errorf("seconds_per_epoch %v, want 4", rec.SecondsPerEpoch)
	}
	row := rowFromRecord(rec)
	if row["epochs"] != "2" || row["best_epoch"] != "0" || row["seconds_per_epoch"] != "4.00" {
		t.Errorf("row: epochs %q, best_epoch %q, seconds_per_epoch %q; want 2, 0, 4.00", row["epochs"], row["best_epoch"], row["seconds_per_epoch"])
	}
}
