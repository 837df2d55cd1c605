package graph

import (
	"fmt"
	"math"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Ops over rows partitioned into classes (entity types, or the relations
// sharing a subject and object type): the pieces of a circuit multiplied
// by a domain-constraint circuit. classOf[i] is the class of row i, −1 for
// a row in no class.

// groups returns the rows of each class.
func groups(classOf []int32, n int) [][]int {
	g := make([][]int, n)
	for i, c := range classOf {
		if c >= 0 {
			g[c] = append(g[c], i)
		}
	}
	return g
}

// typedGramOp computes, for each class t, G_t = Σ_{i∈t} x_i x_iᵀ, returned
// as the rows of a T×(k·k) matrix.
type typedGramOp struct {
	base
	classOf []int32
	classes [][]int
	scratch *tensor.Dense
}

// TypedGram returns the Gram matrices of the rows of x grouped by class
// (one k×k matrix per class, flattened into a row): for squared circuits,
// the sums over the entities of one type.
func TypedGram(x *G.Node, classOf []int32, classes int) (*G.Node, error) {
	if x.Dims() != 2 || len(classOf) != x.Shape()[0] {
		return nil, fmt.Errorf("graph.TypedGram: %d classes for a %v matrix", len(classOf), x.Shape())
	}
	return apply(&typedGramOp{base: newBase("TypedGram"), classOf: classOf, classes: groups(classOf, classes)}, x)
}

func (o *typedGramOp) Arity() int         { return 1 }
func (o *typedGramOp) Type() hm.Type      { return fnType(2, 2) }
func (o *typedGramOp) DiffWRT(int) []bool { return []bool{true} }
func (o *typedGramOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	k := dims(in[0])[1]
	return tensor.Shape{len(o.classes), k * k}, nil
}

func (o *typedGramOp) Do(in ...G.Value) (G.Value, error) {
	k := shapeOf(in[0])[1]
	out := o.buffer(in[0].Dtype(), len(o.classes), k*k)
	maxRows := 0
	for _, rows := range o.classes {
		maxRows = max(maxRows, len(rows))
	}
	scratch := ensure(&o.scratch, in[0].Dtype(), max(maxRows, 1), k)
	return dispatch(in[0],
		func() (G.Value, error) {
			typedGram(o.classes, data[float32](in[0]), k, data[float32](scratch), data[float32](out))
			return out, nil
		},
		func() (G.Value, error) {
			typedGram(o.classes, data[float64](in[0]), k, data[float64](scratch), data[float64](out))
			return out, nil
		})
}

func typedGram[T Float](classes [][]int, x []T, k int, scratch, out []T) {
	for t, rows := range classes {
		g := out[t*k*k : (t+1)*k*k]
		if len(rows) == 0 {
			clear(g)
			continue
		}
		gatherRows(x, rows, k, scratch)
		syrkT(len(rows), k, scratch[:len(rows)*k], g)
	}
}

func (o *typedGramOp) SymDiff(in G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	g, err := apply(&typedGramGradOp{base: newBase("TypedGramGrad"), fwd: o}, in[0], grad)
	return G.Nodes{g}, err
}

// typedGramGradOp: row i of class t gets x_i (Γ_t + Γ_tᵀ).
type typedGramGradOp struct {
	base
	fwd       *typedGramOp
	sym, rows *tensor.Dense
}

func (o *typedGramGradOp) Arity() int         { return 2 }
func (o *typedGramGradOp) Type() hm.Type      { return fnType(2, 2, 2) }
func (o *typedGramGradOp) DiffWRT(int) []bool { return []bool{false, false} }
func (o *typedGramGradOp) SymDiff(G.Nodes, *G.Node, *G.Node) (G.Nodes, error) {
	return nil, errNoSecondOrder(o)
}
func (o *typedGramGradOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return dims(in[0]).Clone(), nil
}

func (o *typedGramGradOp) Do(in ...G.Value) (G.Value, error) {
	s := shapeOf(in[0])
	k := s[1]
	out := o.buffer(in[0].Dtype(), s...)
	sym := ensure(&o.sym, in[0].Dtype(), k, k)
	maxRows := 1
	for _, r := range o.fwd.classes {
		maxRows = max(maxRows, len(r))
	}
	rows := ensure(&o.rows, in[0].Dtype(), 2*maxRows, k)
	return dispatch(in[0],
		func() (G.Value, error) {
			typedGramGrad(o.fwd, data[float32](in[0]), data[float32](in[1]), k, data[float32](sym), data[float32](rows), data[float32](out))
			return out, nil
		},
		func() (G.Value, error) {
			typedGramGrad(o.fwd, data[float64](in[0]), data[float64](in[1]), k, data[float64](sym), data[float64](rows), data[float64](out))
			return out, nil
		})
}

func typedGramGrad[T Float](f *typedGramOp, x, g []T, k int, sym, scratch, out []T) {
	clear(out)
	for t, rows := range f.classes {
		if len(rows) == 0 {
			continue
		}
		gt := g[t*k*k : (t+1)*k*k]
		for i := 0; i < k; i++ {
			for j := 0; j < k; j++ {
				sym[i*k+j] = gt[i*k+j] + gt[j*k+i]
			}
		}
		n := len(rows)
		in, res := scratch[:n*k], scratch[n*k:2*n*k]
		gatherRows(x, rows, k, in)
		gemm(false, false, n, k, k, 1, in, k, sym, k, 0, res, k)
		for a, r := range rows {
			copy(out[r*k:(r+1)*k], res[a*k:(a+1)*k])
		}
	}
}

// typedQuadFormOp computes y_i = q_iᵀ G_{c_i} q_i, with G_c read from the
// rows of a class×(k·k) matrix and c_i from an int vector (−1: y_i = 0).
type typedQuadFormOp struct {
	base
	qg *tensor.Dense // cache of G_{c_i} q_i for the backward pass
}

// TypedQuadForm returns qᵢᵀ G_{cᵢ} qᵢ for each row: the squared mass of a
// query summed over the entities of the type each row allows.
func TypedQuadForm(q, grams, class *G.Node) (*G.Node, error) {
	if q.Dims() != 2 || grams.Dims() != 2 || grams.Shape()[1] != q.Shape()[1]*q.Shape()[1] || class.Dtype() != tensor.Int {
		return nil, fmt.Errorf("graph.TypedQuadForm: queries %v, Gram matrices %v, classes %v %v", q.Shape(), grams.Shape(), class.Shape(), class.Dtype())
	}
	return apply(&typedQuadFormOp{base: newBase("TypedQuadForm")}, q, grams, class)
}

func (o *typedQuadFormOp) Arity() int { return 3 }
func (o *typedQuadFormOp) Type() hm.Type {
	return hm.NewFnType(tensorType(2), tensorType(2), intVecType, tensorType(1))
}
func (o *typedQuadFormOp) DiffWRT(int) []bool { return []bool{true, true, false} }
func (o *typedQuadFormOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{dims(in[0])[0]}, nil
}

func (o *typedQuadFormOp) Do(in ...G.Value) (G.Value, error) {
	s := shapeOf(in[0])
	out := o.buffer(in[0].Dtype(), s[0])
	qg := ensure(&o.qg, in[0].Dtype(), s...)
	cls := ints(in[2])
	nc := shapeOf(in[1])[0]
	for i, c := range cls {
		if c >= nc {
			return nil, fmt.Errorf("%v: class %d of row %d outside [0,%d)", o, c, i, nc)
		}
	}
	return dispatch(in[0],
		func() (G.Value, error) {
			typedQuad(data[float32](in[0]), data[float32](in[1]), cls, s[1], data[float32](qg), data[float32](out))
			return out, nil
		},
		func() (G.Value, error) {
			typedQuad(data[float64](in[0]), data[float64](in[1]), cls, s[1], data[float64](qg), data[float64](out))
			return out, nil
		})
}

// rowsByClass returns the rows of each class that occurs in cls (−1: none).
func rowsByClass(cls []int) map[int][]int {
	byClass := map[int][]int{}
	for i, c := range cls {
		if c >= 0 {
			byClass[c] = append(byClass[c], i)
		}
	}
	return byClass
}

// typedQuad groups rows by class so each class is one gemm.
func typedQuad[T Float](q, grams []T, cls []int, k int, qg, out []T) {
	for i, c := range cls {
		if c < 0 {
			out[i] = 0
			clear(qg[i*k : (i+1)*k])
		}
	}
	for c, rows := range rowsByClass(cls) {
		n := len(rows)
		in := make([]T, n*k)
		res := make([]T, n*k)
		gatherRows(q, rows, k, in)
		gemm(false, false, n, k, k, 1, in, k, grams[c*k*k:(c+1)*k*k], k, 0, res, k)
		for a, r := range rows {
			copy(qg[r*k:(r+1)*k], res[a*k:(a+1)*k])
			var s T
			for j := 0; j < k; j++ {
				s += res[a*k+j] * in[a*k+j]
			}
			out[r] = s
		}
	}
}

func (o *typedQuadFormOp) SymDiff(in G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	gq, err := apply(&typedQuadGradOp{base: newBase("TypedQuadFormGradQ"), fwd: o, which: 0}, in[0], in[1], in[2], grad)
	if err != nil {
		return nil, err
	}
	gg, err := apply(&typedQuadGradOp{base: newBase("TypedQuadFormGradG"), fwd: o, which: 1}, in[0], in[1], in[2], grad)
	return G.Nodes{gq, gg, nil}, err
}

// typedQuadGradOp: dq_i = g_i (G_c + G_cᵀ) q_i; dG_c = Σ_{i∈c} g_i q_i q_iᵀ.
type typedQuadGradOp struct {
	base
	fwd   *typedQuadFormOp
	which int
}

func (o *typedQuadGradOp) Arity() int { return 4 }
func (o *typedQuadGradOp) Type() hm.Type {
	return hm.NewFnType(tensorType(2), tensorType(2), intVecType, tensorType(1), tensorType(2))
}
func (o *typedQuadGradOp) DiffWRT(int) []bool { return []bool{false, false, false, false} }
func (o *typedQuadGradOp) SymDiff(G.Nodes, *G.Node, *G.Node) (G.Nodes, error) {
	return nil, errNoSecondOrder(o)
}
func (o *typedQuadGradOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return dims(in[o.which]).Clone(), nil
}

func (o *typedQuadGradOp) Do(in ...G.Value) (G.Value, error) {
	out := o.buffer(in[0].Dtype(), shapeOf(in[o.which])...)
	k := shapeOf(in[0])[1]
	cls := ints(in[2])
	return dispatch(in[0],
		func() (G.Value, error) {
			typedQuadGrad(o.which, data[float32](in[0]), data[float32](in[1]), cls, data[float32](in[3]), data[float32](o.fwd.qg), k, data[float32](out))
			return out, nil
		},
		func() (G.Value, error) {
			typedQuadGrad(o.which, data[float64](in[0]), data[float64](in[1]), cls, data[float64](in[3]), data[float64](o.fwd.qg), k, data[float64](out))
			return out, nil
		})
}

// typedQuadGrad groups rows by class so each class is one gemm:
// dQ_c = diag(g_c)(Q_c G_cᵀ + Q_c G_c) and dG_c = Q_cᵀ diag(g_c) Q_c.
func typedQuadGrad[T Float](which int, q, grams []T, cls []int, g, qg []T, k int, out []T) {
	clear(out)
	for c, rows := range rowsByClass(cls) {
		gc := grams[c*k*k : (c+1)*k*k]
		if which == 0 && symmetric(gc, k) {
			// (G + Gᵀ) q = 2 G q for a symmetric G (a Gram matrix), and the
			// forward pass cached qᵀG = (Gq)ᵀ: no gather, no product.
			for _, r := range rows {
				gi, qgr, oi := g[r], qg[r*k:(r+1)*k], out[r*k:(r+1)*k]
				for j := range oi {
					oi[j] = 2 * gi * qgr[j]
				}
			}
			continue
		}
		n := len(rows)
		in := make([]T, n*k)
		res := make([]T, n*k)
		gatherRows(q, rows, k, in)
		if which == 0 {
			// (G + Gᵀ) q = G q + Gᵀ q; the forward pass cached qᵀG = (Gᵀq)ᵀ.
			gemm(false, true, n, k, k, 1, in, k, gc, k, 0, res, k)
			for a, r := range rows {
				gi, qgr, oi := g[r], qg[r*k:(r+1)*k], out[r*k:(r+1)*k]
				for j := range oi {
					oi[j] = gi * (qgr[j] + res[a*k+j])
				}
			}
			continue
		}
		for a, r := range rows {
			gi := g[r]
			for j := 0; j < k; j++ {
				res[a*k+j] = gi * in[a*k+j]
			}
		}
		gemm(true, false, k, k, n, 1, in, k, res, k, 0, out[c*k*k:(c+1)*k*k], k)
	}
}

// typedColLSEOp computes, for each class t, log Σ_{i∈t} exp(x_i·) per
// column: a class×k matrix (−Inf rows for empty classes).
type typedColLSEOp struct {
	base
	classes [][]int
}

// TypedColLogSumExp returns the column log-sum-exp of the rows of each
// class: for non-negative circuits, summing over the entities of one type.
func TypedColLogSumExp(x *G.Node, classOf []int32, classes int) (*G.Node, error) {
	if x.Dims() != 2 || len(classOf) != x.Shape()[0] {
		return nil, fmt.Errorf("graph.TypedColLogSumExp: %d classes for a %v matrix", len(classOf), x.Shape())
	}
	return apply(&typedColLSEOp{base: newBase("TypedColLogSumExp"), classes: groups(classOf, classes)}, x)
}

func (o *typedColLSEOp) Arity() int         { return 1 }
func (o *typedColLSEOp) Type() hm.Type      { return fnType(2, 2) }
func (o *typedColLSEOp) DiffWRT(int) []bool { return []bool{true} }
func (o *typedColLSEOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{len(o.classes), dims(in[0])[1]}, nil
}

func (o *typedColLSEOp) Do(in ...G.Value) (G.Value, error) {
	k := shapeOf(in[0])[1]
	out := o.buffer(in[0].Dtype(), len(o.classes), k)
	return dispatch(in[0],
		func() (G.Value, error) {
			typedColLSE(o.classes, data[float32](in[0]), k, data[float32](out))
			return out, nil
		},
		func() (G.Value, error) {
			typedColLSE(o.classes, data[float64](in[0]), k, data[float64](out))
			return out, nil
		})
}

func typedColLSE[T Float](classes [][]int, x []T, k int, out []T) {
	for t, rows := range classes {
		o := out[t*k : (t+1)*k]
		if len(rows) == 0 {
			for j := range o {
				o[j] = T(math.Inf(-1))
			}
			continue
		}
		sub := make([]T, len(rows)*k)
		gatherRows(x, rows, k, sub)
		colLSE(sub, len(rows), k, o)
	}
}

func (o *typedColLSEOp) SymDiff(in G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	g, err := apply(&typedColLSEGradOp{base: newBase("TypedColLogSumExpGrad"), fwd: o}, in[0], out, grad)
	return G.Nodes{g}, err
}

// typedColLSEGradOp: dx_ij = g_{t(i),j} exp(x_ij − y_{t(i),j}).
type typedColLSEGradOp struct {
	base
	fwd *typedColLSEOp
}

func (o *typedColLSEGradOp) Arity() int         { return 3 }
func (o *typedColLSEGradOp) Type() hm.Type      { return fnType(2, 2, 2, 2) }
func (o *typedColLSEGradOp) DiffWRT(int) []bool { return []bool{false, false, false} }
func (o *typedColLSEGradOp) SymDiff(G.Nodes, *G.Node, *G.Node) (G.Nodes, error) {
	return nil, errNoSecondOrder(o)
}
func (o *typedColLSEGradOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return dims(in[0]).Clone(), nil
}

func (o *typedColLSEGradOp) Do(in ...G.Value) (G.Value, error) {
	s := shapeOf(in[0])
	out := o.buffer(in[0].Dtype(), s...)
	return dispatch(in[0],
		func() (G.Value, error) {
			typedColLSEGrad(o.fwd.classes, data[float32](in[0]), data[float32](in[1]), data[float32](in[2]), s[1], data[float32](out))
			return out, nil
		},
		func() (G.Value, error) {
			typedColLSEGrad(o.fwd.classes, data[float64](in[0]), data[float64](in[1]), data[float64](in[2]), s[1], data[float64](out))
			return out, nil
		})
}

func typedColLSEGrad[T Float](classes [][]int, x, y, g []T, k int, out []T) {
	clear(out)
	for t, rows := range classes {
		for _, i := range rows {
			for j := 0; j < k; j++ {
				if yt := y[t*k+j]; !math.IsInf(float64(yt), -1) {
					out[i*k+j] = g[t*k+j] * T(math.Exp(float64(x[i*k+j]-yt)))
				}
			}
		}
	}
}
