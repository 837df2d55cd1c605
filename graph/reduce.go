package graph

import (
	"fmt"
	"math"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// rowDotOp computes y_i = Σ_j a_ij·b_ij: the score of each triple in a batch
// from its query and candidate rows.
type rowDotOp struct{ base }

// RowDot returns the vector of row-wise dot products of two n×k matrices.
func RowDot(a, b *G.Node) (*G.Node, error) {
	if a.Dims() != 2 || !a.Shape().Eq(b.Shape()) {
		return nil, fmt.Errorf("graph.RowDot: need equal matrices, got %v and %v", a.Shape(), b.Shape())
	}
	return apply(&rowDotOp{base: newBase("RowDot")}, a, b)
}

func (o *rowDotOp) Arity() int         { return 2 }
func (o *rowDotOp) Type() hm.Type      { return fnType(2, 2, 1) }
func (o *rowDotOp) DiffWRT(int) []bool { return []bool{true, true} }
func (o *rowDotOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{dims(in[0])[0]}, nil
}

func (o *rowDotOp) Do(in ...G.Value) (G.Value, error) {
	s := shapeOf(in[0])
	out := o.buffer(in[0].Dtype(), s[0])
	return dispatch(in[0],
		func() (G.Value, error) {
			rowDot(data[float32](in[0]), data[float32](in[1]), data[float32](out), s[1])
			return out, nil
		},
		func() (G.Value, error) {
			rowDot(data[float64](in[0]), data[float64](in[1]), data[float64](out), s[1])
			return out, nil
		})
}

func rowDot[T Float](a, b, out []T, k int) {
	parallelFor(len(out), len(out)*k, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			out[i] = dot4(a[i*k:(i+1)*k], b[i*k:(i+1)*k])
		}
	})
}

// dot4 is Σ a_j·b_j in T with four independent sums, which pipeline where
// one chain of dependent additions would wait on each.
func dot4[T Float](a, b []T) T {
	b = b[:len(a)]
	var s0, s1, s2, s3 T
	j := 0
	for ; j+4 <= len(a); j += 4 {
		s0 += a[j] * b[j]
		s1 += a[j+1] * b[j+1]
		s2 += a[j+2] * b[j+2]
		s3 += a[j+3] * b[j+3]
	}
	for ; j < len(a); j++ {
		s0 += a[j] * b[j]
	}
	return (s0 + s1) + (s2 + s3)
}

func (o *rowDotOp) SymDiff(in G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	ga, err := ScaleRows(in[1], grad)
	if err != nil {
		return nil, err
	}
	gb, err := ScaleRows(in[0], grad)
	return G.Nodes{ga, gb}, err
}

// scaleRowsOp computes y_ij = x_ij·s_i.
type scaleRowsOp struct{ base }

// ScaleRows multiplies each row of the n×k matrix x by the matching entry of
// the length-n vector s.
func ScaleRows(x, s *G.Node) (*G.Node, error) {
	return apply(&scaleRowsOp{base: newBase("ScaleRows")}, x, s)
}

func (o *scaleRowsOp) Arity() int         { return 2 }
func (o *scaleRowsOp) Type() hm.Type      { return fnType(2, 1, 2) }
func (o *scaleRowsOp) DiffWRT(int) []bool { return []bool{true, true} }
func (o *scaleRowsOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return dims(in[0]).Clone(), nil
}

func (o *scaleRowsOp) Do(in ...G.Value) (G.Value, error) {
	s := shapeOf(in[0])
	out := o.buffer(in[0].Dtype(), s...)
	return dispatch(in[0],
		func() (G.Value, error) {
			scaleRows(data[float32](in[0]), data[float32](in[1]), data[float32](out), s[1])
			return out, nil
		},
		func() (G.Value, error) {
			scaleRows(data[float64](in[0]), data[float64](in[1]), data[float64](out), s[1])
			return out, nil
		})
}

func scaleRows[T Float](x, s, out []T, k int) {
	for i, si := range s {
		xr, or := x[i*k:(i+1)*k], out[i*k:(i+1)*k]
		for j := range xr {
			or[j] = xr[j] * si
		}
	}
}

func (o *scaleRowsOp) SymDiff(in G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	gx, err := ScaleRows(grad, in[1])
	if err != nil {
		return nil, err
	}
	gs, err := RowDot(grad, in[0])
	return G.Nodes{gx, gs}, err
}

// dotOp computes the scalar Σ a∘b over all elements.
type dotOp struct {
	base
	rank int
}

// Dot returns Σ_ij a_ij·b_ij as a scalar. With a vector of per-triple losses
// and a vector of weights it is the (masked, weighted) mean of a batch.
func Dot(a, b *G.Node) (*G.Node, error) {
	if !a.Shape().Eq(b.Shape()) {
		return nil, fmt.Errorf("graph.Dot: shapes differ: %v and %v", a.Shape(), b.Shape())
	}
	return apply(&dotOp{base: newBase("Dot"), rank: a.Dims()}, a, b)
}

func (o *dotOp) Arity() int                                     { return 2 }
func (o *dotOp) Type() hm.Type                                  { return hm.NewFnType(tensorType(o.rank), tensorType(o.rank), tvA) }
func (o *dotOp) DiffWRT(int) []bool                             { return []bool{true, true} }
func (o *dotOp) InferShape(...G.DimSizer) (tensor.Shape, error) { return tensor.ScalarShape(), nil }

func (o *dotOp) Do(in ...G.Value) (G.Value, error) {
	return dispatch(in[0],
		func() (G.Value, error) {
			return scalarValue(float32(dot(data[float32](in[0]), data[float32](in[1])))), nil
		},
		func() (G.Value, error) { return scalarValue(dot(data[float64](in[0]), data[float64](in[1]))), nil })
}

func dot[T Float](a, b []T) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func (o *dotOp) SymDiff(in G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	ga, err := ScaleBy(in[1], grad)
	if err != nil {
		return nil, err
	}
	gb, err := ScaleBy(in[0], grad)
	return G.Nodes{ga, gb}, err
}

// scaleByOp multiplies a tensor by a scalar node.
type scaleByOp struct {
	base
	rank int
}

// ScaleBy returns s·x for a scalar node s.
func ScaleBy(x, s *G.Node) (*G.Node, error) {
	return apply(&scaleByOp{base: newBase("ScaleBy"), rank: x.Dims()}, x, s)
}

func (o *scaleByOp) Arity() int { return 2 }
func (o *scaleByOp) Type() hm.Type {
	return hm.NewFnType(tensorType(o.rank), tvA, tensorType(o.rank))
}
func (o *scaleByOp) DiffWRT(int) []bool { return []bool{true, true} }
func (o *scaleByOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return dims(in[0]).Clone(), nil
}

func (o *scaleByOp) Do(in ...G.Value) (G.Value, error) {
	s := scalarOf(in[1])
	if isScalar(in[0]) {
		v := scalarOf(in[0]) * s
		return dispatch(in[1],
			func() (G.Value, error) { return scalarValue(float32(v)), nil },
			func() (G.Value, error) { return scalarValue(v), nil })
	}
	out := o.buffer(in[0].Dtype(), shapeOf(in[0])...)
	return dispatch(in[0],
		func() (G.Value, error) {
			scaleInto(data[float32](in[0]), float32(s), data[float32](out))
			return out, nil
		},
		func() (G.Value, error) { scaleInto(data[float64](in[0]), s, data[float64](out)); return out, nil })
}

func scaleInto[T Float](x []T, s T, out []T) {
	for i, v := range x {
		out[i] = v * s
	}
}

func (o *scaleByOp) SymDiff(in G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	gx, err := ScaleBy(grad, in[1])
	if err != nil {
		return nil, err
	}
	if isScalarNode(in[0]) {
		gs, err := ScaleBy(grad, in[0])
		return G.Nodes{gx, gs}, err
	}
	gs, err := Dot(grad, in[0])
	return G.Nodes{gx, gs}, err
}

func isScalarNode(n *G.Node) bool { return n.Shape().IsScalar() && n.Dims() == 0 }

// sumOp sums every element into a scalar.
type sumOp struct {
	base
	rank int
}

// Sum returns the scalar sum of all elements of x.
func Sum(x *G.Node) (*G.Node, error) {
	return apply(&sumOp{base: newBase("Sum"), rank: x.Dims()}, x)
}

func (o *sumOp) Arity() int                                     { return 1 }
func (o *sumOp) Type() hm.Type                                  { return hm.NewFnType(tensorType(o.rank), tvA) }
func (o *sumOp) DiffWRT(int) []bool                             { return []bool{true} }
func (o *sumOp) InferShape(...G.DimSizer) (tensor.Shape, error) { return tensor.ScalarShape(), nil }

func (o *sumOp) Do(in ...G.Value) (G.Value, error) {
	return dispatch(in[0],
		func() (G.Value, error) { return scalarValue(float32(sum(data[float32](in[0])))), nil },
		func() (G.Value, error) { return scalarValue(sum(data[float64](in[0]))), nil })
}

func sum[T Float](x []T) float64 {
	var s float64
	for _, v := range x {
		s += float64(v)
	}
	return s
}

func (o *sumOp) SymDiff(in G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	g, err := apply(&fillOp{base: newBase("Fill"), rank: o.rank}, in[0], grad)
	return G.Nodes{g}, err
}

// fillOp returns a tensor shaped like its first input, filled with the scalar
// second input.
type fillOp struct {
	base
	rank int
}

func (o *fillOp) Arity() int { return 2 }
func (o *fillOp) Type() hm.Type {
	return hm.NewFnType(tensorType(o.rank), tvA, tensorType(o.rank))
}
func (o *fillOp) DiffWRT(int) []bool                                 { return []bool{false, false} }
func (o *fillOp) SymDiff(G.Nodes, *G.Node, *G.Node) (G.Nodes, error) { return nil, errNoSecondOrder(o) }
func (o *fillOp) InferShape(in ...G.DimSizer) (tensor.Shape, error)  { return dims(in[0]).Clone(), nil }

func (o *fillOp) Do(in ...G.Value) (G.Value, error) {
	s := scalarOf(in[1])
	if isScalar(in[0]) {
		return dispatch(in[0],
			func() (G.Value, error) { return scalarValue(float32(s)), nil },
			func() (G.Value, error) { return scalarValue(s), nil })
	}
	out := o.buffer(in[0].Dtype(), shapeOf(in[0])...)
	return dispatch(in[0],
		func() (G.Value, error) { fill(data[float32](out), float32(s)); return out, nil },
		func() (G.Value, error) { fill(data[float64](out), s); return out, nil })
}

func fill[T Float](x []T, v T) {
	for i := range x {
		x[i] = v
	}
}

// rowLSEOp computes y_i = log Σ_j exp(x_ij): the log-marginal of a batch of
// log-scores, or the log-sum over the components of a non-negative circuit.
type rowLSEOp struct{ base }

// RowLogSumExp returns the stable log-sum-exp of each row of x.
func RowLogSumExp(x *G.Node) (*G.Node, error) {
	if x.Dims() != 2 {
		return nil, fmt.Errorf("graph.RowLogSumExp: need a matrix, got %v", x.Shape())
	}
	return apply(&rowLSEOp{base: newBase("RowLogSumExp")}, x)
}

func (o *rowLSEOp) Arity() int         { return 1 }
func (o *rowLSEOp) Type() hm.Type      { return fnType(2, 1) }
func (o *rowLSEOp) DiffWRT(int) []bool { return []bool{true} }
func (o *rowLSEOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{dims(in[0])[0]}, nil
}

func (o *rowLSEOp) Do(in ...G.Value) (G.Value, error) {
	s := shapeOf(in[0])
	out := o.buffer(in[0].Dtype(), s[0])
	return dispatch(in[0],
		func() (G.Value, error) {
			lseRows(data[float32](in[0]), s[0], s[1], s[1], data[float32](out))
			return out, nil
		},
		func() (G.Value, error) {
			lseRows(data[float64](in[0]), s[0], s[1], s[1], data[float64](out))
			return out, nil
		})
}

func (o *rowLSEOp) SymDiff(in G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	g, err := apply(&softmaxRowsGradOp{base: newBase("RowLogSumExpGrad")}, in[0], out, grad)
	return G.Nodes{g}, err
}

// combinedLSEOp is rowLSEOp over rows whose other columns are held
// elsewhere: combine turns the local row log-sum-exps into the whole
// rows' (an all-reduce across the processes holding the other columns).
type combinedLSEOp struct {
	base
	combine func(lse []float64) error
}

// CombinedRowLogSumExp returns y_i = log Σ_j exp(z_ij) over whole rows z
// of which x holds some columns: combine is handed the log-sum-exps of
// x's rows and must replace them by the whole rows' (a collective, run
// each time the op runs). The gradient is exp(x_ij − y_i) times the
// upstream, the gradient of the whole rows' log-sum-exp at x's columns.
func CombinedRowLogSumExp(x *G.Node, combine func(lse []float64) error) (*G.Node, error) {
	if x.Dims() != 2 {
		return nil, fmt.Errorf("graph.CombinedRowLogSumExp: need a matrix, got %v", x.Shape())
	}
	return apply(&combinedLSEOp{base: newBase("CombinedRowLogSumExp"), combine: combine}, x)
}

func (o *combinedLSEOp) Arity() int         { return 1 }
func (o *combinedLSEOp) Type() hm.Type      { return fnType(2, 1) }
func (o *combinedLSEOp) DiffWRT(int) []bool { return []bool{true} }
func (o *combinedLSEOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{dims(in[0])[0]}, nil
}

func (o *combinedLSEOp) Do(in ...G.Value) (G.Value, error) {
	s := shapeOf(in[0])
	out := o.buffer(in[0].Dtype(), s[0])
	lse := make([]float64, s[0])
	_, err := dispatch(in[0],
		func() (G.Value, error) {
			local := make([]float32, s[0])
			lseRows(data[float32](in[0]), s[0], s[1], s[1], local)
			for i, v := range local {
				lse[i] = float64(v)
			}
			return nil, nil
		},
		func() (G.Value, error) {
			lseRows(data[float64](in[0]), s[0], s[1], s[1], lse)
			return nil, nil
		})
	if err != nil {
		return nil, err
	}
	if err := o.combine(lse); err != nil {
		return nil, err
	}
	SetFloat64s(out, lse)
	return out, nil
}

func (o *combinedLSEOp) SymDiff(in G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	g, err := apply(&softmaxRowsGradOp{base: newBase("CombinedRowLogSumExpGrad")}, in[0], out, grad)
	return G.Nodes{g}, err
}

// softmaxRowsGradOp computes g_i·softmax(x_i·) for each row: the gradient of
// a row log-sum-exp y with upstream g.
type softmaxRowsGradOp struct{ base }

func (o *softmaxRowsGradOp) Arity() int         { return 3 }
func (o *softmaxRowsGradOp) Type() hm.Type      { return fnType(2, 1, 1, 2) }
func (o *softmaxRowsGradOp) DiffWRT(int) []bool { return []bool{false, false, false} }
func (o *softmaxRowsGradOp) SymDiff(G.Nodes, *G.Node, *G.Node) (G.Nodes, error) {
	return nil, errNoSecondOrder(o)
}
func (o *softmaxRowsGradOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return dims(in[0]).Clone(), nil
}

func (o *softmaxRowsGradOp) Do(in ...G.Value) (G.Value, error) {
	s := shapeOf(in[0])
	out := o.buffer(in[0].Dtype(), s...)
	return dispatch(in[0],
		func() (G.Value, error) {
			softmaxScale(data[float32](in[0]), data[float32](in[1]), data[float32](in[2]), s[0], s[1], s[1], data[float32](out))
			return out, nil
		},
		func() (G.Value, error) {
			softmaxScale(data[float64](in[0]), data[float64](in[1]), data[float64](in[2]), s[0], s[1], s[1], data[float64](out))
			return out, nil
		})
}

// colLSEOp computes the 1×k row y_j = log Σ_i exp(x_ij): in a non-negative
// circuit, summing a variable out of its input units.
type colLSEOp struct{ base }

// ColLogSumExp returns the stable log-sum-exp of each column of the n×k
// matrix x, as a 1×k matrix (so it broadcasts against a batch).
func ColLogSumExp(x *G.Node) (*G.Node, error) {
	if x.Dims() != 2 {
		return nil, fmt.Errorf("graph.ColLogSumExp: need a matrix, got %v", x.Shape())
	}
	return apply(&colLSEOp{base: newBase("ColLogSumExp")}, x)
}

func (o *colLSEOp) Arity() int         { return 1 }
func (o *colLSEOp) Type() hm.Type      { return fnType(2, 2) }
func (o *colLSEOp) DiffWRT(int) []bool { return []bool{true} }
func (o *colLSEOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{1, dims(in[0])[1]}, nil
}

func (o *colLSEOp) Do(in ...G.Value) (G.Value, error) {
	s := shapeOf(in[0])
	out := o.buffer(in[0].Dtype(), 1, s[1])
	return dispatch(in[0],
		func() (G.Value, error) { colLSE(data[float32](in[0]), s[0], s[1], data[float32](out)); return out, nil },
		func() (G.Value, error) { colLSE(data[float64](in[0]), s[0], s[1], data[float64](out)); return out, nil })
}

func colLSE[T Float](x []T, n, k int, out []T) {
	mx := make([]float64, k)
	for j := range mx {
		mx[j] = math.Inf(-1)
	}
	for i := 0; i < n; i++ {
		for j, v := range x[i*k : (i+1)*k] {
			if f := float64(v); f > mx[j] || f != f {
				mx[j] = f
			}
		}
	}
	acc := make([]float64, k)
	if xs, ok := any(x).([]float32); ok && haveAVX2 && allFinite(mx) {
		// Two partial sums, one per core, each over half the rows.
		shift := make([]float32, k)
		for j := range shift {
			shift[j] = float32(mx[j])
		}
		parts := [2][]float32{make([]float32, k), make([]float32, k)}
		half := n / 2
		parallelFor(2, n*k, func(lo, hi int) {
			for p := lo; p < hi; p++ {
				r0, r1 := p*half, ternary(p == 0, half, n)
				colSumExpF32(xs[r0*k:r1*k], r1-r0, k, shift, parts[p])
			}
		})
		for j := range acc {
			acc[j] = float64(parts[0][j]) + float64(parts[1][j])
		}
	} else {
		for i := 0; i < n; i++ {
			for j, v := range x[i*k : (i+1)*k] {
				if !math.IsInf(mx[j], 0) {
					acc[j] += math.Exp(float64(v) - mx[j])
				}
			}
		}
	}
	for j := range out {
		if math.IsInf(mx[j], 0) || mx[j] != mx[j] {
			out[j] = T(mx[j])
		} else {
			out[j] = T(mx[j] + math.Log(acc[j]))
		}
	}
}

func allFinite(x []float64) bool {
	for _, v := range x {
		if math.IsInf(v, 0) || v != v {
			return false
		}
	}
	return true
}

func (o *colLSEOp) SymDiff(in G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	g, err := apply(&colSoftmaxGradOp{base: newBase("ColLogSumExpGrad")}, in[0], out, grad)
	return G.Nodes{g}, err
}

// colSoftmaxGradOp computes g_j·exp(x_ij − y_j).
type colSoftmaxGradOp struct{ base }

func (o *colSoftmaxGradOp) Arity() int         { return 3 }
func (o *colSoftmaxGradOp) Type() hm.Type      { return fnType(2, 2, 2, 2) }
func (o *colSoftmaxGradOp) DiffWRT(int) []bool { return []bool{false, false, false} }
func (o *colSoftmaxGradOp) SymDiff(G.Nodes, *G.Node, *G.Node) (G.Nodes, error) {
	return nil, errNoSecondOrder(o)
}
func (o *colSoftmaxGradOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return dims(in[0]).Clone(), nil
}

func (o *colSoftmaxGradOp) Do(in ...G.Value) (G.Value, error) {
	s := shapeOf(in[0])
	out := o.buffer(in[0].Dtype(), s...)
	return dispatch(in[0],
		func() (G.Value, error) {
			colSoftmaxGrad(data[float32](in[0]), data[float32](in[1]), data[float32](in[2]), s[0], s[1], data[float32](out))
			return out, nil
		},
		func() (G.Value, error) {
			colSoftmaxGrad(data[float64](in[0]), data[float64](in[1]), data[float64](in[2]), s[0], s[1], data[float64](out))
			return out, nil
		})
}

func colSoftmaxGrad[T Float](x, y, g []T, n, k int, out []T) {
	// Shift by the column log-sums: the row vector "y" is the shift, the
	// upstream g scales each column.
	parallelFor(n, n*k, func(lo, hi int) {
		if xs, ok := any(x).([]float32); ok && expShiftF32(xs[lo*k:hi*k], hi-lo, k, nil, any(y).([]float32), any(out).([]float32)[lo*k:hi*k]) {
			for i := lo; i < hi; i++ {
				for j := 0; j < k; j++ {
					out[i*k+j] *= g[j]
				}
			}
			return
		}
		for i := lo; i < hi; i++ {
			for j := 0; j < k; j++ {
				v := 0.0
				if !math.IsInf(float64(y[j]), -1) {
					v = float64(g[j]) * math.Exp(float64(x[i*k+j]-y[j]))
				}
				out[i*k+j] = T(v)
			}
		}
	})
}

// nllOp fuses log-softmax and the negative log-likelihood of a target column:
// y_i = log Σ_j exp(x_ij) − x_{i,t_i} = −log p(t_i | row i). It never forms
// the softmax matrix in the forward pass; the backward pass writes it once.
type nllOp struct {
	base
	lse *tensor.Dense
}

// LogSoftmaxNLL returns, for a batch of candidate log-scores x (n×m) and
// target indices t (length n), the vector −log softmax(x_i)[t_i].
func LogSoftmaxNLL(x, targets *G.Node) (*G.Node, error) {
	if x.Dims() != 2 || targets.Dims() != 1 || targets.Shape()[0] != x.Shape()[0] {
		return nil, fmt.Errorf("graph.LogSoftmaxNLL: scores %v and targets %v do not match", x.Shape(), targets.Shape())
	}
	return apply(&nllOp{base: newBase("LogSoftmaxNLL")}, x, targets)
}

func (o *nllOp) Arity() int         { return 2 }
func (o *nllOp) Type() hm.Type      { return hm.NewFnType(tensorType(2), intVecType, tensorType(1)) }
func (o *nllOp) DiffWRT(int) []bool { return []bool{true, false} }
func (o *nllOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{dims(in[0])[0]}, nil
}

func (o *nllOp) Do(in ...G.Value) (G.Value, error) {
	s := shapeOf(in[0])
	out := o.buffer(in[0].Dtype(), s[0])
	ensure(&o.lse, in[0].Dtype(), s[0])
	t := ints(in[1])
	for i, ti := range t {
		if ti < 0 || ti >= s[1] {
			return nil, fmt.Errorf("%v: target %d of row %d outside [0,%d)", o, ti, i, s[1])
		}
	}
	return dispatch(in[0],
		func() (G.Value, error) {
			nll(data[float32](in[0]), t, s[1], data[float32](o.lse), data[float32](out))
			return out, nil
		},
		func() (G.Value, error) {
			nll(data[float64](in[0]), t, s[1], data[float64](o.lse), data[float64](out))
			return out, nil
		})
}

func nll[T Float](x []T, t []int, m int, lse, out []T) {
	lseRows(x, len(t), m, m, lse)
	for i, ti := range t {
		out[i] = lse[i] - x[i*m+ti]
	}
}

func (o *nllOp) SymDiff(in G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	g, err := apply(&nllGradOp{base: newBase("LogSoftmaxNLLGrad"), fwd: o}, in[0], in[1], grad)
	return G.Nodes{g, nil}, err
}

// nllGradOp writes g_i·(softmax(x_i) − onehot(t_i)).
type nllGradOp struct {
	base
	fwd *nllOp
}

func (o *nllGradOp) Arity() int { return 3 }
func (o *nllGradOp) Type() hm.Type {
	return hm.NewFnType(tensorType(2), intVecType, tensorType(1), tensorType(2))
}
func (o *nllGradOp) DiffWRT(int) []bool { return []bool{false, false, false} }
func (o *nllGradOp) SymDiff(G.Nodes, *G.Node, *G.Node) (G.Nodes, error) {
	return nil, errNoSecondOrder(o)
}
func (o *nllGradOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return dims(in[0]).Clone(), nil
}

func (o *nllGradOp) Do(in ...G.Value) (G.Value, error) {
	s := shapeOf(in[0])
	out := o.buffer(in[0].Dtype(), s...)
	t := ints(in[1])
	return dispatch(in[0],
		func() (G.Value, error) {
			nllGrad(data[float32](in[0]), t, data[float32](o.fwd.lse), data[float32](in[2]), s[1], data[float32](out))
			return out, nil
		},
		func() (G.Value, error) {
			nllGrad(data[float64](in[0]), t, data[float64](o.fwd.lse), data[float64](in[2]), s[1], data[float64](out))
			return out, nil
		})
}

func nllGrad[T Float](x []T, t []int, lse, g []T, m int, out []T) {
	softmaxScale(x, lse, g, len(t), m, m, out)
	for i, ti := range t {
		out[i*m+ti] -= g[i]
	}
}
