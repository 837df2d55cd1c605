package kg

import (
	"fmt"

	"github.com/nlpodyssey/gopickle/pytorch"
	"github.com/nlpodyssey/gopickle/types"
)

// The values of OGB's split files come as numpy arrays, torch tensors or
// Python lists; the functions here read any of them.

// An intArray is an integer array, tensor or list as stored in a pickle.
// Its elements are visited in row-major order without first being copied
// into a slice: OGB's negatives have 81 million elements per side.
type intArray interface {
	shape() []int
	each(fn func(i int, x int64) error) error
}

func asIntArray(v any) (intArray, error) {
	switch a := v.(type) {
	case *ndarray:
		if d := a.dtype; (d.kind != 'i' && d.kind != 'u') || (d.size != 1 && d.size != 2 && d.size != 4 && d.size != 8) {
			return nil, fmt.Errorf("numpy array of dtype %s, want integers", d)
		}
		if a.fortran && len(a.dims) > 2 {
			return nil, fmt.Errorf("numpy array in Fortran order with %d dimensions", len(a.dims))
		}
		return a, nil
	case *pytorch.Tensor:
		return newTensorInts(a)
	case *types.List:
		return intList(*a), nil
	}
	return nil, fmt.Errorf("%T is not an integer array", v)
}

// int64s returns the elements of an integer array, tensor or list in
// row-major order, and its shape.
func int64s(v any) ([]int64, []int, error) {
	a, err := asIntArray(v)
	if err != nil {
		return nil, nil, err
	}
	n := 1
	for _, d := range a.shape() {
		n *= d
	}
	out := make([]int64, n)
	err = a.each(func(i int, x int64) error { out[i] = x; return nil })
	return out, a.shape(), err
}

type intList []any

func (l intList) shape() []int { return []int{len(l)} }

func (l intList) each(fn func(int, int64) error) error {
	for i, x := range l {
		k, ok := x.(int)
		if !ok {
			return fmt.Errorf("list item %d is %T, want int", i, x)
		}
		if err := fn(i, int64(k)); err != nil {
			return err
		}
	}
	return nil
}

func (a *ndarray) shape() []int { return a.dims }

func (a *ndarray) each(fn func(int, int64) error) error {
	if a.fortran && len(a.dims) == 2 {
		// Column-major data is rare here; read it all, then visit it
		// transposed.
		rows, cols := a.dims[0], a.dims[1]
		colMajor := make([]int64, rows*cols)
		if err := a.decode(func(i int, x int64) error { colMajor[i] = x; return nil }); err != nil {
			return err
		}
		for i := range rows {
			for j := range cols {
				if err := fn(i*cols+j, colMajor[j*rows+i]); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return a.decode(fn)
}

// tensorInts reads a 1-D or 2-D integer tensor through its strides.
type tensorInts struct {
	t    *pytorch.Tensor
	at   func(i int) int64
	n    int // elements in the storage
	dims []int
}

func newTensorInts(t *pytorch.Tensor) (*tensorInts, error) {
	ti := &tensorInts{t: t, dims: t.Size}
	switch s := t.Source.(type) {
	case *pytorch.LongStorage:
		ti.n, ti.at = len(s.Data), func(i int) int64 { return s.Data[i] }
	case *pytorch.IntStorage:
		ti.n, ti.at = len(s.Data), func(i int) int64 { return int64(s.Data[i]) }
	case *pytorch.ShortStorage:
		ti.n, ti.at = len(s.Data), func(i int) int64 { return int64(s.Data[i]) }
	case *pytorch.CharStorage:
		ti.n, ti.at = len(s.Data), func(i int) int64 { return int64(s.Data[i]) }
	case *pytorch.ByteStorage:
		ti.n, ti.at = len(s.Data), func(i int) int64 { return int64(s.Data[i]) }
	default:
		return nil, fmt.Errorf("tensor storage %T, want integers", t.Source)
	}
	if len(t.Size) != len(t.Stride) || len(t.Size) == 0 || len(t.Size) > 2 {
		return nil, fmt.Errorf("tensor of %d dimensions, want 1 or 2", len(t.Size))
	}
	// Expanded tensors (stride 0) may have more elements than storage,
	// but OGB has none, and the bound keeps a corrupt size from asking
	// for an enormous slice.
	numel := 1
	for _, d := range t.Size {
		if d < 0 || (d > 0 && numel > ti.n/d) {
			return nil, fmt.Errorf("tensor of size %v from a storage of %d elements", t.Size, ti.n)
		}
		numel *= d
	}
	return ti, nil
}

func (ti *tensorInts) shape() []int { return ti.dims }

func (ti *tensorInts) each(fn func(int, int64) error) error {
	size, stride := ti.t.Size, ti.t.Stride
	if len(size) == 1 {
		size, stride = []int{1, size[0]}, []int{0, stride[0]}
	}
	i := 0
	for r := range size[0] {
		for c := range size[1] {
			k := ti.t.StorageOffset + r*stride[0] + c*stride[1]
			if k < 0 || k >= ti.n {
				return fmt.Errorf("tensor element (%d, %d) lies outside its storage", r, c)
			}
			if err := fn(i, ti.at(k)); err != nil {
				return err
			}
			i++
		}
	}
	return nil
}

// strs returns the elements of a list, tuple or numpy array of str.
func strs(v any) ([]string, error) {
	var items []any
	switch a := v.(type) {
	case *types.List:
		items = *a
	case *types.Tuple:
		items = *a
	case *ndarray:
		if len(a.dims) != 1 {
			return nil, fmt.Errorf("numpy array of %d dimensions, want 1", len(a.dims))
		}
		switch a.dtype.kind {
		case 'O':
			items = a.objects
		case 'U':
			return a.utf32Strings()
		default:
			return nil, fmt.Errorf("numpy array of dtype %s, want str", a.dtype)
		}
	default:
		return nil, fmt.Errorf("%T is not a sequence of str", v)
	}
	out := make([]string, len(items))
	for i, x := range items {
		s, ok := x.(string)
		if !ok {
			return nil, fmt.Errorf("item %d is %T, want str", i, x)
		}
		out[i] = s
	}
	return out, nil
}
