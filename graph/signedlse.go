package graph

import (
	"fmt"
	"math"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// SignedRowLogSumExp returns, for the rows×k matrix t, the length-rows
// vector
//
//	y_i = log(Σ_{j<k−neg} exp t_ij − Σ_{j≥k−neg} exp t_ij),
//
// the log-sum-exp of each row with weight −1 on its trailing neg columns:
// the normaliser of a non-negative circuit with negative terms (ComplEx+).
// Both sums are taken after subtracting the row max, so y is as accurate
// as the difference allows (the composite p + log(1 − exp(n − p)) of the
// parts' log-sum-exps also loses n − p's rounding at the scale of |p|).
// Where y is not finite it is what that composite gives: −Inf for a row
// whose negative mass equals its positive mass, NaN where it exceeds it.
// Slicing the two parts and summing each owned copies of t forward and
// t-sized gradients backward; this op reads t in place and its gradient,
// ±exp(t_ij − y_i) times the upstream one, is a single rows×k buffer.
// Where y is not finite its gradient is NaN. With neg = 0 it is
// RowLogSumExp.
func SignedRowLogSumExp(t *G.Node, neg int) (*G.Node, error) {
	if t == nil {
		return nil, fmt.Errorf("graph.SignedRowLogSumExp: nil operand")
	}
	if t.Dims() != 2 {
		return nil, fmt.Errorf("graph.SignedRowLogSumExp: need a matrix, got %v", t.Shape())
	}
	if k := t.Shape()[1]; neg < 0 || neg >= k {
		return nil, fmt.Errorf("graph.SignedRowLogSumExp: %d negative columns of %d; want 0 ≤ neg < %d", neg, k, k)
	}
	if neg == 0 {
		return RowLogSumExp(t)
	}
	return apply(&signedLSEOp{base: newBase(fmt.Sprintf("SignedRowLogSumExp%d", neg)), neg: neg}, t)
}

type signedLSEOp struct {
	base
	neg int
}

func (o *signedLSEOp) Arity() int         { return 1 }
func (o *signedLSEOp) Type() hm.Type      { return fnType(2, 1) }
func (o *signedLSEOp) DiffWRT(int) []bool { return []bool{true} }
func (o *signedLSEOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{dims(in[0])[0]}, nil
}

func (o *signedLSEOp) Do(in ...G.Value) (G.Value, error) {
	s := shapeOf(in[0])
	if s[1] <= o.neg {
		return nil, fmt.Errorf("%v: %d negative columns of %d", o, o.neg, s[1])
	}
	out := o.buffer(in[0].Dtype(), s[0])
	return dispatch(in[0],
		func() (G.Value, error) {
			signedLSEKernel(data[float32](in[0]), data[float32](out), s[0], s[1], o.neg)
			return out, nil
		},
		func() (G.Value, error) {
			signedLSEKernel(data[float64](in[0]), data[float64](out), s[0], s[1], o.neg)
			return out, nil
		})
}

// signedLSEKernel writes y_i into out for each row of the rows×k matrix t.
func signedLSEKernel[T Float](t, out []T, rows, k, neg int) {
	parallelFor(rows, rows*k, func(lo, hi int) {
		if ts, ok := any(t).([]float32); ok && signedLSERowsF32(ts[lo*k:hi*k], hi-lo, k, neg, any(out).([]float32)[lo:hi]) {
			return
		}
		for i := lo; i < hi; i++ {
			out[i] = T(signedLSERow(t[i*k:(i+1)*k], k-neg))
		}
	})
}

// signedLSERow returns log(Σ_{j<pos} e^{r_j} − Σ_{j≥pos} e^{r_j}) in
// float64, shifted by the row max. Where that is not finite it gives what
// p + log1mexp(n − p) gives for the parts' log-sum-exps p and n (the
// composite the op replaces): NaN for a NaN, a +Inf negative term or a
// row all −Inf, +Inf for a +Inf positive term, and log(0) = −Inf or
// log(<0) = NaN when the negative mass equals or exceeds the positive.
func signedLSERow[T Float](r []T, pos int) float64 {
	mp, mn := math.Inf(-1), math.Inf(-1)
	for j, v := range r {
		f := float64(v)
		switch {
		case f != f:
			return math.NaN()
		case j < pos:
			mp = math.Max(mp, f)
		default:
			mn = math.Max(mn, f)
		}
	}
	switch m := math.Max(mp, mn); {
	case math.IsInf(mn, 1), math.IsInf(m, -1):
		return math.NaN()
	case math.IsInf(mp, 1):
		return mp
	default:
		var sp, sn float64
		for _, v := range r[:pos] {
			sp += math.Exp(float64(v) - m)
		}
		for _, v := range r[pos:] {
			sn += math.Exp(float64(v) - m)
		}
		return m + math.Log(sp-sn)
	}
}

// SymDiff: dy_i/dt_ij = ±exp(t_ij − y_i), + on the leading columns.
func (o *signedLSEOp) SymDiff(in G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	g, err := apply(&signedLSEGradOp{base: newBase(o.name + "Grad"), neg: o.neg}, in[0], out, grad)
	return G.Nodes{g}, err
}

// signedLSEGradOp computes g_i·s_j·exp(t_ij − y_i) from t, y and g, with
// s_j = −1 on the trailing neg columns and +1 elsewhere.
type signedLSEGradOp struct {
	base
	neg int
}

func (o *signedLSEGradOp) Arity() int         { return 3 }
func (o *signedLSEGradOp) Type() hm.Type      { return fnType(2, 1, 1, 2) }
func (o *signedLSEGradOp) DiffWRT(int) []bool { return []bool{false, false, false} }
func (o *signedLSEGradOp) SymDiff(G.Nodes, *G.Node, *G.Node) (G.Nodes, error) {
	return nil, errNoSecondOrder(o)
}
func (o *signedLSEGradOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return dims(in[0]).Clone(), nil
}

func (o *signedLSEGradOp) Do(in ...G.Value) (G.Value, error) {
	s := shapeOf(in[0])
	if s[1] <= o.neg {
		return nil, fmt.Errorf("%v: %d negative columns of %d", o, o.neg, s[1])
	}
	out := o.buffer(in[0].Dtype(), s...)
	return dispatch(in[0],
		func() (G.Value, error) {
			signedLSEGradKernel(data[float32](in[0]), data[float32](in[1]), data[float32](in[2]), data[float32](out), s[0], s[1], o.neg)
			return out, nil
		},
		func() (G.Value, error) {
			signedLSEGradKernel(data[float64](in[0]), data[float64](in[1]), data[float64](in[2]), data[float64](out), s[0], s[1], o.neg)
			return out, nil
		})
}

func signedLSEGradKernel[T Float](t, y, g, out []T, rows, k, neg int) {
	if rows == 0 {
		return
	}
	pos := k - neg
	softmaxScale(t, y, g, rows, pos, k, out)
	minusG := make([]T, rows)
	for i, v := range g {
		minusG[i] = -v
	}
	softmaxScale(t[pos:], y, minusG, rows, neg, k, out[pos:])
	// A row without a finite value has no finite gradient. The float32
	// exponential clamps its argument, so exp(t − y) with y = −Inf or NaN
	// would read as a huge finite number: write NaN, as float64 gives.
	nan := T(math.NaN())
	for i, v := range y[:rows] {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			for j := range out[i*k : (i+1)*k] {
				out[i*k+j] = nan
			}
		}
	}
}
