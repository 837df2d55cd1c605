package graph

import (
	"fmt"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// GatedLogHalves maps each row [a | b] of x (two halves of equal width) to
// [a | a + log σ(b)]: the log-values of a non-negative pair (u, u·σ(b))
// whose second member never exceeds the first. It is ComplEx+'s
// reparametrisation (paper, appendix C.2: Im = Re·σ(θ)), GatedLogParts
// with two parts and a cap of 1.
func GatedLogHalves(x *G.Node) (*G.Node, error) { return GatedLogParts(x, 2, 0) }

// GatedLogParts maps each row [a | b₁ | … | b_{n−1}] of x (parts of equal
// width) to [a | a + logCap + log σ(b₁) | … ]: the log-values of n
// non-negative numbers u, u·c·σ(b₁), … each of whose later members is at
// most c = exp(logCap) times the first. In one pass over the table,
// forward and backward, where slicing, LogSigmoid, Add and ConcatCols made
// five passes each way and as many table-sized buffers.
func GatedLogParts(x *G.Node, parts int, logCap float64) (*G.Node, error) {
	if x.Dims() != 2 || parts < 2 || x.Shape()[1]%parts != 0 {
		return nil, fmt.Errorf("graph.GatedLogParts: want a matrix whose columns cut into %d parts, got %v", parts, x.Shape())
	}
	return apply(&gatedOp{base: newBase("GatedLogParts"), parts: parts, logCap: logCap}, x)
}

type gatedOp struct {
	base
	parts  int
	logCap float64
}

func (o *gatedOp) Arity() int                                        { return 1 }
func (o *gatedOp) Type() hm.Type                                     { return fnType(2, 2) }
func (o *gatedOp) DiffWRT(int) []bool                                { return []bool{true} }
func (o *gatedOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) { return dims(in[0]).Clone(), nil }

func (o *gatedOp) Do(in ...G.Value) (G.Value, error) {
	s := shapeOf(in[0])
	out := o.buffer(in[0].Dtype(), s...)
	return dispatch(in[0],
		func() (G.Value, error) {
			gatedForward(data[float32](in[0]), data[float32](out), s[0], s[1]/o.parts, o.parts, float32(o.logCap))
			return out, nil
		},
		func() (G.Value, error) {
			gatedForward(data[float64](in[0]), data[float64](out), s[0], s[1]/o.parts, o.parts, o.logCap)
			return out, nil
		})
}

func (o *gatedOp) SymDiff(in G.Nodes, _, grad *G.Node) (G.Nodes, error) {
	g, err := apply(&gatedGradOp{base: newBase("GatedLogPartsGrad"), parts: o.parts}, grad, in[0])
	return G.Nodes{g}, err
}

// gatedForward writes [a | a + logCap + log σ(b₁) | …] row by row; the
// log σ of each b part goes through the unary kernel (vectorised for
// float32).
func gatedForward[T Float](x, out []T, rows, k, parts int, logCap T) {
	n := parts * k
	parallelFor(rows, rows*n*8, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			a := x[n*r : n*r+k]
			copy(out[n*r:n*r+k], a)
			for p := 1; p < parts; p++ {
				b, ob := x[n*r+p*k:n*r+(p+1)*k], out[n*r+p*k:n*r+(p+1)*k]
				unaryKernel(kindLogSigmoid, 0, b, ob)
				for i, v := range a {
					ob[i] += v + logCap
				}
			}
		}
	})
}

// gatedGradOp is the gradient of GatedLogParts: for an output gradient
// [gₐ | g₁ | …], the input's is [gₐ + Σ gᵢ | g₁·σ(−b₁) | …].
type gatedGradOp struct {
	base
	parts int
}

func (o *gatedGradOp) Arity() int         { return 2 }
func (o *gatedGradOp) Type() hm.Type      { return fnType(2, 2, 2) }
func (o *gatedGradOp) DiffWRT(int) []bool { return []bool{false, false} }
func (o *gatedGradOp) SymDiff(G.Nodes, *G.Node, *G.Node) (G.Nodes, error) {
	return nil, errNoSecondOrder(o)
}
func (o *gatedGradOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return dims(in[1]).Clone(), nil
}

func (o *gatedGradOp) Do(in ...G.Value) (G.Value, error) {
	s := shapeOf(in[1])
	out := o.buffer(in[1].Dtype(), s...)
	return dispatch(in[1],
		func() (G.Value, error) {
			gatedBackward(data[float32](in[0]), data[float32](in[1]), data[float32](out), s[0], s[1]/o.parts, o.parts)
			return out, nil
		},
		func() (G.Value, error) {
			gatedBackward(data[float64](in[0]), data[float64](in[1]), data[float64](out), s[0], s[1]/o.parts, o.parts)
			return out, nil
		})
}

func gatedBackward[T Float](g, x, out []T, rows, k, parts int) {
	n := parts * k
	parallelFor(rows, rows*n*8, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			oa := out[n*r : n*r+k]
			copy(oa, g[n*r:n*r+k])
			for p := 1; p < parts; p++ {
				gb, b, ob := g[n*r+p*k:n*r+(p+1)*k], x[n*r+p*k:n*r+(p+1)*k], out[n*r+p*k:n*r+(p+1)*k]
				for i, v := range gb {
					oa[i] += v
				}
				unaryGradKernel(kindLogSigmoid, 0, gb, b, b, ob) // σ(−b) needs b only
			}
		}
	})
}
