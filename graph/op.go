package graph

import (
	"fmt"
	"hash"
	"hash/fnv"
	"sync/atomic"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

var opCounter atomic.Int64

// base is embedded in every op of the package.
//
// Each op instance owns the buffer it writes its output into, so a compiled
// program reuses the same memory at every step instead of allocating. That is
// only safe if no two nodes ever share an op: the unique id in the hash keeps
// Gorgonia from merging structurally equal nodes.
type base struct {
	id   int64
	name string
	out  *tensor.Dense
}

func newBase(name string) base { return base{id: opCounter.Add(1), name: name} }

func (o *base) ReturnsPtr() bool      { return false }
func (o *base) CallsExtern() bool     { return false }
func (o *base) OverwritesInput() int  { return -1 }
func (o *base) String() string        { return o.name }
func (o *base) WriteHash(h hash.Hash) { fmt.Fprintf(h, "%s#%d", o.name, o.id) }
func (o *base) Hashcode() uint32 {
	h := fnv.New32a()
	o.WriteHash(h)
	return h.Sum32()
}

// ownsOutput marks ops whose output buffer nobody else aliases, which lets
// gradient accumulation add into it in place.
func (o *base) ownsOutput() bool { return true }

// buffer returns the op's output tensor with the given dtype and shape,
// allocating only when they change.
func (o *base) buffer(dt tensor.Dtype, shape ...int) *tensor.Dense {
	if o.out != nil && o.out.Dtype() == dt && o.out.Shape().Eq(tensor.Shape(shape)) {
		return o.out
	}
	o.out = tensor.New(tensor.Of(dt), tensor.WithShape(shape...))
	return o.out
}

// Type helpers: 'a' is the element type shared by all float operands.
var tvA = hm.TypeVariable('a')

func tensorType(dims int) hm.Type {
	if dims == 0 {
		return tvA
	}
	return G.TensorType{Dims: dims, Of: tvA}
}

var intVecType = G.TensorType{Dims: 1, Of: tensor.Int}

func fnType(dims ...int) hm.Type {
	ts := make([]hm.Type, len(dims))
	for i, d := range dims {
		ts[i] = tensorType(d)
	}
	return hm.NewFnType(ts...)
}

// data returns the backing slice of a float tensor value.
func data[T Float](v G.Value) []T {
	switch v := v.(type) {
	case *tensor.Dense:
		return v.Data().([]T)
	case *G.F32:
		x := []float32{float32(*v)}
		return any(x).([]T)
	case *G.F64:
		x := []float64{float64(*v)}
		return any(x).([]T)
	}
	panic(fmt.Sprintf("graph: unexpected value %T", v))
}

// isScalar reports whether v is a Gorgonia scalar (or a 0-d tensor).
func isScalar(v G.Value) bool {
	switch v := v.(type) {
	case *G.F32, *G.F64:
		return true
	case *tensor.Dense:
		return v.Shape().IsScalar() && v.Dims() == 0
	}
	return false
}

func ints(v G.Value) []int { return v.(*tensor.Dense).Data().([]int) }

func shapeOf(v G.Value) tensor.Shape { return v.Shape() }

func scalarValue[T Float](x T) G.Value {
	switch v := any(x).(type) {
	case float32:
		return G.NewF32(v)
	case float64:
		return G.NewF64(v)
	}
	return nil
}

// Float64s returns the data of a float32 or float64 tensor as float64s:
// the slice itself for float64, a converted copy for float32, nil for
// other types. Post-processing in plain Go (ranks, samplers, kernels)
// reads node values through it.
func Float64s(t interface{ Data() any }) []float64 {
	switch d := t.Data().(type) {
	case []float64:
		return d
	case []float32:
		out := make([]float64, len(d))
		for i, v := range d {
			out[i] = float64(v)
		}
		return out
	}
	return nil
}

// SetFloat64s writes x into a float32 or float64 tensor of its length,
// converting: Float64s' inverse.
func SetFloat64s(t *tensor.Dense, x []float64) {
	switch d := t.Data().(type) {
	case []float32:
		for i, v := range x {
			d[i] = float32(v)
		}
	case []float64:
		copy(d, x)
	}
}

// RowView returns rows [lo, hi) of a float32 or float64 matrix, sharing
// its values: a process's part of a table, say.
func RowView(t *tensor.Dense, lo, hi int) *tensor.Dense {
	cols := t.Shape()[1]
	var backing any
	switch x := t.Data().(type) {
	case []float32:
		backing = x[lo*cols : hi*cols]
	case []float64:
		backing = x[lo*cols : hi*cols]
	}
	return tensor.New(tensor.WithShape(hi-lo, cols), tensor.WithBacking(backing))
}

// CopyValues copies src's values into dst, float32 or float64 tensors of
// the same dtype and size: how parameters are snapshotted, restored and
// handed between a whole model and its processes' parts.
func CopyValues(dst, src *tensor.Dense) {
	switch d := dst.Data().(type) {
	case []float32:
		copy(d, src.Data().([]float32))
	case []float64:
		copy(d, src.Data().([]float64))
	}
}

// Scalar returns the value of a scalar (or the first entry of a tensor) as
// a float64, NaN for anything else: how a loss node's value is read.
func Scalar(v G.Value) float64 { return scalarOf(v) }

func scalarOf(v G.Value) float64 {
	switch v := v.(type) {
	case *G.F32:
		return float64(*v)
	case *G.F64:
		return float64(*v)
	case *tensor.Dense:
		switch d := v.Data().(type) {
		case []float32:
			return float64(d[0])
		case []float64:
			return d[0]
		case float32:
			return float64(d)
		case float64:
			return d
		}
	}
	panic(fmt.Sprintf("graph: not a scalar: %T", v))
}

// dispatch runs the float32 or float64 instantiation of a kernel according
// to the dtype of the first input.
func dispatch(v G.Value, f32 func() (G.Value, error), f64 func() (G.Value, error)) (G.Value, error) {
	switch v.Dtype() {
	case tensor.Float32:
		return f32()
	case tensor.Float64:
		return f64()
	}
	return nil, fmt.Errorf("graph: unsupported dtype %v", v.Dtype())
}

func dims(s G.DimSizer) tensor.Shape { return s.(tensor.Shape) }

func rowsCols(s tensor.Shape) (int, int) {
	switch len(s) {
	case 0:
		return 1, 1
	case 1:
		return s[0], 1
	}
	return s[0], s.TotalSize() / s[0]
}

// apply builds a node for op over the children, naming it after the op.
func apply(op G.Op, children ...*G.Node) (*G.Node, error) {
	n, err := G.ApplyOp(op, children...)
	if err != nil {
		return nil, fmt.Errorf("%v: %w", op, err)
	}
	return n, nil
}
