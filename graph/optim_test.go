package graph

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"gorgonia.org/tensor"
)

// refStep is a plain-Go float64 reference of one update of x from gradient
// g with per-entry state st, returning the new state.
type refStep func(x, g float64, st []float64, step int) float64

// The optimisers match PyTorch's update rules written out in float64, in
// both dtypes, over several steps; a run stopped after some steps and
// continued by a fresh optimiser from its slots (a resumed run) lands on
// the same parameters as one that never stopped.
func TestOptimizersMatchReference(t *testing.T) {
	for _, c := range []struct {
		name  string
		new   func() Optimizer
		slots int
		init  float64 // initial state value
		ref   refStep
	}{
		{"adam", func() Optimizer { return NewAdam(0.01) }, 2, 0, func(x, g float64, st []float64, step int) float64 {
			st[0] = 0.9*st[0] + 0.1*g
			st[1] = 0.999*st[1] + 0.001*g*g
			b1, b2 := 1-math.Pow(0.9, float64(step)), 1-math.Pow(0.999, float64(step))
			return x - 0.01*(st[0]/b1)/(math.Sqrt(st[1]/b2)+1e-8)
		}},
		{"adagrad", func() Optimizer { return NewAdagrad(0.1, 0) }, 1, 0, func(x, g float64, st []float64, _ int) float64 {
			st[0] += g * g
			return x - 0.1*g/(math.Sqrt(st[0])+1e-10)
		}},
		{"adagrad initial accumulator", func() Optimizer { return NewAdagrad(0.1, 0.5) }, 1, 0.5, func(x, g float64, st []float64, _ int) float64 {
			st[0] += g * g
			return x - 0.1*g/(math.Sqrt(st[0])+1e-10)
		}},
		{"sgd", func() Optimizer { return NewSGD(0.05, 0) }, 0, 0, func(x, g float64, _ []float64, _ int) float64 {
			return x - 0.05*g
		}},
		{"sgd momentum", func() Optimizer { return NewSGD(0.05, 0.9) }, 1, 0, func(x, g float64, st []float64, step int) float64 {
			if step == 1 {
				st[0] = g
			} else {
				st[0] = 0.9*st[0] + g
			}
			return x - 0.05*st[0]
		}},
	} {
		for _, n := range optimizerTestSizes {
			t.Run(fmt.Sprintf("%s/n=%d", c.name, n), func(t *testing.T) { checkOptimizer(t, c.new, c.slots, c.init, c.ref, n) })
		}
	}
}

// optimizerTestSizes cover the kernels' shapes: tails alone (below 8
// floats), whole vectors without a tail, vectors and a tail, and a table
// large enough to be cut into parallel chunks of uneven tails.
var optimizerTestSizes = []int{1, 7, 8, 9, 16, 37, 64, 1<<14 + 3}

// checkOptimizer runs six steps of an optimiser on n entries in both
// dtypes, the last three by a fresh optimiser from the first's slots (a
// resumed run), against ref. It raises GOMAXPROCS so that the parallel
// split runs on any machine.
func checkOptimizer(t *testing.T, newOpt func() Optimizer, slots int, init float64, ref refStep, n int) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(3))
	const steps, stopAt = 6, 3
	rng := rand.New(rand.NewPCG(5, uint64(n)))
	start := make([]float64, n)
	for i := range start {
		start[i] = float64(float32(rng.NormFloat64()))
	}
	grads := make([][]float64, steps)
	for s := range grads {
		grads[s] = make([]float64, n)
		for i := range grads[s] {
			grads[s][i] = float64(float32(rng.NormFloat64()))
		}
	}
	want := slices.Clone(start)
	for i := range want {
		state := slices.Repeat([]float64{init}, slots)
		for s := range steps {
			want[i] = ref(want[i], grads[s][i], state, s+1)
		}
	}
	if got := len(newOpt().Slots()); got != slots {
		t.Fatalf("%d slots, want %d", got, slots)
	}
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		tol := 1e-12
		dense := func(x []float64) *tensor.Dense {
			return tensor.New(tensor.WithShape(n), tensor.WithBacking(slices.Clone(x)))
		}
		if dt == tensor.Float32 {
			tol, dense = 1e-5, toF32
		}
		p, opt := dense(start), newOpt()
		for s := range steps {
			if s == stopAt {
				next := newOpt()
				for _, name := range opt.Slots() {
					if err := next.SetSlot(p, name, opt.Slot(p, name)); err != nil {
						t.Fatal(err)
					}
				}
				next.SetSteps(opt.Steps())
				opt = next
			}
			if bad, err := opt.Step([]*tensor.Dense{p}, []*tensor.Dense{dense(grads[s])}); err != nil || bad != 0 {
				t.Fatalf("step %d: %d non-finite, %v", s, bad, err)
			}
		}
		if opt.Steps() != steps {
			t.Errorf("%v: Steps() = %d, want %d", dt, opt.Steps(), steps)
		}
		got := toF64(p)
		for i := range want {
			if math.Abs(got[i]-want[i]) > tol {
				t.Errorf("%v: p[%d] = %v, want %v", dt, i, got[i], want[i])
				break
			}
		}
	}
}

// SetSlot keeps a copy: the tensor handed to it can be reused (a state
// being loaded) without changing the optimiser's state.
func TestOptimizerSlotsAreCopied(t *testing.T) {
	for _, opt := range []Optimizer{NewAdam(0.1), NewAdagrad(0.1, 0), NewSGD(0.1, 0.5)} {
		p := toF32(make([]float64, 9))
		for _, name := range opt.Slots() {
			given := toF32(slices.Repeat([]float64{0.25}, 9))
			if err := opt.SetSlot(p, name, given); err != nil {
				t.Fatal(err)
			}
			given.Data().([]float32)[3] = 7
			if got := opt.Slot(p, name).Data().([]float32)[3]; got != 0.25 {
				t.Errorf("%T: slot %s follows the tensor it was set from: %v, want 0.25", opt, name, got)
			}
		}
	}
}

// Every optimiser counts non-finite gradient entries, rejects mismatched
// shapes and unknown slots with an error naming them.
func TestOptimizersGuard(t *testing.T) {
	for _, opt := range []Optimizer{NewAdam(0.1), NewAdagrad(0.1, 0), NewSGD(0.1, 0), NewSGD(0.1, 0.5)} {
		p := toF32(make([]float64, 13)) // a vector of 8 and a tail
		gs := make([]float64, 13)
		gs[1], gs[6], gs[10] = math.Inf(1), math.NaN(), math.Inf(-1)
		g := toF32(gs)
		if bad, err := opt.Step([]*tensor.Dense{p}, []*tensor.Dense{g}); err != nil || bad != 3 {
			t.Errorf("%T: %d non-finite gradients, %v; want 3", opt, bad, err)
		}
		countsInParallelChunks(t, opt)
		if _, err := opt.Step([]*tensor.Dense{p}, []*tensor.Dense{toF32(make([]float64, 4))}); err == nil {
			t.Errorf("%T: a gradient of another shape is accepted", opt)
		}
		if err := opt.SetSlot(p, "no_such_slot", p); err == nil {
			t.Errorf("%T: an unknown slot is accepted", opt)
		}
		for _, name := range opt.Slots() {
			if err := opt.SetSlot(p, name, toF32(make([]float64, 4))); err == nil {
				t.Errorf("%T: slot %s of another shape is accepted", opt, name)
			}
		}
	}
}

// countsInParallelChunks checks opt's non-finite count on a table cut
// into parallel chunks, the non-finite entries at both ends of each.
func countsInParallelChunks(t *testing.T, opt Optimizer) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(3))
	const n = 1<<14 + 3
	gs := make([]float64, n)
	at := []int{0, 1, n/3 - 1, n / 3, n/3 + 1, 2*n/3 + 1, n - 2, n - 1}
	for i, j := range at {
		gs[j] = []float64{math.NaN(), math.Inf(1), math.Inf(-1)}[i%3]
	}
	for _, dense := range []func([]float64) *tensor.Dense{toF32, func(x []float64) *tensor.Dense {
		return tensor.New(tensor.WithShape(len(x)), tensor.WithBacking(x))
	}} {
		if bad, err := opt.Step([]*tensor.Dense{dense(make([]float64, n))}, []*tensor.Dense{dense(gs)}); err != nil || bad != len(at) {
			t.Errorf("%T: %d non-finite gradients in a parallel step, %v; want %d", opt, bad, err, len(at))
		}
	}
}

func toF32(x []float64) *tensor.Dense {
	out := make([]float32, len(x))
	for i, v := range x {
		out[i] = float32(v)
	}
	return tensor.New(tensor.WithShape(len(x)), tensor.WithBacking(out))
}

func toF64(t *tensor.Dense) []float64 {
	switch d := t.Data().(type) {
	case []float32:
		out := make([]float64, len(d))
		for i, v := range d {
			out[i] = float64(v)
		}
		return out
	case []float64:
		return d
	}
	return nil
}

// BenchmarkOptimizers updates a FB15k-237-sized table at d = 1000 (14,541 ×
// 1000 float32): each optimiser is one fused pass, so their times order by
// the bytes they touch (SGD 2 arrays, Adagrad 3, Adam 4).
func BenchmarkOptimizers(b *testing.B) {
	const n = 14541 * 1000
	for _, c := range []struct {
		name string
		opt  Optimizer
	}{{"adam", NewAdam(1e-3)}, {"adagrad", NewAdagrad(1e-2, 0)}, {"sgd", NewSGD(1e-2, 0)}, {"sgd-momentum", NewSGD(1e-2, 0.9)}} {
		b.Run(c.name, func(b *testing.B) {
			p, g := toF32(make([]float64, n)), toF32(make([]float64, n))
			gd := g.Data().([]float32)
			for i := range gd {
				gd[i] = float32(i%7) * 1e-3
			}
			b.SetBytes(4 * n)
			for b.Loop() {
				if _, err := c.opt.Step([]*tensor.Dense{p}, []*tensor.Dense{g}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// In float64 every optimiser runs its Go loop (float32 on amd64 goes
// through the C kernels, which TestOptimizersGuard covers): it too counts
// the non-finite gradient entries, in the vector part and the tail alike.
// SetSlot refuses a slot of the parameter's shape but another dtype, which
// the next Step could not read.
func TestOptimizersGuardFloat64(t *testing.T) {
	for _, opt := range []Optimizer{NewAdam(0.1), NewAdagrad(0.1, 0), NewSGD(0.1, 0), NewSGD(0.1, 0.5)} {
		p := tensor.New(tensor.WithShape(13), tensor.WithBacking(make([]float64, 13)))
		gs := make([]float64, 13)
		gs[1], gs[6], gs[10] = math.Inf(1), math.NaN(), math.Inf(-1)
		g := tensor.New(tensor.WithShape(13), tensor.WithBacking(gs))
		if bad, err := opt.Step([]*tensor.Dense{p}, []*tensor.Dense{g}); err != nil || bad != 3 {
			t.Errorf("%T: %d non-finite float64 gradients, %v; want 3", opt, bad, err)
		}
		for _, name := range opt.Slots() {
			if err := opt.SetSlot(p, name, toF32(make([]float64, 13))); err == nil {
				t.Errorf("%T: a float32 slot %s of a float64 parameter is accepted", opt, name)
			}
		}
	}
}
