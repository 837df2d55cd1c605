package runspec

import (
	"slices"
	"strings"
	"testing"

	"gekc/grid"
	"gekc/train"
)

// The runner's own validator adds what only the models know.
func TestValidateModels(t *testing.T) {
	for _, tt := range []struct {
		name   string
		mutate func(*grid.RunSpec)
		want   string
	}{
		{"unknown model", func(s *grid.RunSpec) { s.Model = "transe" }, `unknown model "transe" (known: complex, complex+`},
		{"unknown semantics", func(s *grid.RunSpec) { s.Model = "cp3" }, `unknown model "cp3"`},
		{"a registered family beyond the paper's", func(s *grid.RunSpec) { s.Model = "distmult+" }, ""},
		{"constrained squared model", func(s *grid.RunSpec) { s.Constraints = "domain" }, ""},
		{"constrained non-negative model by MLE", func(s *grid.RunSpec) { s.Model, s.Objective, s.Constraints = "cp+", "mle", "domain" }, ""},
		{"constrained energy model", func(s *grid.RunSpec) { s.Model, s.Constraints = "complex", "domain" }, "constraints"},
		{"n3 and f2 on an energy model", func(s *grid.RunSpec) { s.Model, s.N3, s.F2 = "complex", 0.05, 0.01 }, ""},
		{"n3 on a squared model", func(s *grid.RunSpec) { s.N3 = 0.05 }, ""},
		{"n3 on a non-negative model", func(s *grid.RunSpec) { s.Model, s.N3 = "complex+", 0.05 }, "log-values"},
		{"energy model by MLE", func(s *grid.RunSpec) { s.Model, s.Objective = "rescal", "mle" }, "objective mle"},
		{"energy model selected on ll", func(s *grid.RunSpec) { s.Model, s.Eval.Select = "tucker", "ll" }, "log-likelihood"},
		{"sharded squared model", func(s *grid.RunSpec) { s.Processes = 4 }, ""},
		{"sharded non-negative model", func(s *grid.RunSpec) { s.Model, s.Processes = "cp+", 2 }, ""},
		{"one process of an energy model", func(s *grid.RunSpec) { s.Model, s.Processes = "complex", 1 }, ""},
		{"sharded energy model", func(s *grid.RunSpec) { s.Model, s.Processes = "complex", 2 }, ""},
		{"sharded model with relation ranks", func(s *grid.RunSpec) { s.Eval.Metrics, s.Processes = []string{"mrr", "relation"}, 2 }, "relation ranks"},
		{"sharded model with samples", func(s *grid.RunSpec) { s.Samples, s.Processes = 100, 2 }, "samples"},
		{"sharded constrained model", func(s *grid.RunSpec) { s.Constraints, s.Processes = "domain", 2 }, "domain constraints"},
	} {
		s := exampleSpec()
		tt.mutate(&s)
		err := Validate(s)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: unexpected error: %v", tt.name, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: error %v, want one containing %q", tt.name, err, tt.want)
		}
	}
}

// grid imports no training package, so it keeps its own list of the
// optimiser names train accepts.
func TestGridKnowsTrainsOptimizers(t *testing.T) {
	if !slices.Equal(grid.Optimizers, train.Optimizers) {
		t.Errorf("grid.Optimizers %v, train.Optimizers %v", grid.Optimizers, train.Optimizers)
	}
}
