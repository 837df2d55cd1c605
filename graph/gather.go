package graph

import (
	"fmt"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// gatherOp selects rows of a table: the embeddings of a batch of entities or
// relations. Its gradient with respect to the table is row-sparse; Backward
// keeps it sparse and scatter-adds it into the table's dense gradient once,
// instead of materialising a |E|×d matrix per use as Gorgonia's ByIndices
// does (which is also wrong on the innermost axis).
type gatherOp struct{ base }

// IndexVector returns an int vector node named name that reads backing:
// the index input of Gather. Writing new indices into backing and running
// a compiled program again re-binds the batch without rebuilding the graph.
func IndexVector(g *G.ExprGraph, name string, backing []int) *G.Node {
	return G.NewVector(g, tensor.Int, G.WithShape(len(backing)), G.WithName(name),
		G.WithValue(tensor.New(tensor.WithShape(len(backing)), tensor.WithBacking(backing))))
}

// Gather returns the rows table[idx[i]] as an len(idx)×k matrix.
func Gather(table, idx *G.Node) (*G.Node, error) {
	if table.Dims() != 2 || idx.Dims() != 1 || idx.Dtype() != tensor.Int {
		return nil, fmt.Errorf("graph.Gather: need a matrix and an int vector, got %v and %v (%v)", table.Shape(), idx.Shape(), idx.Dtype())
	}
	return apply(&gatherOp{base: newBase("Gather")}, table, idx)
}

func (o *gatherOp) Arity() int         { return 2 }
func (o *gatherOp) Type() hm.Type      { return hm.NewFnType(tensorType(2), intVecType, tensorType(2)) }
func (o *gatherOp) DiffWRT(int) []bool { return []bool{true, false} }
func (o *gatherOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{dims(in[1])[0], dims(in[0])[1]}, nil
}

func (o *gatherOp) Do(in ...G.Value) (G.Value, error) {
	s := shapeOf(in[0])
	idx := ints(in[1])
	for i, r := range idx {
		if r < 0 || r >= s[0] {
			return nil, fmt.Errorf("%v: index %d at position %d outside [0,%d)", o, r, i, s[0])
		}
	}
	out := o.buffer(in[0].Dtype(), len(idx), s[1])
	return dispatch(in[0],
		func() (G.Value, error) {
			gatherRows(data[float32](in[0]), idx, s[1], data[float32](out))
			return out, nil
		},
		func() (G.Value, error) {
			gatherRows(data[float64](in[0]), idx, s[1], data[float64](out))
			return out, nil
		})
}

func gatherRows[T Float](table []T, idx []int, k int, out []T) {
	for i, r := range idx {
		copy(out[i*k:(i+1)*k], table[r*k:(r+1)*k])
	}
}

// sparseGrad reports the row-sparse gradient of the table: rows grad at idx.
func (o *gatherOp) sparseGrad(in G.Nodes, grad *G.Node) (rows, idx *G.Node) { return grad, in[1] }

// SymDiff serves Gorgonia's own G.Grad, which knows nothing of sparse
// gradients: it scatters into a dense table-shaped gradient.
func (o *gatherOp) SymDiff(in G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	g, err := apply(&accumulateOp{base: newBase("ScatterAdd"), nSparse: 1, shape: in[0].Shape()}, grad, in[1])
	return G.Nodes{g, nil}, err
}

// sparseGrader is implemented by ops whose gradient with respect to their
// first input is a set of rows to scatter-add.
type sparseGrader interface {
	sparseGrad(in G.Nodes, grad *G.Node) (rows, idx *G.Node)
}

// accumulateOp sums the gradient contributions of a node used several
// times: nDense dense tensors followed by (rows, idx) pairs to scatter-add.
// With inPlace set it adds into the first dense input's buffer, which its
// producer owns and nobody else reads; otherwise into its own buffer.
type accumulateOp struct {
	base
	nDense  int
	nSparse int
	inPlace bool
	shape   tensor.Shape
}

func (o *accumulateOp) Arity() int { return -1 }
func (o *accumulateOp) Type() hm.Type {
	// Variadic: the type lists every actual operand.
	r := len(o.shape)
	var ts []hm.Type
	for i := 0; i < o.nDense; i++ {
		ts = append(ts, tensorType(r))
	}
	for i := 0; i < o.nSparse; i++ {
		ts = append(ts, tensorType(2), intVecType)
	}
	return hm.NewFnType(append(ts, tensorType(r))...)
}
func (o *accumulateOp) DiffWRT(n int) []bool { return make([]bool, n) }
func (o *accumulateOp) SymDiff(G.Nodes, *G.Node, *G.Node) (G.Nodes, error) {
	return nil, errNoSecondOrder(o)
}
func (o *accumulateOp) InferShape(...G.DimSizer) (tensor.Shape, error) { return o.shape.Clone(), nil }

func (o *accumulateOp) Do(in ...G.Value) (G.Value, error) {
	if isScalar(in[0]) {
		var s float64
		for _, v := range in {
			s += scalarOf(v)
		}
		return dispatch(in[0],
			func() (G.Value, error) { return scalarValue(float32(s)), nil },
			func() (G.Value, error) { return scalarValue(s), nil })
	}
	var out *tensor.Dense
	if o.inPlace && o.nDense > 0 {
		out = in[0].(*tensor.Dense)
	} else {
		dt := in[0].Dtype()
		out = o.buffer(dt, o.shape...)
	}
	return dispatch(in[0],
		func() (G.Value, error) { return out, accumulate[float32](o, in, out) },
		func() (G.Value, error) { return out, accumulate[float64](o, in, out) })
}

func accumulate[T Float](o *accumulateOp, in []G.Value, out *tensor.Dense) error {
	y := data[T](out)
	start := 0
	if o.inPlace && o.nDense > 0 {
		start = 1
	} else {
		clear(y)
	}
	for _, v := range in[start:o.nDense] {
		x := data[T](v)
		parallelFor(len(y), len(y), func(lo, hi int) {
			for i := lo; i < hi; i++ {
				y[i] += x[i]
			}
		})
	}
	for p := o.nDense; p+1 < len(in); p += 2 {
		k := o.shape[1]
		rows, idx := data[T](in[p]), ints(in[p+1])
		for i, r := range idx {
			yr, xr := y[r*k:(r+1)*k], rows[i*k:(i+1)*k]
			for j := range yr {
				yr[j] += xr[j]
			}
		}
	}
	return nil
}

// sliceColsOp selects the columns [from, to) of a matrix: the real or the
// imaginary half of complex embeddings stored as [re | im].
type sliceColsOp struct {
	base
	from, to int
}

// SliceCols returns the columns [from, to) of the matrix x.
func SliceCols(x *G.Node, from, to int) (*G.Node, error) {
	if x.Dims() != 2 || from < 0 || to > x.Shape()[1] || from >= to {
		return nil, fmt.Errorf("graph.SliceCols: columns [%d,%d) of %v", from, to, x.Shape())
	}
	return apply(&sliceColsOp{base: newBase(fmt.Sprintf("SliceCols[%d:%d]", from, to)), from: from, to: to}, x)
}

func (o *sliceColsOp) Arity() int         { return 1 }
func (o *sliceColsOp) Type() hm.Type      { return fnType(2, 2) }
func (o *sliceColsOp) DiffWRT(int) []bool { return []bool{true} }
func (o *sliceColsOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{dims(in[0])[0], o.to - o.from}, nil
}

func (o *sliceColsOp) Do(in ...G.Value) (G.Value, error) {
	s := shapeOf(in[0])
	w := o.to - o.from
	out := o.buffer(in[0].Dtype(), s[0], w)
	return dispatch(in[0],
		func() (G.Value, error) {
			copyCols(data[float32](in[0]), s[1], o.from, data[float32](out), w, 0, w, s[0])
			return out, nil
		},
		func() (G.Value, error) {
			copyCols(data[float64](in[0]), s[1], o.from, data[float64](out), w, 0, w, s[0])
			return out, nil
		})
}

// copyCols copies w columns starting at column fromSrc of src (row length
// ldSrc) to column fromDst of dst (row length ldDst), for n rows.
func copyCols[T Float](src []T, ldSrc, fromSrc int, dst []T, ldDst, fromDst, w, n int) {
	for i := 0; i < n; i++ {
		copy(dst[i*ldDst+fromDst:i*ldDst+fromDst+w], src[i*ldSrc+fromSrc:i*ldSrc+fromSrc+w])
	}
}

func (o *sliceColsOp) SymDiff(in G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	g, err := apply(&padColsOp{base: newBase("PadCols"), from: o.from, width: in[0].Shape()[1]}, grad)
	return G.Nodes{g}, err
}

// padColsOp places its input at columns [from, from+w) of a zero matrix.
type padColsOp struct {
	base
	from, width int
}

func (o *padColsOp) Arity() int         { return 1 }
func (o *padColsOp) Type() hm.Type      { return fnType(2, 2) }
func (o *padColsOp) DiffWRT(int) []bool { return []bool{false} }
func (o *padColsOp) SymDiff(G.Nodes, *G.Node, *G.Node) (G.Nodes, error) {
	return nil, errNoSecondOrder(o)
}
func (o *padColsOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{dims(in[0])[0], o.width}, nil
}

func (o *padColsOp) Do(in ...G.Value) (G.Value, error) {
	s := shapeOf(in[0])
	out := o.buffer(in[0].Dtype(), s[0], o.width)
	return dispatch(in[0],
		func() (G.Value, error) {
			y := data[float32](out)
			clear(y)
			copyCols(data[float32](in[0]), s[1], 0, y, o.width, o.from, s[1], s[0])
			return out, nil
		},
		func() (G.Value, error) {
			y := data[float64](out)
			clear(y)
			copyCols(data[float64](in[0]), s[1], 0, y, o.width, o.from, s[1], s[0])
			return out, nil
		})
}

// concatColsOp joins matrices with equal row counts side by side.
type concatColsOp struct {
	base
	n int
}

// ConcatCols returns [x₁ | x₂ | …] for matrices with the same number of rows.
func ConcatCols(xs ...*G.Node) (*G.Node, error) {
	if len(xs) == 0 {
		return nil, fmt.Errorf("graph.ConcatCols: nothing to concatenate")
	}
	for _, x := range xs {
		if x.Dims() != 2 || x.Shape()[0] != xs[0].Shape()[0] {
			return nil, fmt.Errorf("graph.ConcatCols: %v does not match %v", x.Shape(), xs[0].Shape())
		}
	}
	return apply(&concatColsOp{base: newBase("ConcatCols"), n: len(xs)}, xs...)
}

func (o *concatColsOp) Arity() int { return -1 }
func (o *concatColsOp) Type() hm.Type {
	d := make([]int, o.n+1)
	for i := range d {
		d[i] = 2
	}
	return fnType(d...)
}
func (o *concatColsOp) DiffWRT(n int) []bool { return trues(n) }
func (o *concatColsOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	w := 0
	for _, s := range in {
		w += dims(s)[1]
	}
	return tensor.Shape{dims(in[0])[0], w}, nil
}

func trues(n int) []bool {
	b := make([]bool, n)
	for i := range b {
		b[i] = true
	}
	return b
}

func (o *concatColsOp) Do(in ...G.Value) (G.Value, error) {
	rows, w := shapeOf(in[0])[0], 0
	for _, v := range in {
		w += shapeOf(v)[1]
	}
	out := o.buffer(in[0].Dtype(), rows, w)
	return dispatch(in[0],
		func() (G.Value, error) { concatCols[float32](in, data[float32](out), rows, w); return out, nil },
		func() (G.Value, error) { concatCols[float64](in, data[float64](out), rows, w); return out, nil })
}

func concatCols[T Float](in []G.Value, out []T, rows, w int) {
	at := 0
	for _, v := range in {
		c := shapeOf(v)[1]
		copyCols(data[T](v), c, 0, out, w, at, c, rows)
		at += c
	}
}

func (o *concatColsOp) SymDiff(in G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	gs := make(G.Nodes, len(in))
	at := 0
	for i, x := range in {
		c := x.Shape()[1]
		g, err := SliceCols(grad, at, at+c)
		if err != nil {
			return nil, err
		}
		gs[i] = g
		at += c
	}
	return gs, nil
}
