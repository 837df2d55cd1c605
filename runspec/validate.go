package runspec

import (
	"errors"
	"fmt"

	"gekc/grid"
	"gekc/models"
	"gekc/train"
)

// Validate is the Validator of the command: grid.DefaultValidator, then
// what only the models registry knows (model names, which semantics admit
// MLE, a log-likelihood, domain constraints).
func Validate(s grid.RunSpec) error { return grid.Chain(grid.DefaultValidator, validateModels)(s) }

// validateModels asks the models registry what the grid language cannot
// know.
func validateModels(s grid.RunSpec) error {
	_, sem, err := models.Lookup(s.Model)
	if err != nil {
		return err
	}
	if s.Objective == "mle" && sem == models.Energy {
		return fmt.Errorf("model %q with objective mle: %w; use pll, or a non-negative (+) or squared (2) model", s.Model, models.ErrIntractable)
	}
	if s.SampleFrom == "ll" && sem == models.Energy {
		return fmt.Errorf("model %q with sample_from = \"ll\": it is energy-based, with no log-likelihood to validate and no exact sampler", s.Model)
	}
	if s.Eval.Select == "ll" && sem == models.Energy {
		return fmt.Errorf("model %q cannot select on the log-likelihood (eval.select = \"ll\"): it is energy-based", s.Model)
	}
	if (s.N3 != 0 || s.F2 != 0) && sem == models.NonNegative {
		return fmt.Errorf("model %q with n3/f2: its parameters are log-values, which the Lp regularisers do not apply to; regularise an energy-based or squared (2) model", s.Model)
	}
	if s.Constraints == "domain" && sem == models.Energy {
		return fmt.Errorf("model %q with constraints = \"domain\": %w; constrain a non-negative (+) or squared (2) model", s.Model, models.ErrIntractable)
	}
	if s.Processes > 1 {
		if err := Shardable(s); err != nil {
			return fmt.Errorf("processes = %d: %w", s.Processes, err)
		}
	}
	return nil
}

// Shardable says why a run cannot be split over processes (package dist),
// or nil: what train.Shardable refuses, and distillation and samples,
// which read the whole model.
func Shardable(s grid.RunSpec) error {
	cfg, err := TrainConfig(s)
	if err != nil {
		return err
	}
	if err := train.Shardable(cfg); err != nil {
		return err
	}
	switch {
	case s.DistillFrom != "":
		return errors.New("distill_from: sharded runs do not take distillation yet")
	case s.Samples > 0:
		return errors.New("samples: sampling from a sharded model is not built yet")
	}
	return nil
}
