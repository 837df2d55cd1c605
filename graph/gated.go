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
// reparametrisation (paper, appendix C.2: Im = Re·σ(θ)) in one pass over
// the table, forward and backward, where slicing, LogSigmoid, Add and
// ConcatCols made five passes each way and as many table-sized buffers.
func GatedLogHalves(x *G.Node) (*G.Node, error) {
	if x.Dims() != 2 || x.Shape()[1]%2 != 0 {
		return nil, fmt.Errorf("graph.GatedLogHalves: want a matrix with an even number of columns, got %v", x.Shape())
	}
	return apply(&gatedOp{base: newBase("GatedLogHalves")}, x)
}

type gatedOp struct{ base }

func (o *gatedOp) Arity() int                                        { return 1 }
func (o *gatedOp) Type() hm.Type                                     { return fnType(2, 2) }
func (o *gatedOp) DiffWRT(int) []bool                                { return []bool{true} }
func (o *gatedOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) { return dims(in[0]).Clone(), nil }

func (o *gatedOp) Do(in ...G.Value) (G.Value, error) {
	s := shapeOf(in[0])
	out := o.buffer(in[0].Dtype(), s...)
	return dispatch(in[0],
		func() (G.Value, error) {
			gatedForward(data[float32](in[0]), data[float32](out), s[0], s[1]/2)
			return out, nil
		},
		func() (G.Value, error) {
			gatedForward(data[float64](in[0]), data[float64](out), s[0], s[1]/2)
			return out, nil
		})
}

func (o *gatedOp) SymDiff(in G.Nodes, _, grad *G.Node) (G.Nodes, error) {
	g, err := apply(&gatedGradOp{base: newBase("GatedLogHalvesGrad")}, grad, in[0])
	return G.Nodes{g}, err
}

// gatedForward writes [a | a + log σ(b)] row by row; the log σ of each row's
// b half goes through the unary kernel (vectorised for float32).
func gatedForward[T Float](x, out []T, rows, k int) {
	parallelFor(rows, rows*k*16, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			a, b := x[2*k*r:2*k*r+k], x[2*k*r+k:2*k*(r+1)]
			oa, ob := out[2*k*r:2*k*r+k], out[2*k*r+k:2*k*(r+1)]
			copy(oa, a)
			unaryKernel(kindLogSigmoid, 0, b, ob)
			for i, v := range a {
				ob[i] += v
			}
		}
	})
}

// gatedGradOp is the gradient of GatedLogHalves: for an output gradient
// [gₐ | g_b], the input's is [gₐ + g_b | g_b·σ(−b)].
type gatedGradOp struct{ base }

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
			gatedBackward(data[float32](in[0]), data[float32](in[1]), data[float32](out), s[0], s[1]/2)
			return out, nil
		},
		func() (G.Value, error) {
			gatedBackward(data[float64](in[0]), data[float64](in[1]), data[float64](out), s[0], s[1]/2)
			return out, nil
		})
}

func gatedBackward[T Float](g, x, out []T, rows, k int) {
	parallelFor(rows, rows*k*16, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			ga, gb := g[2*k*r:2*k*r+k], g[2*k*r+k:2*k*(r+1)]
			b := x[2*k*r+k : 2*k*(r+1)]
			oa, ob := out[2*k*r:2*k*r+k], out[2*k*r+k:2*k*(r+1)]
			for i, v := range gb {
				oa[i] = ga[i] + v
			}
			unaryGradKernel(kindLogSigmoid, 0, gb, b, b, ob) // σ(−b) needs b only
		}
	})
}
