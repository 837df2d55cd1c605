package graph

import (
	"fmt"
	"math"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// batchVecMatOp multiplies each row of x by the matrix stored in the matching
// row of m (an n×k matrix flattened row-major), in the linear or the log
// semiring:
//
//	trans=false: y_b = x_b·M_b   (x is B×n, y is B×k)
//	trans=true:  y_b = M_b·x_b   (x is B×k, y is B×n)
//
// An operand with a single row is broadcast over the batch. This is how
// RESCAL and TuckER apply a relation-specific matrix to an entity embedding.
type batchVecMatOp struct {
	base
	n, k       int
	trans, log bool
}

// BatchVecMat computes y_b = x_b·M_b (or M_b·x_b with trans) for matrices M_b
// of size n×k stored as the rows of m.
func BatchVecMat(x, m *G.Node, n, k int, trans bool) (*G.Node, error) {
	return newBatchVecMat(x, m, n, k, trans, false)
}

// LogBatchVecMat is BatchVecMat in the log semiring: y_bj = log Σ_i exp(x_bi + M_b,ij).
func LogBatchVecMat(x, m *G.Node, n, k int, trans bool) (*G.Node, error) {
	return newBatchVecMat(x, m, n, k, trans, true)
}

func newBatchVecMat(x, m *G.Node, n, k int, trans, log bool) (*G.Node, error) {
	in := n
	if trans {
		in = k
	}
	if x.Dims() != 2 || m.Dims() != 2 || x.Shape()[1] != in || m.Shape()[1] != n*k {
		return nil, fmt.Errorf("graph.BatchVecMat: x %v and m %v do not hold %d-vectors and %d×%d matrices", x.Shape(), m.Shape(), in, n, k)
	}
	if bx, bm := x.Shape()[0], m.Shape()[0]; bx != bm && bx != 1 && bm != 1 {
		return nil, fmt.Errorf("graph.BatchVecMat: batch sizes %d and %d differ", bx, bm)
	}
	name := "BatchVecMat"
	if log {
		name = "LogBatchVecMat"
	}
	if trans {
		name += "ᵀ"
	}
	return apply(&batchVecMatOp{base: newBase(name), n: n, k: k, trans: trans, log: log}, x, m)
}

func (o *batchVecMatOp) Arity() int         { return 2 }
func (o *batchVecMatOp) Type() hm.Type      { return fnType(2, 2, 2) }
func (o *batchVecMatOp) DiffWRT(int) []bool { return []bool{true, true} }
func (o *batchVecMatOp) outCols() int {
	if o.trans {
		return o.n
	}
	return o.k
}
func (o *batchVecMatOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{max(dims(in[0])[0], dims(in[1])[0]), o.outCols()}, nil
}

func (o *batchVecMatOp) Do(in ...G.Value) (G.Value, error) {
	bx, bm := shapeOf(in[0])[0], shapeOf(in[1])[0]
	out := o.buffer(in[0].Dtype(), max(bx, bm), o.outCols())
	return dispatch(in[0],
		func() (G.Value, error) {
			bvmFwd(o, data[float32](in[0]), data[float32](in[1]), bx, bm, data[float32](out))
			return out, nil
		},
		func() (G.Value, error) {
			bvmFwd(o, data[float64](in[0]), data[float64](in[1]), bx, bm, data[float64](out))
			return out, nil
		})
}

func rowAt(b, rows int) int {
	if rows == 1 {
		return 0
	}
	return b
}

func bvmFwd[T Float](o *batchVecMatOp, x, m []T, bx, bm int, out []T) {
	n, k := o.n, o.k
	in, oc := n, k
	if o.trans {
		in, oc = k, n
	}
	B := max(bx, bm)
	parallelFor(B, B*n*k, func(lo, hi int) {
		acc := make([]float64, oc)
		mx := make([]float64, oc)
		for b := lo; b < hi; b++ {
			xb := x[rowAt(b, bx)*in : rowAt(b, bx)*in+in]
			mb := m[rowAt(b, bm)*n*k : rowAt(b, bm)*n*k+n*k]
			yb := out[b*oc : (b+1)*oc]
			if !o.log {
				clear(acc)
				for i := 0; i < n; i++ {
					for j := 0; j < k; j++ {
						if o.trans {
							acc[i] += float64(mb[i*k+j]) * float64(xb[j])
						} else {
							acc[j] += float64(xb[i]) * float64(mb[i*k+j])
						}
					}
				}
				for j := range yb {
					yb[j] = T(acc[j])
				}
				continue
			}
			for j := range mx {
				mx[j] = math.Inf(-1)
			}
			term := func(i, j int) float64 { return float64(xb[ternary(o.trans, j, i)]) + float64(mb[i*k+j]) }
			for i := 0; i < n; i++ {
				for j := 0; j < k; j++ {
					o := ternary(o.trans, i, j)
					mx[o] = math.Max(mx[o], term(i, j))
				}
			}
			clear(acc)
			for i := 0; i < n; i++ {
				for j := 0; j < k; j++ {
					o := ternary(o.trans, i, j)
					if !math.IsInf(mx[o], -1) {
						acc[o] += math.Exp(term(i, j) - mx[o])
					}
				}
			}
			for j := range yb {
				if math.IsInf(mx[j], -1) {
					yb[j] = T(mx[j])
				} else {
					yb[j] = T(mx[j] + math.Log(acc[j]))
				}
			}
		}
	})
}

func ternary[V any](c bool, a, b V) V {
	if c {
		return a
	}
	return b
}

func (o *batchVecMatOp) SymDiff(in G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	gs := make(G.Nodes, 2)
	for w := range gs {
		g, err := apply(&batchVecMatGradOp{base: newBase(fmt.Sprintf("%sGrad%d", o.name, w)), fwd: o, which: w}, grad, in[0], in[1], out)
		if err != nil {
			return nil, err
		}
		gs[w] = g
	}
	return gs, nil
}

// batchVecMatGradOp computes the gradient of a batchVecMatOp with respect
// to x (which 0) or m (which 1), summing over the batch for a broadcast one.
type batchVecMatGradOp struct {
	base
	fwd   *batchVecMatOp
	which int
}

func (o *batchVecMatGradOp) Arity() int         { return 4 }
func (o *batchVecMatGradOp) Type() hm.Type      { return fnType(2, 2, 2, 2, 2) }
func (o *batchVecMatGradOp) DiffWRT(int) []bool { return []bool{false, false, false, false} }
func (o *batchVecMatGradOp) SymDiff(G.Nodes, *G.Node, *G.Node) (G.Nodes, error) {
	return nil, errNoSecondOrder(o)
}
func (o *batchVecMatGradOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return dims(in[1+o.which]).Clone(), nil
}

func (o *batchVecMatGradOp) Do(in ...G.Value) (G.Value, error) {
	out := o.buffer(in[0].Dtype(), shapeOf(in[1+o.which])...)
	bx, bm := shapeOf(in[1])[0], shapeOf(in[2])[0]
	return dispatch(in[0],
		func() (G.Value, error) {
			bvmBwd(o, data[float32](in[0]), data[float32](in[1]), data[float32](in[2]), data[float32](in[3]), bx, bm, data[float32](out))
			return out, nil
		},
		func() (G.Value, error) {
			bvmBwd(o, data[float64](in[0]), data[float64](in[1]), data[float64](in[2]), data[float64](in[3]), bx, bm, data[float64](out))
			return out, nil
		})
}

func bvmBwd[T Float](o *batchVecMatGradOp, g, x, m, y []T, bx, bm int, out []T) {
	f := o.fwd
	n, k := f.n, f.k
	in, oc := n, k
	if f.trans {
		in, oc = k, n
	}
	clear(out)
	B := max(bx, bm)
	for b := 0; b < B; b++ {
		xr, mr := rowAt(b, bx), rowAt(b, bm)
		xb, mb := x[xr*in:xr*in+in], m[mr*n*k:mr*n*k+n*k]
		gb, yb := g[b*oc:(b+1)*oc], y[b*oc:(b+1)*oc]
		for i := 0; i < n; i++ {
			for j := 0; j < k; j++ {
				xi, oi := ternary(f.trans, j, i), ternary(f.trans, i, j)
				// ∂y_oi/∂x_xi and ∂y_oi/∂M_ij share the same weight.
				var w float64
				if f.log {
					if math.IsInf(float64(yb[oi]), -1) {
						continue
					}
					w = float64(gb[oi]) * math.Exp(float64(xb[xi])+float64(mb[i*k+j])-float64(yb[oi]))
					if o.which == 0 {
						out[xr*in+xi] += T(w)
					} else {
						out[mr*n*k+i*k+j] += T(w)
					}
					continue
				}
				if o.which == 0 {
					out[xr*in+xi] += gb[oi] * mb[i*k+j]
				} else {
					out[mr*n*k+i*k+j] += gb[oi] * xb[xi]
				}
			}
		}
	}
}

// batchOuterOp forms per-row outer products, flattened: y_b = vec(a_b ⊗ b_b)
// (products in the linear semiring, sums in the log one). RESCAL's query for
// the relation slot is vec(e_s e_oᵀ).
type batchOuterOp struct {
	base
	log bool
}

// BatchOuter returns the B×(n·m) matrix of row-wise outer products a_b b_bᵀ.
func BatchOuter(a, b *G.Node) (*G.Node, error) { return newBatchOuter(a, b, false) }

// LogBatchOuter returns the row-wise outer sums a_bi + b_bj: outer products
// of values held in log space.
func LogBatchOuter(a, b *G.Node) (*G.Node, error) { return newBatchOuter(a, b, true) }

func newBatchOuter(a, b *G.Node, log bool) (*G.Node, error) {
	if a.Dims() != 2 || b.Dims() != 2 {
		return nil, fmt.Errorf("graph.BatchOuter: need matrices, got %v and %v", a.Shape(), b.Shape())
	}
	if ba, bb := a.Shape()[0], b.Shape()[0]; ba != bb && ba != 1 && bb != 1 {
		return nil, fmt.Errorf("graph.BatchOuter: batch sizes %d and %d differ", ba, bb)
	}
	return apply(&batchOuterOp{base: newBase(ternary(log, "LogBatchOuter", "BatchOuter")), log: log}, a, b)
}

func (o *batchOuterOp) Arity() int         { return 2 }
func (o *batchOuterOp) Type() hm.Type      { return fnType(2, 2, 2) }
func (o *batchOuterOp) DiffWRT(int) []bool { return []bool{true, true} }
func (o *batchOuterOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	a, b := dims(in[0]), dims(in[1])
	return tensor.Shape{max(a[0], b[0]), a[1] * b[1]}, nil
}

func (o *batchOuterOp) Do(in ...G.Value) (G.Value, error) {
	sa, sb := shapeOf(in[0]), shapeOf(in[1])
	out := o.buffer(in[0].Dtype(), max(sa[0], sb[0]), sa[1]*sb[1])
	return dispatch(in[0],
		func() (G.Value, error) {
			outerFwd(o.log, data[float32](in[0]), data[float32](in[1]), sa, sb, data[float32](out))
			return out, nil
		},
		func() (G.Value, error) {
			outerFwd(o.log, data[float64](in[0]), data[float64](in[1]), sa, sb, data[float64](out))
			return out, nil
		})
}

func outerFwd[T Float](log bool, a, b []T, sa, sb tensor.Shape, out []T) {
	n, m := sa[1], sb[1]
	for r := 0; r < max(sa[0], sb[0]); r++ {
		ar, br := a[rowAt(r, sa[0])*n:][:n], b[rowAt(r, sb[0])*m:][:m]
		yr := out[r*n*m : (r+1)*n*m]
		for i, ai := range ar {
			for j, bj := range br {
				if log {
					yr[i*m+j] = ai + bj
				} else {
					yr[i*m+j] = ai * bj
				}
			}
		}
	}
}

func (o *batchOuterOp) SymDiff(in G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	gs := make(G.Nodes, 2)
	for w := range gs {
		g, err := apply(&batchOuterGradOp{base: newBase(fmt.Sprintf("%sGrad%d", o.name, w)), log: o.log, which: w}, grad, in[0], in[1])
		if err != nil {
			return nil, err
		}
		gs[w] = g
	}
	return gs, nil
}

type batchOuterGradOp struct {
	base
	log   bool
	which int
}

func (o *batchOuterGradOp) Arity() int         { return 3 }
func (o *batchOuterGradOp) Type() hm.Type      { return fnType(2, 2, 2, 2) }
func (o *batchOuterGradOp) DiffWRT(int) []bool { return []bool{false, false, false} }
func (o *batchOuterGradOp) SymDiff(G.Nodes, *G.Node, *G.Node) (G.Nodes, error) {
	return nil, errNoSecondOrder(o)
}
func (o *batchOuterGradOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return dims(in[1+o.which]).Clone(), nil
}

func (o *batchOuterGradOp) Do(in ...G.Value) (G.Value, error) {
	sa, sb := shapeOf(in[1]), shapeOf(in[2])
	out := o.buffer(in[0].Dtype(), shapeOf(in[1+o.which])...)
	return dispatch(in[0],
		func() (G.Value, error) {
			outerBwd(o, data[float32](in[0]), data[float32](in[1]), data[float32](in[2]), sa, sb, data[float32](out))
			return out, nil
		},
		func() (G.Value, error) {
			outerBwd(o, data[float64](in[0]), data[float64](in[1]), data[float64](in[2]), sa, sb, data[float64](out))
			return out, nil
		})
}

func outerBwd[T Float](o *batchOuterGradOp, g, a, b []T, sa, sb tensor.Shape, out []T) {
	n, m := sa[1], sb[1]
	clear(out)
	for r := 0; r < max(sa[0], sb[0]); r++ {
		ra, rb := rowAt(r, sa[0]), rowAt(r, sb[0])
		ar, br := a[ra*n:][:n], b[rb*m:][:m]
		gr := g[r*n*m : (r+1)*n*m]
		for i := 0; i < n; i++ {
			for j := 0; j < m; j++ {
				gv := gr[i*m+j]
				switch {
				case o.which == 0 && o.log:
					out[ra*n+i] += gv
				case o.which == 0:
					out[ra*n+i] += gv * br[j]
				case o.log:
					out[rb*m+j] += gv
				default:
					out[rb*m+j] += gv * ar[i]
				}
			}
		}
	}
}

// modeProductOp multiplies a 3-way tensor along one mode by a matrix:
// Y = T ×_mode M', where M' = M or Mᵀ. T (n1×n2×n3) is stored as the
// n1×(n2·n3) matrix of its mode-1 unfolding, and so is Y. Squared RESCAL
// and TuckER contract their relation tensors and cores with Gram matrices
// this way.
type modeProductOp struct {
	base
	mode   int
	dims   [3]int
	transM bool
}

// ModeProduct returns T ×_mode op(M) for the 3-way tensor t of dimensions
// d (stored as d[0]×(d[1]·d[2])); op(M) must have d[mode-1] columns.
func ModeProduct(t, m *G.Node, mode int, d [3]int, transM bool) (*G.Node, error) {
	if mode < 1 || mode > 3 {
		return nil, fmt.Errorf("graph.ModeProduct: mode %d not in 1..3", mode)
	}
	if t.Dims() != 2 || t.Shape()[0] != d[0] || t.Shape()[1] != d[1]*d[2] || m.Dims() != 2 {
		return nil, fmt.Errorf("graph.ModeProduct: tensor %v is not %v, or matrix %v", t.Shape(), d, m.Shape())
	}
	if cols := ternary(transM, m.Shape()[0], m.Shape()[1]); cols != d[mode-1] {
		return nil, fmt.Errorf("graph.ModeProduct: matrix %v (transposed %v) does not match mode %d of %v", m.Shape(), transM, mode, d)
	}
	return apply(&modeProductOp{base: newBase(fmt.Sprintf("ModeProduct%d", mode)), mode: mode, dims: d, transM: transM}, t, m)
}

func (o *modeProductOp) Arity() int         { return 2 }
func (o *modeProductOp) Type() hm.Type      { return fnType(2, 2, 2) }
func (o *modeProductOp) DiffWRT(int) []bool { return []bool{true, true} }

func (o *modeProductOp) outDims(m tensor.Shape) [3]int {
	p := ternary(o.transM, m[1], m[0])
	d := o.dims
	d[o.mode-1] = p
	return d
}

func (o *modeProductOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	d := o.outDims(dims(in[1]))
	return tensor.Shape{d[0], d[1] * d[2]}, nil
}

func (o *modeProductOp) Do(in ...G.Value) (G.Value, error) {
	d := o.outDims(shapeOf(in[1]))
	out := o.buffer(in[0].Dtype(), d[0], d[1]*d[2])
	return dispatch(in[0],
		func() (G.Value, error) {
			modeProduct(o.mode, o.dims, o.transM, data[float32](in[0]), data[float32](in[1]), shapeOf(in[1]), data[float32](out))
			return out, nil
		},
		func() (G.Value, error) {
			modeProduct(o.mode, o.dims, o.transM, data[float64](in[0]), data[float64](in[1]), shapeOf(in[1]), data[float64](out))
			return out, nil
		})
}

// modeProduct writes Y = T ×_mode op(M) with gemm calls on views of T.
func modeProduct[T Float](mode int, d [3]int, transM bool, t, m []T, ms tensor.Shape, y []T) {
	p := ternary(transM, ms[1], ms[0])
	ldm := ms[1]
	switch mode {
	case 1: // Y(p × n2n3) = op(M)(p×n1)·T(n1 × n2n3)
		gemm(transM, false, p, d[1]*d[2], d[0], 1, m, ldm, t, d[1]*d[2], 0, y, d[1]*d[2])
	case 3: // view T as (n1n2)×n3: Y = T·op(M)ᵀ
		gemm(false, !transM, d[0]*d[1], p, d[2], 1, t, d[2], m, ldm, 0, y, p)
	case 2: // for each i: Y_i(p×n3) = op(M)(p×n2)·T_i(n2×n3)
		for i := 0; i < d[0]; i++ {
			gemm(transM, false, p, d[2], d[1], 1, m, ldm, t[i*d[1]*d[2]:], d[2], 0, y[i*p*d[2]:], d[2])
		}
	}
}

func (o *modeProductOp) SymDiff(in G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	// dT = dY ×_mode op(M)ᵀ; the Y-shaped gradient has the output dims.
	od := o.outDims(in[1].Shape())
	gt, err := ModeProduct(grad, in[1], o.mode, od, !o.transM)
	if err != nil {
		return nil, err
	}
	gm, err := apply(&modeProductGradMOp{base: newBase(o.name + "GradM"), fwd: o}, grad, in[0], in[1])
	return G.Nodes{gt, gm}, err
}

// modeProductGradMOp computes dM from dY and T: dM'[a,b] = Σ dY[..a..]·T[..b..].
type modeProductGradMOp struct {
	base
	fwd *modeProductOp
	tmp *tensor.Dense
}

func (o *modeProductGradMOp) Arity() int         { return 3 }
func (o *modeProductGradMOp) Type() hm.Type      { return fnType(2, 2, 2, 2) }
func (o *modeProductGradMOp) DiffWRT(int) []bool { return []bool{false, false, false} }
func (o *modeProductGradMOp) SymDiff(G.Nodes, *G.Node, *G.Node) (G.Nodes, error) {
	return nil, errNoSecondOrder(o)
}
func (o *modeProductGradMOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return dims(in[2]).Clone(), nil
}

func (o *modeProductGradMOp) Do(in ...G.Value) (G.Value, error) {
	ms := shapeOf(in[2])
	out := o.buffer(in[0].Dtype(), ms...)
	p := ternary(o.fwd.transM, ms[1], ms[0])
	nm := o.fwd.dims[o.fwd.mode-1]
	tmp := ensure(&o.tmp, in[0].Dtype(), p, nm)
	return dispatch(in[0],
		func() (G.Value, error) {
			modeProductGradM(o.fwd, data[float32](in[0]), data[float32](in[1]), p, data[float32](tmp), data[float32](out))
			return out, nil
		},
		func() (G.Value, error) {
			modeProductGradM(o.fwd, data[float64](in[0]), data[float64](in[1]), p, data[float64](tmp), data[float64](out))
			return out, nil
		})
}

func modeProductGradM[T Float](f *modeProductOp, g, t []T, p int, tmp, out []T) {
	d := f.dims
	switch f.mode {
	case 1: // dM' = dY(p × n2n3)·Tᵀ(n2n3 × n1)
		gemm(false, true, p, d[0], d[1]*d[2], 1, g, d[1]*d[2], t, d[1]*d[2], 0, tmp, d[0])
	case 3: // dM' = dYᵀ((n1n2)×p)ᵀ · T((n1n2)×n3)
		gemm(true, false, p, d[2], d[0]*d[1], 1, g, p, t, d[2], 0, tmp, d[2])
	case 2: // dM' = Σ_i dY_i(p×n3)·T_iᵀ(n3×n2)
		clear(tmp)
		for i := 0; i < d[0]; i++ {
			gemm(false, true, p, d[1], d[2], 1, g[i*p*d[2]:], d[2], t[i*d[1]*d[2]:], d[2], 1, tmp, d[1])
		}
	}
	nm := d[f.mode-1]
	if !f.transM {
		copy(out, tmp)
		return
	}
	for a := 0; a < p; a++ {
		for b := 0; b < nm; b++ {
			out[b*p+a] = tmp[a*nm+b]
		}
	}
}

// sliceBlockOp copies the block [r0,r1)×[c0,c1) of a matrix; squared ComplEx
// reads the real/imaginary blocks of a Gram matrix this way.
type sliceBlockOp struct {
	base
	r0, r1, c0, c1 int
}

// SliceBlock returns rows [r0,r1) and columns [c0,c1) of the matrix x.
func SliceBlock(x *G.Node, r0, r1, c0, c1 int) (*G.Node, error) {
	s := x.Shape()
	if x.Dims() != 2 || r0 < 0 || r1 > s[0] || r0 >= r1 || c0 < 0 || c1 > s[1] || c0 >= c1 {
		return nil, fmt.Errorf("graph.SliceBlock: [%d:%d, %d:%d] of %v", r0, r1, c0, c1, s)
	}
	return apply(&sliceBlockOp{base: newBase(fmt.Sprintf("SliceBlock[%d:%d,%d:%d]", r0, r1, c0, c1)), r0: r0, r1: r1, c0: c0, c1: c1}, x)
}

func (o *sliceBlockOp) Arity() int         { return 1 }
func (o *sliceBlockOp) Type() hm.Type      { return fnType(2, 2) }
func (o *sliceBlockOp) DiffWRT(int) []bool { return []bool{true} }
func (o *sliceBlockOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{o.r1 - o.r0, o.c1 - o.c0}, nil
}

func (o *sliceBlockOp) Do(in ...G.Value) (G.Value, error) {
	s := shapeOf(in[0])
	out := o.buffer(in[0].Dtype(), o.r1-o.r0, o.c1-o.c0)
	w := o.c1 - o.c0
	return dispatch(in[0],
		func() (G.Value, error) {
			copyCols(data[float32](in[0])[o.r0*s[1]:], s[1], o.c0, data[float32](out), w, 0, w, o.r1-o.r0)
			return out, nil
		},
		func() (G.Value, error) {
			copyCols(data[float64](in[0])[o.r0*s[1]:], s[1], o.c0, data[float64](out), w, 0, w, o.r1-o.r0)
			return out, nil
		})
}

func (o *sliceBlockOp) SymDiff(in G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	g, err := apply(&padBlockOp{base: newBase("PadBlock"), fwd: o, shape: in[0].Shape()}, grad)
	return G.Nodes{g}, err
}

type padBlockOp struct {
	base
	fwd   *sliceBlockOp
	shape tensor.Shape
}

func (o *padBlockOp) Arity() int         { return 1 }
func (o *padBlockOp) Type() hm.Type      { return fnType(2, 2) }
func (o *padBlockOp) DiffWRT(int) []bool { return []bool{false} }
func (o *padBlockOp) SymDiff(G.Nodes, *G.Node, *G.Node) (G.Nodes, error) {
	return nil, errNoSecondOrder(o)
}
func (o *padBlockOp) InferShape(...G.DimSizer) (tensor.Shape, error) { return o.shape.Clone(), nil }

func (o *padBlockOp) Do(in ...G.Value) (G.Value, error) {
	out := o.buffer(in[0].Dtype(), o.shape...)
	f := o.fwd
	w := f.c1 - f.c0
	return dispatch(in[0],
		func() (G.Value, error) {
			y := data[float32](out)
			clear(y)
			copyCols(data[float32](in[0]), w, 0, y[f.r0*o.shape[1]:], o.shape[1], f.c0, w, f.r1-f.r0)
			return out, nil
		},
		func() (G.Value, error) {
			y := data[float64](out)
			clear(y)
			copyCols(data[float64](in[0]), w, 0, y[f.r0*o.shape[1]:], o.shape[1], f.c0, w, f.r1-f.r0)
			return out, nil
		})
}

// transposeOp materialises the transpose of a small matrix (for large ones,
// pass a transpose flag to MatMul instead).
type transposeOp struct{ base }

// Transpose returns xᵀ.
func Transpose(x *G.Node) (*G.Node, error) {
	if x.Dims() != 2 {
		return nil, fmt.Errorf("graph.Transpose: need a matrix, got %v", x.Shape())
	}
	return apply(&transposeOp{base: newBase("Transpose")}, x)
}

func (o *transposeOp) Arity() int         { return 1 }
func (o *transposeOp) Type() hm.Type      { return fnType(2, 2) }
func (o *transposeOp) DiffWRT(int) []bool { return []bool{true} }
func (o *transposeOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	s := dims(in[0])
	return tensor.Shape{s[1], s[0]}, nil
}

func (o *transposeOp) Do(in ...G.Value) (G.Value, error) {
	s := shapeOf(in[0])
	out := o.buffer(in[0].Dtype(), s[1], s[0])
	return dispatch(in[0],
		func() (G.Value, error) {
			transpose(data[float32](in[0]), s[0], s[1], data[float32](out))
			return out, nil
		},
		func() (G.Value, error) {
			transpose(data[float64](in[0]), s[0], s[1], data[float64](out))
			return out, nil
		})
}

func transpose[T Float](x []T, r, c int, out []T) {
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			out[j*r+i] = x[i*c+j]
		}
	}
}

func (o *transposeOp) SymDiff(in G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	g, err := Transpose(grad)
	return G.Nodes{g}, err
}
