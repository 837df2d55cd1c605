package graph

import (
	"fmt"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// ComplexMul returns the elementwise complex product c ⊙ b of rows stored
// as [re | im] halves, where c is a or, with conjA, its conjugate:
//
//	re = c_re∘b_re − c_im∘b_im,   im = c_re∘b_im + c_im∘b_re.
//
// Either operand may have a single row, broadcast over the other's rows.
// It is ComplEx's query in one pass forward and one per operand backward,
// where slicing the halves, four Mul, a Sub, an Add and ConcatCols made
// eight passes each way over B×2d buffers: at d = 1000 and B = 5000 those
// passes cost about a third of a squared ComplEx step.
func ComplexMul(a, b *G.Node, conjA bool) (*G.Node, error) {
	if a.Dims() != 2 || b.Dims() != 2 || a.Shape()[1]%2 != 0 {
		return nil, fmt.Errorf("graph.ComplexMul: want matrices with an even number of columns, got %v and %v", a.Shape(), b.Shape())
	}
	if _, err := broadcastShape(a.Shape(), b.Shape()); err != nil {
		return nil, fmt.Errorf("graph.ComplexMul: %w", err)
	}
	return apply(&complexMulOp{base: newBase("ComplexMul"), conjA: conjA}, a, b)
}

type complexMulOp struct {
	base
	conjA bool
}

func (o *complexMulOp) Arity() int         { return 2 }
func (o *complexMulOp) Type() hm.Type      { return fnType(2, 2, 2) }
func (o *complexMulOp) DiffWRT(int) []bool { return []bool{true, true} }
func (o *complexMulOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return broadcastShape(dims(in[0]), dims(in[1]))
}

func (o *complexMulOp) Do(in ...G.Value) (G.Value, error) {
	s, err := broadcastShape(shapeOf(in[0]), shapeOf(in[1]))
	if err != nil {
		return nil, fmt.Errorf("%v: %w", o, err)
	}
	out := o.buffer(in[0].Dtype(), s...)
	sign := conjSign(o.conjA)
	return dispatch(in[0],
		func() (G.Value, error) {
			complexMulKernel(data[float32](in[0]), data[float32](in[1]), data[float32](out), s[0], s[1]/2, float32(sign))
			return out, nil
		},
		func() (G.Value, error) {
			complexMulKernel(data[float64](in[0]), data[float64](in[1]), data[float64](out), s[0], s[1]/2, sign)
			return out, nil
		})
}

func conjSign(conj bool) float64 {
	if conj {
		return -1
	}
	return 1
}

// complexMulKernel writes (a_re + i·sa·a_im)(b_re + i·b_im) for rows×k
// complex entries; an operand shorter than out is a broadcast single row.
func complexMulKernel[T Float](a, b, out []T, rows, k int, sa T) {
	n := 2 * k
	stA, stB := n, n
	if len(a) != len(out) {
		stA = 0
	}
	if len(b) != len(out) {
		stB = 0
	}
	parallelFor(rows, rows*n*4, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			ar, ai := a[i*stA:i*stA+k], a[i*stA+k:i*stA+n]
			br, bi := b[i*stB:i*stB+k], b[i*stB+k:i*stB+n]
			or, oi := out[i*n:i*n+k], out[i*n+k:(i+1)*n]
			for j := range or {
				cr, ci := ar[j], sa*ai[j]
				or[j] = cr*br[j] - ci*bi[j]
				oi[j] = cr*bi[j] + ci*br[j]
			}
		}
	})
}

// SymDiff: for z = c⊙b and an output gradient g (as a complex number),
// ∂L/∂b = conj(c)⊙g and ∂L/∂c = conj(b)⊙g; a conjugated a flips the sign
// of its imaginary gradient.
func (o *complexMulOp) SymDiff(in G.Nodes, _, grad *G.Node) (G.Nodes, error) {
	ga, err := apply(&complexMulGradOp{base: newBase("ComplexMulGrad0"), conjA: o.conjA, which: 0}, grad, in[0], in[1])
	if err != nil {
		return nil, err
	}
	gb, err := apply(&complexMulGradOp{base: newBase("ComplexMulGrad1"), conjA: o.conjA, which: 1}, grad, in[0], in[1])
	if err != nil {
		return nil, err
	}
	return G.Nodes{ga, gb}, nil
}

// complexMulGradOp is the gradient of ComplexMul with respect to operand
// which, summed over rows when that operand was broadcast.
type complexMulGradOp struct {
	base
	conjA bool
	which int
}

func (o *complexMulGradOp) Arity() int         { return 3 }
func (o *complexMulGradOp) Type() hm.Type      { return fnType(2, 2, 2, 2) }
func (o *complexMulGradOp) DiffWRT(int) []bool { return []bool{false, false, false} }
func (o *complexMulGradOp) SymDiff(G.Nodes, *G.Node, *G.Node) (G.Nodes, error) {
	return nil, errNoSecondOrder(o)
}
func (o *complexMulGradOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return dims(in[1+o.which]).Clone(), nil
}

func (o *complexMulGradOp) Do(in ...G.Value) (G.Value, error) {
	gs := shapeOf(in[0])
	out := o.buffer(in[0].Dtype(), shapeOf(in[1+o.which])...)
	sign := conjSign(o.conjA)
	// The partner of operand which, as it enters the product.
	partner, partnerSign, outSign := 1, 1.0, 1.0
	if o.which == 1 {
		partner, partnerSign = 0, sign
	} else {
		outSign = sign
	}
	return dispatch(in[0],
		func() (G.Value, error) {
			complexMulGradKernel(data[float32](in[0]), data[float32](in[1+partner]), data[float32](out), gs[0], gs[1]/2, float32(partnerSign), float32(outSign))
			return out, nil
		},
		func() (G.Value, error) {
			complexMulGradKernel(data[float64](in[0]), data[float64](in[1+partner]), data[float64](out), gs[0], gs[1]/2, partnerSign, outSign)
			return out, nil
		})
}

// complexMulGradKernel writes conj(p)⊙g, with p = p_re + i·sp·p_im and the
// imaginary half of the result scaled by so (−1 undoes a conjugated
// operand). A single-row out accumulates over the rows of g; a single-row p
// is broadcast.
func complexMulGradKernel[T Float](g, p, out []T, rows, k int, sp, so T) {
	n := 2 * k
	stP := n
	if len(p) != len(g) {
		stP = 0
	}
	// row writes (acc false) or adds the gradient of row i into or, oi.
	row := func(i int, or, oi []T, acc bool) {
		gr, gi := g[i*n:i*n+k], g[i*n+k:(i+1)*n]
		pr, pi := p[i*stP:i*stP+k], p[i*stP+k:i*stP+n]
		if acc {
			for j := range or {
				cr, ci := pr[j], sp*pi[j]
				or[j] += cr*gr[j] + ci*gi[j]
				oi[j] += so * (cr*gi[j] - ci*gr[j])
			}
			return
		}
		for j := range or {
			cr, ci := pr[j], sp*pi[j]
			or[j] = cr*gr[j] + ci*gi[j]
			oi[j] = so * (cr*gi[j] - ci*gr[j])
		}
	}
	if len(out) != len(g) { // broadcast operand: sum its gradient over rows
		clear(out)
		for i := 0; i < rows; i++ {
			row(i, out[:k], out[k:n], true)
		}
		return
	}
	parallelFor(rows, rows*n*4, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			row(i, out[i*n:i*n+k], out[i*n+k:(i+1)*n], false)
		}
	})
}
