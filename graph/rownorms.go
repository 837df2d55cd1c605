package graph

import (
	"fmt"
	"math"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// RowModulusPowers returns, for each row of x, Σ_j m_j^p, where a row holds
// parts blocks of k columns side by side and
//
//	m_j = sqrt(Σ_b x[b·k + j]²)
//
// is the modulus of its j-th element across the blocks: with parts = 1 the
// row's p-norm to the power p, with parts = 2 and rows [re | im] the p-th
// powers of k complex moduli. It is the weighted-Lp regulariser of
// embeddings, N3 (p = 3, Lacroix et al. 2018) and F2 (p = 2), in one pass
// forward and one backward; p ≥ 2 keeps the gradient p·m^(p−2)·x finite
// where a modulus is zero.
func RowModulusPowers(x *G.Node, parts int, p float64) (*G.Node, error) {
	if x == nil {
		return nil, fmt.Errorf("graph.RowModulusPowers: nil operand")
	}
	if parts < 1 || x.Dims() != 2 || x.Shape()[1]%parts != 0 {
		return nil, fmt.Errorf("graph.RowModulusPowers: want a matrix whose columns split into %d blocks, got %v", parts, x.Shape())
	}
	if !(p >= 2) || math.IsInf(p, 0) {
		return nil, fmt.Errorf("graph.RowModulusPowers: power %g; want a finite p ≥ 2", p)
	}
	return apply(&rowModulusPowersOp{base: newBase("RowModulusPowers"), parts: parts, p: p}, x)
}

type rowModulusPowersOp struct {
	base
	parts int
	p     float64
}

func (o *rowModulusPowersOp) Arity() int         { return 1 }
func (o *rowModulusPowersOp) Type() hm.Type      { return fnType(2, 1) }
func (o *rowModulusPowersOp) DiffWRT(int) []bool { return []bool{true} }
func (o *rowModulusPowersOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{dims(in[0])[0]}, nil
}

func (o *rowModulusPowersOp) Do(in ...G.Value) (G.Value, error) {
	s := shapeOf(in[0])
	out := o.buffer(in[0].Dtype(), s[0])
	return dispatch(in[0],
		func() (G.Value, error) {
			rowModulusPowers(data[float32](in[0]), data[float32](out), s[1]/o.parts, o.parts, o.p)
			return out, nil
		},
		func() (G.Value, error) {
			rowModulusPowers(data[float64](in[0]), data[float64](out), s[1]/o.parts, o.parts, o.p)
			return out, nil
		})
}

// rowModulusPowers sums in float64: a row of a thousand float32 terms
// would otherwise lose digits the regulariser's gradient does not.
func rowModulusPowers[T Float](x, out []T, k, parts int, p float64) {
	n := k * parts
	parallelFor(len(out), len(out)*n*4, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			row := x[i*n : (i+1)*n]
			var sum float64
			for j := range k {
				sum += modulusPower(squaredModulus(row, j, k, parts), p)
			}
			out[i] = T(sum)
		}
	})
}

// squaredModulus is m_j² of a row of parts blocks of k columns.
func squaredModulus[T Float](row []T, j, k, parts int) float64 {
	sq := 0.0
	for b := range parts {
		v := float64(row[b*k+j])
		sq += v * v
	}
	return sq
}

// modulusPower is m^p for m² = sq, exact for the common N3 and F2.
func modulusPower(sq, p float64) float64 {
	switch p {
	case 2:
		return sq
	case 3:
		return sq * math.Sqrt(sq)
	}
	return math.Pow(sq, p/2)
}

// modulusPowerSlope is ∂m^p/∂x ÷ x = p·m^(p−2) for m² = sq, with m^0 = 1
// also where m = 0 (p = 2).
func modulusPowerSlope(sq, p float64) float64 {
	switch p {
	case 2:
		return 2
	case 3:
		return 3 * math.Sqrt(sq)
	}
	return p * math.Pow(sq, p/2-1)
}

// SymDiff: ∂/∂x[i, b·k+j] = g_i · p · m_ij^(p−2) · x[i, b·k+j].
func (o *rowModulusPowersOp) SymDiff(in G.Nodes, _, grad *G.Node) (G.Nodes, error) {
	g, err := apply(&rowModulusPowersGradOp{base: newBase("RowModulusPowersGrad"), parts: o.parts, p: o.p}, grad, in[0])
	return G.Nodes{g}, err
}

type rowModulusPowersGradOp struct {
	base
	parts int
	p     float64
}

func (o *rowModulusPowersGradOp) Arity() int         { return 2 }
func (o *rowModulusPowersGradOp) Type() hm.Type      { return fnType(1, 2, 2) }
func (o *rowModulusPowersGradOp) DiffWRT(int) []bool { return []bool{false, false} }
func (o *rowModulusPowersGradOp) SymDiff(G.Nodes, *G.Node, *G.Node) (G.Nodes, error) {
	return nil, errNoSecondOrder(o)
}
func (o *rowModulusPowersGradOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return dims(in[1]).Clone(), nil
}

func (o *rowModulusPowersGradOp) Do(in ...G.Value) (G.Value, error) {
	gs, xs := shapeOf(in[0]), shapeOf(in[1])
	if len(gs) != 1 || gs[0] != xs[0] {
		return nil, fmt.Errorf("%v: gradient %v does not match operand %v", o, gs, xs)
	}
	out := o.buffer(in[1].Dtype(), xs...)
	k := xs[1] / o.parts
	return dispatch(in[1],
		func() (G.Value, error) {
			rowModulusPowersGrad(data[float32](in[0]), data[float32](in[1]), data[float32](out), k, o.parts, o.p)
			return out, nil
		},
		func() (G.Value, error) {
			rowModulusPowersGrad(data[float64](in[0]), data[float64](in[1]), data[float64](out), k, o.parts, o.p)
			return out, nil
		})
}

func rowModulusPowersGrad[T Float](g, x, out []T, k, parts int, p float64) {
	n := k * parts
	parallelFor(len(g), len(g)*n*4, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			row, dst := x[i*n:(i+1)*n], out[i*n:(i+1)*n]
			gi := float64(g[i])
			for j := range k {
				f := gi * modulusPowerSlope(squaredModulus(row, j, k, parts), p)
				for b := range parts {
					dst[b*k+j] = T(f * float64(row[b*k+j]))
				}
			}
		}
	})
}
