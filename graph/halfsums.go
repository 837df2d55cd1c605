package graph

import (
	"fmt"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// HalfSums is PartSums of rows cut into two halves: ComplEx+'s log-space
// query.
func HalfSums(a, b *G.Node, pairs [][2]int) (*G.Node, error) { return PartSums(a, b, 2, pairs) }

// PartSums returns, for rows a and b of parts·k columns stored as parts
// of k, the matrix of len(pairs)·k columns whose block t is
//
//	a's part pairs[t][0] + b's part pairs[t][1].
//
// Either operand may have a single row, broadcast over the other's rows.
// It is the log-space query of a non-negative hypercomplex score (a sum of
// log-products of parts) in one pass forward and one per operand
// backward, where slicing the parts, an Add per block and ConcatCols each
// owned a B×n buffer forward and again backward: at d = 1000 and B = 5000
// those buffers held gigabytes.
func PartSums(a, b *G.Node, parts int, pairs [][2]int) (*G.Node, error) {
	if a == nil || b == nil {
		return nil, fmt.Errorf("graph.PartSums: nil operand")
	}
	if a.Dims() != 2 || b.Dims() != 2 || parts < 1 || a.Shape()[1]%parts != 0 || a.Shape()[1] != b.Shape()[1] {
		return nil, fmt.Errorf("graph.PartSums: want matrices of equal width cut into %d parts, got %v and %v", parts, a.Shape(), b.Shape())
	}
	if _, err := broadcastShape(a.Shape(), b.Shape()); err != nil {
		return nil, fmt.Errorf("graph.PartSums: %w", err)
	}
	if len(pairs) == 0 {
		return nil, fmt.Errorf("graph.PartSums: no pairs of parts")
	}
	for t, p := range pairs {
		if min(p[0], p[1]) < 0 || max(p[0], p[1]) >= parts {
			return nil, fmt.Errorf("graph.PartSums: pair %d is %v; a part is 0 to %d", t, p, parts-1)
		}
	}
	return apply(&halfSumsOp{base: newBase("PartSums"), parts: parts, pairs: append([][2]int(nil), pairs...)}, a, b)
}

type halfSumsOp struct {
	base
	parts int
	pairs [][2]int
}

func (o *halfSumsOp) Arity() int         { return 2 }
func (o *halfSumsOp) Type() hm.Type      { return fnType(2, 2, 2) }
func (o *halfSumsOp) DiffWRT(int) []bool { return []bool{true, true} }
func (o *halfSumsOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	s, err := broadcastShape(dims(in[0]), dims(in[1]))
	if err != nil {
		return nil, err
	}
	return tensor.Shape{s[0], s[1] / o.parts * len(o.pairs)}, nil
}

func (o *halfSumsOp) Do(in ...G.Value) (G.Value, error) {
	s, err := broadcastShape(shapeOf(in[0]), shapeOf(in[1]))
	if err != nil {
		return nil, fmt.Errorf("%v: %w", o, err)
	}
	rows, k := s[0], s[1]/o.parts
	out := o.buffer(in[0].Dtype(), rows, k*len(o.pairs))
	ra, rb := shapeOf(in[0])[0], shapeOf(in[1])[0]
	return dispatch(in[0],
		func() (G.Value, error) {
			halfSumsKernel(data[float32](in[0]), data[float32](in[1]), data[float32](out), rows, k, o.parts, ra != rows, rb != rows, o.pairs)
			return out, nil
		},
		func() (G.Value, error) {
			halfSumsKernel(data[float64](in[0]), data[float64](in[1]), data[float64](out), rows, k, o.parts, ra != rows, rb != rows, o.pairs)
			return out, nil
		})
}

// halfSumsKernel writes the blocks of PartSums for rows rows of parts of
// k columns; a broadcast operand is read at row 0 for every row.
func halfSumsKernel[T Float](a, b, out []T, rows, k, parts int, bcastA, bcastB bool, pairs [][2]int) {
	n, m := parts*k, k*len(pairs)
	stA, stB := n, n
	if bcastA {
		stA = 0
	}
	if bcastB {
		stB = 0
	}
	parallelFor(rows, rows*m*3, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			for t, p := range pairs {
				ah := a[i*stA+p[0]*k : i*stA+(p[0]+1)*k]
				bh := b[i*stB+p[1]*k : i*stB+(p[1]+1)*k]
				oh := out[i*m+t*k : i*m+(t+1)*k]
				for j := range oh {
					oh[j] = ah[j] + bh[j]
				}
			}
		}
	})
}

// SymDiff: each part of an operand receives the sum of the output blocks
// that read it.
func (o *halfSumsOp) SymDiff(in G.Nodes, _, grad *G.Node) (G.Nodes, error) {
	var gs G.Nodes
	for which := range 2 {
		g, err := apply(&halfSumsGradOp{base: newBase(fmt.Sprintf("PartSumsGrad%d", which)), parts: o.parts, pairs: o.pairs, which: which}, grad, in[which])
		if err != nil {
			return nil, err
		}
		gs = append(gs, g)
	}
	return gs, nil
}

// halfSumsGradOp is the gradient of PartSums with respect to operand
// which, summed over rows when that operand was broadcast. Its second
// input is the operand, read only for its shape.
type halfSumsGradOp struct {
	base
	parts int
	pairs [][2]int
	which int
}

func (o *halfSumsGradOp) Arity() int         { return 2 }
func (o *halfSumsGradOp) Type() hm.Type      { return fnType(2, 2, 2) }
func (o *halfSumsGradOp) DiffWRT(int) []bool { return []bool{false, false} }
func (o *halfSumsGradOp) SymDiff(G.Nodes, *G.Node, *G.Node) (G.Nodes, error) {
	return nil, errNoSecondOrder(o)
}
func (o *halfSumsGradOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return dims(in[1]).Clone(), nil
}

func (o *halfSumsGradOp) Do(in ...G.Value) (G.Value, error) {
	gs, xs := shapeOf(in[0]), shapeOf(in[1])
	rows, k := gs[0], xs[1]/o.parts
	if gs[1] != k*len(o.pairs) || (xs[0] != rows && xs[0] != 1) {
		return nil, fmt.Errorf("%v: gradient %v does not match operand %v", o, gs, xs)
	}
	out := o.buffer(in[0].Dtype(), xs...)
	reduce := xs[0] != rows
	return dispatch(in[0],
		func() (G.Value, error) {
			halfSumsGradKernel(data[float32](in[0]), data[float32](out), rows, k, o.parts, reduce, o.pairs, o.which)
			return out, nil
		},
		func() (G.Value, error) {
			halfSumsGradKernel(data[float64](in[0]), data[float64](out), rows, k, o.parts, reduce, o.pairs, o.which)
			return out, nil
		})
}

// halfSumsGradKernel writes, for each part h of the operand which, the sum
// of g's blocks t with pairs[t][which] = h (zero for a part no block
// reads). With reduce, out is a single row accumulating over g's rows.
func halfSumsGradKernel[T Float](g, out []T, rows, k, parts int, reduce bool, pairs [][2]int, which int) {
	n, m := parts*k, k*len(pairs)
	// row adds the blocks of g's row i into the halves of or.
	row := func(i int, or []T) {
		for t, p := range pairs {
			gh := g[i*m+t*k : i*m+(t+1)*k]
			oh := or[p[which]*k : (p[which]+1)*k]
			for j := range oh {
				oh[j] += gh[j]
			}
		}
	}
	if reduce {
		clear(out)
		for i := 0; i < rows; i++ {
			row(i, out)
		}
		return
	}
	parallelFor(rows, rows*m*3, func(lo, hi int) {
		clear(out[lo*n : hi*n])
		for i := lo; i < hi; i++ {
			row(i, out[i*n:(i+1)*n])
		}
	})
}
