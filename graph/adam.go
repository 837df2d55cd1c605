package graph

import (
	"fmt"
	"math"
	"sync/atomic"

	"gorgonia.org/tensor"
)

// Adam is the Adam optimiser (Kingma & Ba) with PyTorch's update rule,
// fused into one pass over parameter, gradient and moments. Gorgonia's
// AdamSolver makes about a dozen passes per tensor.
type Adam struct {
	LR, Beta1, Beta2, Eps float64

	step  int
	state map[*tensor.Dense]*moments
}

type moments struct{ m, v *tensor.Dense }

// NewAdam returns Adam with the usual defaults (β₁ 0.9, β₂ 0.999, ε 1e-8).
func NewAdam(lr float64) *Adam {
	return &Adam{LR: lr, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, state: map[*tensor.Dense]*moments{}}
}

// Steps returns the number of updates applied so far.
func (a *Adam) Steps() int { return a.step }

// Step updates every parameter in place from its gradient. It returns the
// number of non-finite gradient entries it met: a diverging run shows up
// here before it reaches the loss.
func (a *Adam) Step(params, grads []*tensor.Dense) (nonFinite int, err error) {
	if len(params) != len(grads) {
		return 0, fmt.Errorf("graph.Adam: %d parameters but %d gradients", len(params), len(grads))
	}
	a.step++
	bias1 := 1 - math.Pow(a.Beta1, float64(a.step))
	bias2 := 1 - math.Pow(a.Beta2, float64(a.step))
	for i, p := range params {
		g := grads[i]
		if !p.Shape().Eq(g.Shape()) || p.Dtype() != g.Dtype() {
			return nonFinite, fmt.Errorf("graph.Adam: parameter %v %v and gradient %v %v differ", p.Shape(), p.Dtype(), g.Shape(), g.Dtype())
		}
		st := a.state[p]
		if st == nil {
			st = &moments{m: tensor.New(tensor.Of(p.Dtype()), tensor.WithShape(p.Shape()...)),
				v: tensor.New(tensor.Of(p.Dtype()), tensor.WithShape(p.Shape()...))}
			a.state[p] = st
		}
		switch p.Dtype() {
		case tensor.Float32:
			nonFinite += adamStep(a, p.Data().([]float32), g.Data().([]float32), st.m.Data().([]float32), st.v.Data().([]float32), bias1, bias2)
		case tensor.Float64:
			nonFinite += adamStep(a, p.Data().([]float64), g.Data().([]float64), st.m.Data().([]float64), st.v.Data().([]float64), bias1, bias2)
		default:
			return nonFinite, fmt.Errorf("graph.Adam: unsupported dtype %v", p.Dtype())
		}
	}
	return nonFinite, nil
}

// Moments returns the first and second moment estimates of p (nil before
// its first update); checkpoints may want them.
func (a *Adam) Moments(p *tensor.Dense) (m, v *tensor.Dense) {
	if st := a.state[p]; st != nil {
		return st.m, st.v
	}
	return nil, nil
}

// SetSteps sets the number of updates applied so far: a resumed run
// continues the bias correction where it stopped.
func (a *Adam) SetSteps(n int) { a.step = n }

// SetMoments sets the first and second moment estimates of p to copies of
// m and v, which must have p's shape and dtype.
func (a *Adam) SetMoments(p, m, v *tensor.Dense) error {
	for _, t := range []*tensor.Dense{m, v} {
		if !p.Shape().Eq(t.Shape()) || p.Dtype() != t.Dtype() {
			return fmt.Errorf("graph.Adam: parameter %v %v and moment %v %v differ", p.Shape(), p.Dtype(), t.Shape(), t.Dtype())
		}
	}
	a.state[p] = &moments{m: m.Clone().(*tensor.Dense), v: v.Clone().(*tensor.Dense)}
	return nil
}

// adamStep updates p, m and v in place and flushes to zero any of them that
// falls below the smallest normal number of T: parameters that training
// pulls towards zero would otherwise decay into subnormals, which slow
// every BLAS call on their table 10-100x. On amd64 the process's
// floating-point mode does this everywhere (see SubnormalsFlushed); here it
// also holds where that mode is not set.
func adamStep[T Float](a *Adam, p, g, m, v []T, bias1, bias2 float64) int {
	var total atomic.Int64
	parallelFor(len(p), len(p)*8, func(lo, hi int) {
		bad := 0
		if ps, ok := any(p).([]float32); ok {
			if n, ok := adamF32(ps[lo:hi], any(g).([]float32)[lo:hi], any(m).([]float32)[lo:hi], any(v).([]float32)[lo:hi],
				float32(a.LR), float32(a.Beta1), float32(a.Beta2), float32(a.Eps), float32(bias1), float32(bias2)); ok {
				total.Add(int64(n))
				return
			}
		}
		step, rsb2 := a.LR/bias1, 1/math.Sqrt(bias2)
		for i := lo; i < hi; i++ {
			gi := float64(g[i])
			if math.IsInf(gi, 0) || gi != gi {
				bad++
			}
			mi := a.Beta1*float64(m[i]) + (1-a.Beta1)*gi
			vi := a.Beta2*float64(v[i]) + (1-a.Beta2)*gi*gi
			m[i], v[i] = flushSubnormal(T(mi)), flushSubnormal(T(vi))
			p[i] = flushSubnormal(p[i] - T(step*mi/(math.Sqrt(vi)*rsb2+a.Eps)))
		}
		total.Add(int64(bad))
	})
	return int(total.Load())
}

// flushSubnormal returns 0 for |x| below T's smallest normal number, else x
// (NaN included).
func flushSubnormal[T Float](x T) T {
	limit := 0x1p-1022
	if _, ok := any(x).(float32); ok {
		limit = 0x1p-126
	}
	if math.Abs(float64(x)) < limit {
		return 0
	}
	return x
}
