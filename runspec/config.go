package runspec

import (
	"slices"

	"gekc/grid"
	"gekc/metrics"
	"gekc/objectives"
	"gekc/resultsdir"
	"gekc/train"
)

// TrainConfig translates a grid run into the configuration of train.Run:
// resultsdir.ModelConfig, which opening the run again builds its model
// from, and how it trains and is evaluated.
func TrainConfig(spec grid.RunSpec) (train.Config, error) {
	obj, err := objectives.Parse(spec.Objective, objectives.Weights{Subject: spec.PLLWeights.Subject,
		Relation: spec.PLLWeights.Relation, Object: spec.PLLWeights.Object})
	if err != nil {
		return train.Config{}, err
	}
	if spec.N3 != 0 || spec.F2 != 0 {
		obj = objectives.Regularized{Objective: obj, N3: spec.N3, F2: spec.F2}
	}
	tie, err := metrics.ParseTiePolicy(spec.Eval.TiePolicy)
	if err != nil {
		return train.Config{}, err
	}
	cfg, err := resultsdir.ModelConfig(spec)
	if err != nil {
		return train.Config{}, err
	}
	ll := slices.Contains(spec.Eval.Metrics, "ll")
	ece := slices.Contains(spec.Eval.Metrics, "ece")
	var semK, semUnfilteredK []int
	if slices.Contains(spec.Eval.Metrics, "sem") {
		semK = spec.Eval.SemK
	}
	if slices.Contains(spec.Eval.Metrics, "sem_unfiltered") {
		semUnfilteredK = spec.Eval.SemK
	}
	cfg.Objective = obj
	cfg.Optimizer = train.Optimizer{Name: spec.Optimizer, Momentum: spec.Momentum, InitialAccumulator: spec.InitialAccumulator}
	cfg.LearningRate, cfg.BatchSize, cfg.Epochs, cfg.Patience = spec.LearningRate, spec.BatchSize, spec.Epochs, spec.Patience
	cfg.KeepBestLL, cfg.Constrained, cfg.Processes = resultsdir.SamplesFromLL(spec), spec.Constraints == "domain", spec.Processes
	cfg.Eval = train.EvalConfig{TiePolicy: tie, Hits: spec.Eval.Hits, BatchSize: spec.Eval.BatchSize,
		Select: spec.Eval.Select, MinDelta: spec.Eval.MinDelta, LLMinDelta: spec.Eval.LLMinDelta, StopOnLL: spec.Eval.Stop == "select_and_ll",
		Every: spec.Eval.Every, MaxValid: spec.Eval.MaxValid, Negatives: spec.Eval.Negatives, LogLikelihood: ll, SemK: semK, ECE: ece,
		SemUnfilteredK: semUnfilteredK, Relations: slices.Contains(spec.Eval.Metrics, "relation")}
	return cfg, nil
}
