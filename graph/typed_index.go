package graph

import (
	"fmt"
	"math"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Index, mask and lookup ops of constrained circuits: they map entities
// and relations to their classes, and zero (or send to −Inf) the entries of
// rows whose classes do not match.

// mapIndexOp maps an int vector through a lookup table (no gradient): the
// type a relation requires of its object, say.
type mapIndexOp struct {
	base
	table []int32
}

// MapIndex returns table[idx[i]] for each i, as an int vector.
func MapIndex(idx *G.Node, table []int32) (*G.Node, error) {
	if idx.Dtype() != tensor.Int || idx.Dims() != 1 {
		return nil, fmt.Errorf("graph.MapIndex: need an int vector, got %v %v", idx.Dtype(), idx.Shape())
	}
	return apply(&mapIndexOp{base: newBase("MapIndex"), table: table}, idx)
}

func (o *mapIndexOp) Arity() int         { return 1 }
func (o *mapIndexOp) Type() hm.Type      { return hm.NewFnType(intVecType, intVecType) }
func (o *mapIndexOp) DiffWRT(int) []bool { return []bool{false} }
func (o *mapIndexOp) SymDiff(G.Nodes, *G.Node, *G.Node) (G.Nodes, error) {
	return nil, fmt.Errorf("%v has no gradient", o)
}
func (o *mapIndexOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return dims(in[0]).Clone(), nil
}

func (o *mapIndexOp) Do(in ...G.Value) (G.Value, error) {
	idx := ints(in[0])
	out := o.buffer(tensor.Int, len(idx))
	y := out.Data().([]int)
	for i, v := range idx {
		if v < 0 || v >= len(o.table) {
			return nil, fmt.Errorf("%v: index %d outside [0,%d)", o, v, len(o.table))
		}
		y[i] = int(o.table[v])
	}
	return out, nil
}

// pairIndexOp maps two int vectors to a class through a 2-D lookup table
// (−1 where the pair has no class): the relations allowed between a
// subject's and an object's types.
type pairIndexOp struct {
	base
	left, right []int32
	table       map[[2]int32]int32
}

// PairIndex returns table[(left[a[i]], right[b[i]])], or −1 when absent.
func PairIndex(a, b *G.Node, left, right []int32, table map[[2]int32]int32) (*G.Node, error) {
	return apply(&pairIndexOp{base: newBase("PairIndex"), left: left, right: right, table: table}, a, b)
}

func (o *pairIndexOp) Arity() int         { return 2 }
func (o *pairIndexOp) Type() hm.Type      { return hm.NewFnType(intVecType, intVecType, intVecType) }
func (o *pairIndexOp) DiffWRT(int) []bool { return []bool{false, false} }
func (o *pairIndexOp) SymDiff(G.Nodes, *G.Node, *G.Node) (G.Nodes, error) {
	return nil, fmt.Errorf("%v has no gradient", o)
}
func (o *pairIndexOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return dims(in[0]).Clone(), nil
}

func (o *pairIndexOp) Do(in ...G.Value) (G.Value, error) {
	a, b := ints(in[0]), ints(in[1])
	out := o.buffer(tensor.Int, len(a))
	y := out.Data().([]int)
	for i := range a {
		c, ok := o.table[[2]int32{o.left[a[i]], o.right[b[i]]}]
		if !ok {
			c = -1
		}
		y[i] = int(c)
	}
	return out, nil
}

// maskOp sets x_ij to −Inf where column j's class differs from row i's
// required class: candidates that violate a domain constraint get no mass.
type maskOp struct {
	base
	colClass []int32
}

// MaskClasses returns x with −Inf wherever colClass[j] ≠ rowClass[i].
func MaskClasses(x, rowClass *G.Node, colClass []int32) (*G.Node, error) {
	if x.Dims() != 2 || x.Shape()[1] != len(colClass) {
		return nil, fmt.Errorf("graph.MaskClasses: %v scores for %d candidates", x.Shape(), len(colClass))
	}
	return apply(&maskOp{base: newBase("MaskClasses"), colClass: colClass}, x, rowClass)
}

func (o *maskOp) Arity() int         { return 2 }
func (o *maskOp) Type() hm.Type      { return hm.NewFnType(tensorType(2), intVecType, tensorType(2)) }
func (o *maskOp) DiffWRT(int) []bool { return []bool{true, false} }
func (o *maskOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return dims(in[0]).Clone(), nil
}

func (o *maskOp) Do(in ...G.Value) (G.Value, error) {
	s := shapeOf(in[0])
	out := o.buffer(in[0].Dtype(), s...)
	rc := ints(in[1])
	return dispatch(in[0],
		func() (G.Value, error) {
			mask(data[float32](in[0]), rc, o.colClass, data[float32](out), false)
			return out, nil
		},
		func() (G.Value, error) {
			mask(data[float64](in[0]), rc, o.colClass, data[float64](out), false)
			return out, nil
		})
}

// mask copies x into out with masked entries set to −Inf (or 0 for a
// gradient).
func mask[T Float](x []T, rowClass []int, colClass []int32, out []T, zero bool) {
	n := len(colClass)
	fill := T(math.Inf(-1))
	if zero {
		fill = 0
	}
	for i, c := range rowClass {
		xr, or := x[i*n:(i+1)*n], out[i*n:(i+1)*n]
		for j := range or {
			if int(colClass[j]) == c {
				or[j] = xr[j]
			} else {
				or[j] = fill
			}
		}
	}
}

func (o *maskOp) SymDiff(in G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	g, err := apply(&maskGradOp{base: newBase("MaskClassesGrad"), colClass: o.colClass}, grad, in[1])
	return G.Nodes{g, nil}, err
}

type maskGradOp struct {
	base
	colClass []int32
}

func (o *maskGradOp) Arity() int { return 2 }
func (o *maskGradOp) Type() hm.Type {
	return hm.NewFnType(tensorType(2), intVecType, tensorType(2))
}
func (o *maskGradOp) DiffWRT(int) []bool { return []bool{false, false} }
func (o *maskGradOp) SymDiff(G.Nodes, *G.Node, *G.Node) (G.Nodes, error) {
	return nil, errNoSecondOrder(o)
}
func (o *maskGradOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return dims(in[0]).Clone(), nil
}

func (o *maskGradOp) Do(in ...G.Value) (G.Value, error) {
	s := shapeOf(in[0])
	out := o.buffer(in[0].Dtype(), s...)
	rc := ints(in[1])
	return dispatch(in[0],
		func() (G.Value, error) {
			mask(data[float32](in[0]), rc, o.colClass, data[float32](out), true)
			return out, nil
		},
		func() (G.Value, error) {
			mask(data[float64](in[0]), rc, o.colClass, data[float64](out), true)
			return out, nil
		})
}

// maskEqualOp keeps x_i where a_i = b_i and sets −Inf elsewhere: a triple
// whose entity has another type than its relation requires gets no mass.
type maskEqualOp struct{ base }

// MaskEqual returns x_i where a_i == b_i, −Inf elsewhere (a, b int vectors).
func MaskEqual(x, a, b *G.Node) (*G.Node, error) {
	if x.Dims() != 1 || a.Dtype() != tensor.Int || b.Dtype() != tensor.Int {
		return nil, fmt.Errorf("graph.MaskEqual: need a vector and two int vectors")
	}
	return apply(&maskEqualOp{base: newBase("MaskEqual")}, x, a, b)
}

func (o *maskEqualOp) Arity() int { return 3 }
func (o *maskEqualOp) Type() hm.Type {
	return hm.NewFnType(tensorType(1), intVecType, intVecType, tensorType(1))
}
func (o *maskEqualOp) DiffWRT(int) []bool { return []bool{true, false, false} }
func (o *maskEqualOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return dims(in[0]).Clone(), nil
}

func (o *maskEqualOp) Do(in ...G.Value) (G.Value, error) {
	out := o.buffer(in[0].Dtype(), shapeOf(in[0])...)
	a, b := ints(in[1]), ints(in[2])
	return dispatch(in[0],
		func() (G.Value, error) {
			maskEqual(data[float32](in[0]), a, b, data[float32](out), false)
			return out, nil
		},
		func() (G.Value, error) {
			maskEqual(data[float64](in[0]), a, b, data[float64](out), false)
			return out, nil
		})
}

func maskEqual[T Float](x []T, a, b []int, out []T, zero bool) {
	fill := T(math.Inf(-1))
	if zero {
		fill = 0
	}
	for i := range x {
		if a[i] == b[i] {
			out[i] = x[i]
		} else {
			out[i] = fill
		}
	}
}

func (o *maskEqualOp) SymDiff(in G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	g, err := apply(&maskEqualGradOp{base: newBase("MaskEqualGrad")}, grad, in[1], in[2])
	return G.Nodes{g, nil, nil}, err
}

type maskEqualGradOp struct{ base }

func (o *maskEqualGradOp) Arity() int { return 3 }
func (o *maskEqualGradOp) Type() hm.Type {
	return hm.NewFnType(tensorType(1), intVecType, intVecType, tensorType(1))
}
func (o *maskEqualGradOp) DiffWRT(int) []bool { return []bool{false, false, false} }
func (o *maskEqualGradOp) SymDiff(G.Nodes, *G.Node, *G.Node) (G.Nodes, error) {
	return nil, errNoSecondOrder(o)
}
func (o *maskEqualGradOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return dims(in[0]).Clone(), nil
}

func (o *maskEqualGradOp) Do(in ...G.Value) (G.Value, error) {
	out := o.buffer(in[0].Dtype(), shapeOf(in[0])...)
	a, b := ints(in[1]), ints(in[2])
	return dispatch(in[0],
		func() (G.Value, error) {
			maskEqual(data[float32](in[0]), a, b, data[float32](out), true)
			return out, nil
		},
		func() (G.Value, error) {
			maskEqual(data[float64](in[0]), a, b, data[float64](out), true)
			return out, nil
		})
}

// lookupOp returns table[idx[i]] as a float vector (no gradient).
type lookupOp struct {
	base
	table []float64
	dt    tensor.Dtype
}

// LookupFloats returns the float vector table[idx[i]] of the given dtype.
func LookupFloats(idx *G.Node, table []float64, dt tensor.Dtype) (*G.Node, error) {
	return apply(&lookupOp{base: newBase("LookupFloats"), table: table, dt: dt}, idx)
}

func (o *lookupOp) Arity() int         { return 1 }
func (o *lookupOp) Type() hm.Type      { return hm.NewFnType(intVecType, G.TensorType{Dims: 1, Of: o.dt}) }
func (o *lookupOp) DiffWRT(int) []bool { return []bool{false} }
func (o *lookupOp) SymDiff(G.Nodes, *G.Node, *G.Node) (G.Nodes, error) {
	return nil, fmt.Errorf("%v has no gradient", o)
}
func (o *lookupOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return dims(in[0]).Clone(), nil
}

func (o *lookupOp) Do(in ...G.Value) (G.Value, error) {
	idx := ints(in[0])
	out := o.buffer(o.dt, len(idx))
	for i, v := range idx {
		if v < 0 || v >= len(o.table) {
			return nil, fmt.Errorf("%v: index %d outside [0,%d)", o, v, len(o.table))
		}
		switch d := out.Data().(type) {
		case []float32:
			d[i] = float32(o.table[v])
		case []float64:
			d[i] = o.table[v]
		}
	}
	return out, nil
}

// reshapeOp copies its input into a new shape with the same size.
type reshapeOp struct {
	base
	inRank int
	shape  tensor.Shape
}

// Reshape returns x with the given shape (a copy; x's size must match).
// Vectors and matrices only: scalars have no backing slice to copy.
func Reshape(x *G.Node, shape ...int) (*G.Node, error) {
	s := tensor.Shape(shape)
	if s.TotalSize() != x.Shape().TotalSize() || x.Dims() == 0 || len(s) == 0 {
		return nil, fmt.Errorf("graph.Reshape: %v into %v", x.Shape(), s)
	}
	return apply(&reshapeOp{base: newBase(fmt.Sprintf("Reshape%v", s)), inRank: x.Dims(), shape: s.Clone()}, x)
}

func (o *reshapeOp) Arity() int { return 1 }
func (o *reshapeOp) Type() hm.Type {
	return hm.NewFnType(tensorType(o.inRank), tensorType(len(o.shape)))
}
func (o *reshapeOp) DiffWRT(int) []bool { return []bool{true} }
func (o *reshapeOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return o.shape.Clone(), nil
}

func (o *reshapeOp) Do(in ...G.Value) (G.Value, error) {
	out := o.buffer(in[0].Dtype(), o.shape...)
	return dispatch(in[0],
		func() (G.Value, error) { copy(data[float32](out), data[float32](in[0])); return out, nil },
		func() (G.Value, error) { copy(data[float64](out), data[float64](in[0])); return out, nil })
}

func (o *reshapeOp) SymDiff(in G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	g, err := Reshape(grad, in[0].Shape()...)
	return G.Nodes{g}, err
}
