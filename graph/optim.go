package graph

import (
	"fmt"
	"math"
	"slices"
	"sync/atomic"

	"gorgonia.org/tensor"
)

// Optimizer updates parameters in place from their gradients. Each keeps,
// per parameter, a fixed set of named state tensors ("slots": Adam's two
// moments, Adagrad's sum of squares, SGD's momentum buffer) of the
// parameter's shape; a resumable run saves and restores them by name.
type Optimizer interface {
	// Step applies one update to every parameter and returns the number
	// of non-finite gradient entries it met: a diverging run shows up here
	// before it reaches the loss.
	Step(params, grads []*tensor.Dense) (nonFinite int, err error)
	// Steps is the number of updates applied so far; SetSteps sets it (a
	// resumed run continues e.g. Adam's bias correction where it stopped).
	Steps() int
	SetSteps(n int)
	// Slots names the per-parameter state tensors, in a fixed order;
	// empty for a stateless optimiser. The names are unique across
	// optimisers, so that a state saved by one cannot load into another.
	Slots() []string
	// Slot returns p's state tensor of that name (nil before p's first
	// update); SetSlot sets it to a copy of t, which must have p's shape
	// and dtype.
	Slot(p *tensor.Dense, name string) *tensor.Dense
	SetSlot(p *tensor.Dense, name string, t *tensor.Dense) error
}

// slotted is the bookkeeping every Optimizer shares: a step counter and
// each parameter's slot tensors, created on the parameter's first update.
type slotted struct {
	name  string   // the optimiser's, for errors
	names []string // slot names
	init  float64  // value new slots start at
	step  int
	state map[*tensor.Dense][]*tensor.Dense
}

func newSlotted(name string, init float64, slots ...string) slotted {
	return slotted{name: name, names: slots, init: init, state: map[*tensor.Dense][]*tensor.Dense{}}
}

func (s *slotted) Steps() int      { return s.step }
func (s *slotted) SetSteps(n int)  { s.step = n }
func (s *slotted) Slots() []string { return slices.Clone(s.names) }

func (s *slotted) Slot(p *tensor.Dense, name string) *tensor.Dense {
	i := slices.Index(s.names, name)
	if st := s.state[p]; st != nil && i >= 0 {
		return st[i]
	}
	return nil
}

func (s *slotted) SetSlot(p *tensor.Dense, name string, t *tensor.Dense) error {
	i := slices.Index(s.names, name)
	if i < 0 {
		return fmt.Errorf("graph.%s: no state %q (it keeps %v)", s.name, name, s.names)
	}
	if !p.Shape().Eq(t.Shape()) || p.Dtype() != t.Dtype() {
		return fmt.Errorf("graph.%s: parameter %v %v and its %s %v %v differ", s.name, p.Shape(), p.Dtype(), name, t.Shape(), t.Dtype())
	}
	s.slotsOf(p)[i] = t.Clone().(*tensor.Dense)
	return nil
}

// slotsOf returns p's slots, creating them at the initial value.
func (s *slotted) slotsOf(p *tensor.Dense) []*tensor.Dense {
	st := s.state[p]
	if st == nil {
		st = make([]*tensor.Dense, len(s.names))
		for i := range st {
			st[i] = tensor.New(tensor.Of(p.Dtype()), tensor.WithShape(p.Shape()...))
			if s.init != 0 {
				switch d := st[i].Data().(type) {
				case []float32:
					for j := range d {
						d[j] = float32(s.init)
					}
				case []float64:
					for j := range d {
						d[j] = s.init
					}
				}
			}
		}
		s.state[p] = st
	}
	return st
}

// each checks params against grads and calls f32 or f64 with every
// parameter's data, gradient and slots, summing the non-finite counts.
func (s *slotted) each(params, grads []*tensor.Dense,
	f32 func(p, g []float32, slots [][]float32) int, f64 func(p, g []float64, slots [][]float64) int) (int, error) {
	if len(params) != len(grads) {
		return 0, fmt.Errorf("graph.%s: %d parameters but %d gradients", s.name, len(params), len(grads))
	}
	s.step++
	bad := 0
	for i, p := range params {
		g := grads[i]
		if !p.Shape().Eq(g.Shape()) || p.Dtype() != g.Dtype() {
			return bad, fmt.Errorf("graph.%s: parameter %v %v and gradient %v %v differ", s.name, p.Shape(), p.Dtype(), g.Shape(), g.Dtype())
		}
		st := s.slotsOf(p)
		switch p.Dtype() {
		case tensor.Float32:
			bad += f32(p.Data().([]float32), g.Data().([]float32), slotData[float32](st))
		case tensor.Float64:
			bad += f64(p.Data().([]float64), g.Data().([]float64), slotData[float64](st))
		default:
			return bad, fmt.Errorf("graph.%s: unsupported dtype %v", s.name, p.Dtype())
		}
	}
	return bad, nil
}

func slotData[T Float](st []*tensor.Dense) [][]T {
	out := make([][]T, len(st))
	for i, t := range st {
		out[i] = t.Data().([]T)
	}
	return out
}

// fused runs body over [0,len(p)) in parallel chunks and counts the
// non-finite gradient entries body reports.
func fused(n int, body func(lo, hi int) int) int {
	var total atomic.Int64
	parallelFor(n, n*8, func(lo, hi int) { total.Add(int64(body(lo, hi))) })
	return int(total.Load())
}

func nonFinite(x float64) bool { return math.IsInf(x, 0) || x != x }

// Adagrad is Adagrad (Duchi et al.) with PyTorch's update rule, kbc's
// default optimiser for energy-based KGEs (the paper's results used Adam):
// the sum of squared
// gradients starts at InitialAccumulator, and p -= LR·g/(√sum + Eps). One
// fused pass per parameter.
type Adagrad struct {
	LR, Eps float64
	slotted
}

// NewAdagrad returns Adagrad with PyTorch's ε (1e-10) and accumulators
// starting at initialAccumulator (PyTorch's and kbc's default: 0).
func NewAdagrad(lr, initialAccumulator float64) *Adagrad {
	return &Adagrad{LR: lr, Eps: 1e-10, slotted: newSlotted("Adagrad", initialAccumulator, "adagrad_sum")}
}

// Step updates every parameter in place (see Optimizer).
func (a *Adagrad) Step(params, grads []*tensor.Dense) (int, error) {
	return a.each(params, grads,
		func(p, g []float32, s [][]float32) int { return adagradStep(a, p, g, s[0]) },
		func(p, g []float64, s [][]float64) int { return adagradStep(a, p, g, s[0]) })
}

func adagradStep[T Float](a *Adagrad, p, g, sum []T) int {
	return fused(len(p), func(lo, hi int) int {
		if ps, ok := any(p).([]float32); ok {
			if n, ok := adagradF32(ps[lo:hi], any(g).([]float32)[lo:hi], any(sum).([]float32)[lo:hi], float32(a.LR), float32(a.Eps)); ok {
				return n
			}
		}
		bad := 0
		for i := lo; i < hi; i++ {
			gi := float64(g[i])
			if nonFinite(gi) {
				bad++
			}
			si := float64(sum[i]) + gi*gi
			sum[i] = flushSubnormal(T(si))
			p[i] = flushSubnormal(p[i] - T(a.LR*gi/(math.Sqrt(si)+a.Eps)))
		}
		return bad
	})
}

// SGD is stochastic gradient descent with optional heavy-ball momentum, in
// PyTorch's form (no dampening): buf = Momentum·buf + g (buf = g on the
// first step), p -= LR·buf. Without momentum it keeps no state.
type SGD struct {
	LR, Momentum float64
	slotted
}

// NewSGD returns SGD; momentum 0 is plain SGD.
func NewSGD(lr, momentum float64) *SGD {
	if momentum == 0 {
		return &SGD{LR: lr, slotted: newSlotted("SGD", 0)}
	}
	return &SGD{LR: lr, Momentum: momentum, slotted: newSlotted("SGD", 0, "sgd_momentum")}
}

// Step updates every parameter in place (see Optimizer).
func (o *SGD) Step(params, grads []*tensor.Dense) (int, error) {
	return o.each(params, grads,
		func(p, g []float32, s [][]float32) int { return sgdStep(o, p, g, s) },
		func(p, g []float64, s [][]float64) int { return sgdStep(o, p, g, s) })
}

// sgdStep needs no first-step case: the buffer starts at zero, so its
// first value is g, as in PyTorch.
func sgdStep[T Float](o *SGD, p, g []T, slots [][]T) int {
	return fused(len(p), func(lo, hi int) int {
		if ps, ok := any(p).([]float32); ok {
			var buf []float32
			if len(slots) > 0 {
				buf = any(slots[0]).([]float32)[lo:hi]
			}
			if n, ok := sgdF32(ps[lo:hi], any(g).([]float32)[lo:hi], buf, float32(o.LR), float32(o.Momentum)); ok {
				return n
			}
		}
		bad := 0
		for i := lo; i < hi; i++ {
			gi := float64(g[i])
			if nonFinite(gi) {
				bad++
			}
			d := gi
			if len(slots) > 0 {
				d += o.Momentum * float64(slots[0][i])
				slots[0][i] = flushSubnormal(T(d))
			}
			p[i] = flushSubnormal(p[i] - T(o.LR*d))
		}
		return bad
	})
}
