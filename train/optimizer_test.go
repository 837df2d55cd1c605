package train

import (
	"math"
	"testing"

	"gorgonia.org/tensor"
)

// Optimizer.New builds the optimiser its settings name: as many slots as
// Slots says (what the memory estimate counts), with momentum and initial
// accumulator applied. Each case takes `steps` steps of gradient 1 on a
// float64 parameter and reads one slot: Adam's first moment is 0.1 after
// one, Adagrad's sum is init + steps, SGD's momentum buffer 1 + 0.9.
func TestOptimizerNew(t *testing.T) {
	for _, c := range []struct {
		opt   Optimizer
		steps int
		slot  string // "" when the optimiser keeps none
		want  float64
	}{
		{Optimizer{}, 1, "adam_m", 0.1},
		{Optimizer{Name: "adagrad"}, 2, "adagrad_sum", 2},
		{Optimizer{Name: "adagrad", InitialAccumulator: 0.1}, 2, "adagrad_sum", 2.1},
		{Optimizer{Name: "sgd"}, 2, "", 0},
		{Optimizer{Name: "sgd", Momentum: 0.9}, 2, "sgd_momentum", 1.9},
	} {
		opt, err := c.opt.New(0.1)
		if err != nil {
			t.Fatalf("%+v: %v", c.opt, err)
		}
		if got := len(opt.Slots()); got != c.opt.Slots() {
			t.Errorf("%+v: the optimiser keeps %d slots, Slots() says %d", c.opt, got, c.opt.Slots())
		}
		p := tensor.New(tensor.WithShape(3), tensor.WithBacking(make([]float64, 3)))
		for range c.steps {
			g := tensor.New(tensor.WithShape(3), tensor.WithBacking([]float64{1, 1, 1}))
			if _, err := opt.Step([]*tensor.Dense{p}, []*tensor.Dense{g}); err != nil {
				t.Fatal(err)
			}
		}
		if c.slot == "" {
			continue
		}
		s := opt.Slot(p, c.slot)
		if s == nil {
			t.Errorf("%+v: no slot %s after %d steps", c.opt, c.slot, c.steps)
			continue
		}
		if got := s.Data().([]float64)[0]; math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%+v: %s = %v after %d steps of gradient 1, want %v", c.opt, c.slot, got, c.steps, c.want)
		}
	}
}

// Settings the optimiser does not have, or values outside their range,
// are refused by New (and so by Run) rather than ignored.
func TestOptimizerRejectsBadSettings(t *testing.T) {
	for _, o := range []Optimizer{
		{Name: "adamw"},
		{Momentum: 0.9},                  // Adam has no momentum
		{Name: "adagrad", Momentum: 0.9}, // nor has Adagrad
		{Name: "sgd", Momentum: 1},       // momentum is in [0, 1)
		{Name: "sgd", Momentum: -0.1},
		{Name: "sgd", Momentum: math.NaN()},
		{Name: "sgd", InitialAccumulator: 0.1}, // Adagrad's alone
		{Name: "adagrad", InitialAccumulator: -1},
		{Name: "adagrad", InitialAccumulator: math.NaN()},
		{Name: "adagrad", InitialAccumulator: math.Inf(1)},
	} {
		if opt, err := o.New(0.1); err == nil || opt != nil {
			t.Errorf("%+v: New = %v, %v; want an error", o, opt, err)
		}
	}
}
