package graph

import (
	"math"

	"gorgonia.org/tensor"
)

// Adam is the Adam optimiser (Kingma & Ba) with PyTorch's update rule,
// fused into one pass over parameter, gradient and moments. Gorgonia's
// AdamSolver makes about a dozen passes per tensor. Its slots are the first
// and second moments, "adam_m" and "adam_v".
type Adam struct {
	LR, Beta1, Beta2, Eps float64
	slotted
}

// NewAdam returns Adam with the usual defaults (β₁ 0.9, β₂ 0.999, ε 1e-8).
func NewAdam(lr float64) *Adam {
	return &Adam{LR: lr, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, slotted: newSlotted("Adam", 0, "adam_m", "adam_v")}
}

// Step updates every parameter in place (see Optimizer).
func (a *Adam) Step(params, grads []*tensor.Dense) (int, error) {
	bias1 := 1 - math.Pow(a.Beta1, float64(a.step+1))
	bias2 := 1 - math.Pow(a.Beta2, float64(a.step+1))
	return a.each(params, grads,
		func(p, g []float32, s [][]float32) int { return adamStep(a, p, g, s[0], s[1], bias1, bias2) },
		func(p, g []float64, s [][]float64) int { return adamStep(a, p, g, s[0], s[1], bias1, bias2) })
}

// adamStep updates p, m and v in place and flushes to zero any of them that
// falls below the smallest normal number of T: parameters that training
// pulls towards zero would otherwise decay into subnormals, which slow
// every BLAS call on their table 10-100x. On amd64 the process's
// floating-point mode does this everywhere (see SubnormalsFlushed); here it
// also holds where that mode is not set.
func adamStep[T Float](a *Adam, p, g, m, v []T, bias1, bias2 float64) int {
	return fused(len(p), func(lo, hi int) int {
		if ps, ok := any(p).([]float32); ok {
			if n, ok := adamF32(ps[lo:hi], any(g).([]float32)[lo:hi], any(m).([]float32)[lo:hi], any(v).([]float32)[lo:hi],
				float32(a.LR), float32(a.Beta1), float32(a.Beta2), float32(a.Eps), float32(bias1), float32(bias2)); ok {
				return n
			}
		}
		bad := 0
		step, rsb2 := a.LR/bias1, 1/math.Sqrt(bias2)
		for i := lo; i < hi; i++ {
			gi := float64(g[i])
			if nonFinite(gi) {
				bad++
			}
			mi := a.Beta1*float64(m[i]) + (1-a.Beta1)*gi
			vi := a.Beta2*float64(v[i]) + (1-a.Beta2)*gi*gi
			m[i], v[i] = flushSubnormal(T(mi)), flushSubnormal(T(vi))
			p[i] = flushSubnormal(p[i] - T(step*mi/(math.Sqrt(vi)*rsb2+a.Eps)))
		}
		return bad
	})
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
