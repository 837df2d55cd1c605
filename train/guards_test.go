package train

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"gekc/kg"
	"gekc/models"
	"gekc/objectives"
)

// EvalConfig.MaxValid validates on a seeded subset of that many distinct
// validation triples: the same subset after every epoch and in every run
// with the same seed.
func TestMaxValidValidatesASeededSubset(t *testing.T) {
	ds := typedTiny(t)
	real := validationMetrics
	t.Cleanup(func() { validationMetrics = real })
	var seen [][]kg.Triple
	validationMetrics = func(_ evaluators, sp split, _ *kg.Filter, _ *kg.Schema, _ EvalConfig) (map[string]float64, error) {
		seen = append(seen, slices.Clone(sp.triples))
		return map[string]float64{"mrr": 0.5}, nil
	}
	cfg := Config{Model: "cp2", Rank: 2, Objective: objectives.MLE{}, LearningRate: 0.01, BatchSize: 16, Epochs: 2, Seed: 4,
		Eval: EvalConfig{MaxValid: 3, SkipTest: true}}
	for range 2 {
		if _, err := Run(context.Background(), cfg, ds, nil); err != nil {
			t.Fatal(err)
		}
	}
	if len(seen) != 4 {
		t.Fatalf("%d validations, want 4", len(seen))
	}
	first := seen[0]
	distinct := map[kg.Triple]bool{}
	for _, tr := range first {
		if !slices.Contains(ds.Valid, tr) {
			t.Errorf("validated on %v, not a validation triple", tr)
		}
		distinct[tr] = true
	}
	if len(first) != 3 || len(distinct) != 3 {
		t.Errorf("validation subset %v: want 3 distinct triples of %d", first, len(ds.Valid))
	}
	for i, s := range seen[1:] {
		if !slices.Equal(s, first) {
			t.Errorf("validation %d used %v, the first %v", i+2, s, first)
		}
	}
}

// A NaN validation score ends the run as diverged, at that epoch.
func TestNaNValidationIsDivergence(t *testing.T) {
	ds := typedTiny(t)
	scriptValidation(t, []float64{0.2, math.NaN(), 0.9, 0.9}, 0)
	cfg := Config{Model: "cp2", Rank: 2, Objective: objectives.MLE{}, LearningRate: 0.01, BatchSize: 16, Epochs: 4, Seed: 1,
		Eval: EvalConfig{SkipTest: true}}
	res, err := Run(context.Background(), cfg, ds, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != Diverged || len(res.Epochs) != 2 || res.BestEpoch != 1 ||
		!slices.ContainsFunc(res.Notes, func(n string) bool { return strings.Contains(n, "NaN at epoch 2") }) {
		t.Errorf("status %s after %d epochs, best %d, notes %q; want diverged after 2, best 1", res.Status, len(res.Epochs), res.BestEpoch, res.Notes)
	}
}

// An energy-based model has no log-likelihood to select on.
func TestEnergyModelCannotSelectOnLL(t *testing.T) {
	ds := typedTiny(t)
	cfg := Config{Model: "complex", Rank: 2, Objective: objectives.PLL{Weights: objectives.Uniform}, LearningRate: 0.01, BatchSize: 16,
		Epochs: 1, Eval: EvalConfig{Select: "ll"}}
	if _, err := Run(context.Background(), cfg, ds, nil); !errors.Is(err, models.ErrIntractable) {
		t.Errorf("err %v, want ErrIntractable", err)
	}
}

// A state whose best epoch lies after its epoch is inconsistent; a state
// already past its patience resumes to the test only.
func TestResumeStateGuards(t *testing.T) {
	ds := typedTiny(t)
	scriptValidation(t, []float64{0.5, 0.4, 0.3, 0.2, 0.1, 0.1}, 0)
	cfg := Config{Model: "cp2", Rank: 2, Objective: objectives.MLE{}, LearningRate: 0.01, BatchSize: 16, Epochs: 6, Seed: 1,
		Eval: EvalConfig{Hits: []int{1}}}
	var saved *State
	cfg.SaveState = keepStateAfter(4, &saved) // three validations without improvement
	if _, err := Run(context.Background(), cfg, ds, nil); err != nil {
		t.Fatal(err)
	}
	if saved == nil || saved.Since != 3 {
		t.Fatalf("state after epoch 4: %+v", saved)
	}
	bad := saved.Clone()
	bad.BestEpoch = 5
	resume := cfg
	resume.SaveState, resume.Resume = nil, bad
	if _, err := Run(context.Background(), resume, ds, nil); !errors.Is(err, ErrStateMismatch) {
		t.Errorf("best epoch 5 in a state after epoch 4: err %v, want ErrStateMismatch", err)
	}
	resume.Resume, resume.Patience = saved, 3
	res, err := Run(context.Background(), resume, ds, nil)
	if err != nil {
		t.Fatal(err)
	}
	if last := res.Epochs[len(res.Epochs)-1].Epoch; last != 4 || res.BestEpoch != 1 || res.Test["mrr"] == 0 {
		t.Errorf("resumed past its patience: trained to epoch %d, best %d, test %v; want 4, 1 and test metrics", last, res.BestEpoch, res.Test)
	}
}
