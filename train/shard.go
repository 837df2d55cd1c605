package train

import (
	"context"
	"errors"
	"fmt"

	"gekc/dist"
	"gekc/graph"
	"gekc/kg"
	"gekc/models"
)

// stepper is one optimisation step of a run: one process's (Stepper) or
// one process's part of a sharded step (shardedStepper).
type stepper interface {
	Step(batch []kg.Triple) (float64, error)
	Optimizer() graph.Optimizer
}

// shardedStepper is a dist.Stepper reporting divergence as Stepper does.
type shardedStepper struct{ *dist.Stepper }

func (s shardedStepper) Step(batch []kg.Triple) (float64, error) {
	loss, err := s.Stepper.Step(batch)
	if errors.Is(err, dist.ErrDiverged) {
		err = ErrDiverged
	}
	return loss, err
}

// newShard builds this process's part of a sharded run's step (see
// Config.Shard).
func newShard(cfg Config, m *models.Model, dom *models.Domain, opt graph.Optimizer) (*dist.Stepper, error) {
	switch {
	case dom != nil:
		return nil, fmt.Errorf("train: %s: sharded runs do not take domain constraints yet", cfg.Model)
	case cfg.Resume != nil:
		return nil, fmt.Errorf("train: %s: sharded runs do not resume from a state yet", cfg.Model)
	}
	st, err := dist.NewStepperFrom(cfg.Shard, m, cfg.Objective, cfg.BatchSize, opt)
	if err != nil {
		return nil, fmt.Errorf("train: sharding %s over %d processes: %w", cfg.Model, cfg.Shard.Size(), err)
	}
	return st, nil
}

// stopped returns the context's error when the run is to stop before its
// next step. The processes of a sharded run stop together: when any of
// them is told to, all are, at the same step boundary.
func (r *run) stopped() error {
	err := r.ctx.Err()
	if r.shard == nil {
		return err
	}
	any, serr := r.shard.AnyStops(err != nil)
	switch {
	case serr != nil:
		return serr
	case any && err == nil:
		return context.Canceled
	}
	return err
}
