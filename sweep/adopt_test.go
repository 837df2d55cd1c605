package sweep

import (
	"strings"
	"testing"

	"gekc/grid"
)

// A state may pass only to a run that would not have stopped before it:
// the same spec but for a patience and an epoch bound at least as large
// (patience 0, none, the largest) and the keys that change no run.
func TestStopsOnlyLater(t *testing.T) {
	base := grid.DefaultRunSpec()
	base.Dataset, base.Model, base.Objective, base.Rank = "nations", "cp2", "pll", 5
	base.LearningRate, base.BatchSize, base.Epochs, base.Patience = 0.01, 300, 10, 3
	for _, c := range []struct {
		name string
		edit func(*grid.RunSpec)
		want string // "" for allowed, else part of the error
	}{
		{"same", func(*grid.RunSpec) {}, ""},
		{"larger patience and epochs", func(s *grid.RunSpec) { s.Patience, s.Epochs = 12, 40 }, ""},
		{"no early stopping", func(s *grid.RunSpec) { s.Patience = 0 }, ""},
		{"ignored keys", func(s *grid.RunSpec) { s.Samples, s.Eval.BatchSize = 1000, 50 }, ""},
		{"smaller patience", func(s *grid.RunSpec) { s.Patience = 2 }, "patience = 2 stops sooner than its 3"},
		{"fewer epochs", func(s *grid.RunSpec) { s.Epochs = 9 }, "epochs = 9 is below its 10"},
		{"learning rate", func(s *grid.RunSpec) { s.LearningRate = 0.02 }, "learning_rate (0.02, not 0.01)"},
		{"stopping rule", func(s *grid.RunSpec) { s.Eval.MinDelta = 1e-3 }, "eval.min_delta"},
		{"seed and metrics", func(s *grid.RunSpec) { s.Seed, s.Eval.Metrics = 1, []string{"mrr"} }, "seed (1, not 0), eval.metrics ([mrr], not [mrr hits ll])"},
	} {
		to := base.Clone()
		c.edit(&to)
		err := stopsOnlyLater(base, to)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v, want allowed", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want an error with %q", c.name, err, c.want)
		}
	}
	none := base.Clone()
	none.Patience = 0
	if err := stopsOnlyLater(none, base); err == nil || !strings.Contains(err.Error(), "0 is none") {
		t.Errorf("patience 3 adopting from a run without early stopping: %v, want refused", err)
	}
}
