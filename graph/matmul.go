package graph

import (
	"fmt"
	"math"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// matmulOp computes op(A)·op(B). Transposed operands are handed to BLAS as
// flags: Gorgonia's Transpose would copy a |E|×d matrix at every step.
type matmulOp struct {
	base
	transA, transB bool
}

// MatMul returns op(a)·op(b), where op transposes its operand when the
// corresponding flag is set. Typical use: scores of a batch of queries
// against every candidate, MatMul(queries, candidates, false, true).
func MatMul(a, b *G.Node, transA, transB bool) (*G.Node, error) {
	if a.Dims() != 2 || b.Dims() != 2 {
		return nil, fmt.Errorf("graph.MatMul: need matrices, got %v and %v", a.Shape(), b.Shape())
	}
	name := fmt.Sprintf("MatMul(%s,%s)", tflag("A", transA), tflag("B", transB))
	return apply(&matmulOp{base: newBase(name), transA: transA, transB: transB}, a, b)
}

func tflag(n string, t bool) string {
	if t {
		return n + "ᵀ"
	}
	return n
}

func (o *matmulOp) Arity() int         { return 2 }
func (o *matmulOp) Type() hm.Type      { return fnType(2, 2, 2) }
func (o *matmulOp) DiffWRT(int) []bool { return []bool{true, true} }

func (o *matmulOp) dims(a, b tensor.Shape) (m, n, k int, err error) {
	m, ka := a[0], a[1]
	if o.transA {
		m, ka = ka, m
	}
	kb, n := b[0], b[1]
	if o.transB {
		kb, n = n, kb
	}
	if ka != kb {
		return 0, 0, 0, fmt.Errorf("%v: inner dimensions differ: %v and %v", o, a, b)
	}
	return m, n, ka, nil
}

func (o *matmulOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	m, n, _, err := o.dims(dims(in[0]), dims(in[1]))
	return tensor.Shape{m, n}, err
}

func (o *matmulOp) Do(in ...G.Value) (G.Value, error) {
	sa, sb := shapeOf(in[0]), shapeOf(in[1])
	m, n, k, err := o.dims(sa, sb)
	if err != nil {
		return nil, err
	}
	out := o.buffer(in[0].Dtype(), m, n)
	return dispatch(in[0],
		func() (G.Value, error) {
			gemm(o.transA, o.transB, m, n, k, 1, data[float32](in[0]), sa[1], data[float32](in[1]), sb[1], 0, data[float32](out), n)
			return out, nil
		},
		func() (G.Value, error) {
			gemm(o.transA, o.transB, m, n, k, 1, data[float64](in[0]), sa[1], data[float64](in[1]), sb[1], 0, data[float64](out), n)
			return out, nil
		})
}

func (o *matmulOp) SymDiff(in G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	a, b := in[0], in[1]
	var ga, gb *G.Node
	var err error
	// With C = op(A)·op(B):  dop(A) = dC·op(B)ᵀ and dop(B) = op(A)ᵀ·dC.
	if o.transA {
		ga, err = MatMul(b, grad, o.transB, true)
	} else {
		ga, err = MatMul(grad, b, false, !o.transB)
	}
	if err != nil {
		return nil, err
	}
	if o.transB {
		gb, err = MatMul(grad, a, true, o.transA)
	} else {
		gb, err = MatMul(a, grad, !o.transA, false)
	}
	if err != nil {
		return nil, err
	}
	return G.Nodes{ga, gb}, nil
}

// gramOp computes AᵀA with a symmetric rank-k update. The Gram matrix of the
// entity embeddings is what makes squared circuits cheap to marginalise:
// Σ_o (q·e_o)² = qᵀ(EᵀE)q.
type gramOp struct{ base }

// Gram returns aᵀa for an n×k matrix a (a k×k matrix).
func Gram(a *G.Node) (*G.Node, error) {
	if a.Dims() != 2 {
		return nil, fmt.Errorf("graph.Gram: need a matrix, got %v", a.Shape())
	}
	return apply(&gramOp{base: newBase("Gram")}, a)
}

func (o *gramOp) Arity() int         { return 1 }
func (o *gramOp) Type() hm.Type      { return fnType(2, 2) }
func (o *gramOp) DiffWRT(int) []bool { return []bool{true} }
func (o *gramOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	s := dims(in[0])
	return tensor.Shape{s[1], s[1]}, nil
}

func (o *gramOp) Do(in ...G.Value) (G.Value, error) {
	s := shapeOf(in[0])
	out := o.buffer(in[0].Dtype(), s[1], s[1])
	return dispatch(in[0],
		func() (G.Value, error) { syrkT(s[0], s[1], data[float32](in[0]), data[float32](out)); return out, nil },
		func() (G.Value, error) { syrkT(s[0], s[1], data[float64](in[0]), data[float64](out)); return out, nil })
}

func (o *gramOp) SymDiff(in G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	g, err := apply(&gramGradOp{base: newBase("GramGrad")}, in[0], grad)
	return G.Nodes{g}, err
}

// gramGradOp computes d(AᵀA)/dA applied to an upstream gradient Γ: A(Γ + Γᵀ).
type gramGradOp struct {
	base
	sym *tensor.Dense
}

func (o *gramGradOp) Arity() int         { return 2 }
func (o *gramGradOp) Type() hm.Type      { return fnType(2, 2, 2) }
func (o *gramGradOp) DiffWRT(int) []bool { return []bool{false, false} }
func (o *gramGradOp) SymDiff(G.Nodes, *G.Node, *G.Node) (G.Nodes, error) {
	return nil, errNoSecondOrder(o)
}
func (o *gramGradOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return dims(in[0]).Clone(), nil
}

func (o *gramGradOp) Do(in ...G.Value) (G.Value, error) {
	s := shapeOf(in[0])
	n, k := s[0], s[1]
	out := o.buffer(in[0].Dtype(), n, k)
	if o.sym == nil || o.sym.Dtype() != in[0].Dtype() || o.sym.Shape()[0] != k {
		o.sym = tensor.New(tensor.Of(in[0].Dtype()), tensor.WithShape(k, k))
	}
	return dispatch(in[0],
		func() (G.Value, error) {
			gramGrad(n, k, data[float32](in[0]), data[float32](in[1]), data[float32](o.sym), data[float32](out))
			return out, nil
		},
		func() (G.Value, error) {
			gramGrad(n, k, data[float64](in[0]), data[float64](in[1]), data[float64](o.sym), data[float64](out))
			return out, nil
		})
}

func gramGrad[T Float](n, k int, a, g, sym, out []T) {
	for i := 0; i < k; i++ {
		for j := 0; j < k; j++ {
			sym[i*k+j] = g[i*k+j] + g[j*k+i]
		}
	}
	gemm(false, false, n, k, k, 1, a, k, sym, k, 0, out, k)
}

// quadFormOp computes y_i = q_iᵀ G q_i: for a Gram matrix G = XᵀX, the
// squared mass Σ_x (q_i·x)² of each query over the rows of X, which is how a
// squared circuit sums a variable out without a batch×rows matrix.
type quadFormOp struct {
	base
	qg  *tensor.Dense // Q·G, kept for the backward pass of the same run
	sym bool          // G was symmetric in the forward pass
}

// QuadForm returns the vector of qᵢᵀ G qᵢ over the rows of the n×k matrix q,
// for a k×k matrix G. A symmetric G (any Gram matrix) saves one n×k×k
// product in the backward pass, so one op costs two products in all where
// MatMul followed by RowDot costs three.
func QuadForm(q, g *G.Node) (*G.Node, error) {
	if q.Dims() != 2 || g.Dims() != 2 || g.Shape()[0] != q.Shape()[1] || g.Shape()[1] != q.Shape()[1] {
		return nil, fmt.Errorf("graph.QuadForm: need n×k queries and a k×k matrix, got %v and %v", q.Shape(), g.Shape())
	}
	return apply(&quadFormOp{base: newBase("QuadForm")}, q, g)
}

func (o *quadFormOp) Arity() int         { return 2 }
func (o *quadFormOp) Type() hm.Type      { return fnType(2, 2, 1) }
func (o *quadFormOp) DiffWRT(int) []bool { return []bool{true, true} }
func (o *quadFormOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{dims(in[0])[0]}, nil
}

func (o *quadFormOp) Do(in ...G.Value) (G.Value, error) {
	s := shapeOf(in[0])
	n, k := s[0], s[1]
	out := o.buffer(in[0].Dtype(), n)
	qg := ensure(&o.qg, in[0].Dtype(), n, k)
	return dispatch(in[0],
		func() (G.Value, error) {
			o.sym = quadForm(n, k, data[float32](in[0]), data[float32](in[1]), data[float32](qg), data[float32](out))
			return out, nil
		},
		func() (G.Value, error) {
			o.sym = quadForm(n, k, data[float64](in[0]), data[float64](in[1]), data[float64](qg), data[float64](out))
			return out, nil
		})
}

// quadForm writes Q·G to qg and the row-wise dot products of qg and Q to
// out, and reports whether G is symmetric.
func quadForm[T Float](n, k int, q, g, qg, out []T) bool {
	gemm(false, false, n, k, k, 1, q, k, g, k, 0, qg, k)
	rowDot(qg, q, out, k)
	return symmetric(g, k)
}

// symmetric reports whether the k×k matrix g equals its transpose exactly,
// as Gram matrices built by syrkT and sums or products of them do. (0.8 ms
// at k = 1000, 0.03 ms at k = 200; a tiled walk was slower.)
func symmetric[T Float](g []T, k int) bool {
	for i := 0; i < k; i++ {
		for j := i + 1; j < k; j++ {
			if g[i*k+j] != g[j*k+i] {
				return false
			}
		}
	}
	return true
}

func (o *quadFormOp) SymDiff(in G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	gq, err := apply(&quadFormGradOp{base: newBase("QuadFormGradQ"), fwd: o}, in[0], in[1], grad)
	if err != nil {
		return nil, err
	}
	gg, err := apply(&quadFormGradOp{base: newBase("QuadFormGradG"), fwd: o, wrtG: true}, in[0], in[1], grad)
	return G.Nodes{gq, gg}, err
}

// quadFormGradOp: dq_i = g_i (G + Gᵀ) q_i, which is 2 g_i G q_i from the
// forward pass's Q·G when G is symmetric; dG = Qᵀ diag(g) Q.
type quadFormGradOp struct {
	base
	fwd     *quadFormOp
	wrtG    bool
	scratch *tensor.Dense
}

func (o *quadFormGradOp) Arity() int         { return 3 }
func (o *quadFormGradOp) Type() hm.Type      { return fnType(2, 2, 1, 2) }
func (o *quadFormGradOp) DiffWRT(int) []bool { return []bool{false, false, false} }
func (o *quadFormGradOp) SymDiff(G.Nodes, *G.Node, *G.Node) (G.Nodes, error) {
	return nil, errNoSecondOrder(o)
}
func (o *quadFormGradOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	if o.wrtG {
		return dims(in[1]).Clone(), nil
	}
	return dims(in[0]).Clone(), nil
}

func (o *quadFormGradOp) Do(in ...G.Value) (G.Value, error) {
	s := shapeOf(in[0])
	n, k := s[0], s[1]
	dt := in[0].Dtype()
	if o.wrtG {
		out := o.buffer(dt, k, k)
		sq := ensure(&o.scratch, dt, n, k)
		return dispatch(in[0],
			func() (G.Value, error) {
				quadFormGradG(n, k, data[float32](in[0]), data[float32](in[2]), data[float32](sq), data[float32](out))
				return out, nil
			},
			func() (G.Value, error) {
				quadFormGradG(n, k, data[float64](in[0]), data[float64](in[2]), data[float64](sq), data[float64](out))
				return out, nil
			})
	}
	out := o.buffer(dt, n, k)
	return dispatch(in[0],
		func() (G.Value, error) {
			quadFormGradQ(n, k, o.fwd.sym, data[float32](in[0]), data[float32](in[1]), data[float32](in[2]), data[float32](o.fwd.qg), data[float32](out))
			return out, nil
		},
		func() (G.Value, error) {
			quadFormGradQ(n, k, o.fwd.sym, data[float64](in[0]), data[float64](in[1]), data[float64](in[2]), data[float64](o.fwd.qg), data[float64](out))
			return out, nil
		})
}

func quadFormGradQ[T Float](n, k int, sym bool, q, g, grad, qg, out []T) {
	if !sym {
		gemm(false, true, n, k, k, 1, q, k, g, k, 0, out, k) // Q·Gᵀ
	}
	parallelFor(n, n*k, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			gi, qgr, or := grad[i], qg[i*k:(i+1)*k], out[i*k:(i+1)*k]
			if sym {
				for j := range or {
					or[j] = 2 * gi * qgr[j]
				}
				continue
			}
			for j := range or {
				or[j] = gi * (qgr[j] + or[j])
			}
		}
	})
}

// quadFormGradG writes dG = Qᵀ diag(g) Q = Σ g_i q_i q_iᵀ as PᵀP − NᵀN,
// where the rows of P (N) are the q_i scaled by √g_i (√−g_i) for the
// positive (negative) g_i: two symmetric rank updates over n rows in all,
// half the flops of the general product Qᵀ·(diag(g) Q), and exactly
// symmetric, so the Gram's own backward pass may treat it as such. A NaN
// g_i joins P, so it still poisons dG as it should.
func quadFormGradG[T Float](n, k int, q, grad, scaled, out []T) {
	pos, neg := 0, n // P fills scaled from the top, N from the bottom
	for i, g := range grad[:n] {
		var row []T
		switch {
		case g > 0 || g != g:
			row, g = scaled[pos*k:(pos+1)*k], T(math.Sqrt(float64(g)))
			pos++
		case g < 0:
			neg--
			row, g = scaled[neg*k:(neg+1)*k], T(math.Sqrt(float64(-g)))
		default:
			continue
		}
		for j, v := range q[i*k : (i+1)*k] {
			row[j] = g * v
		}
	}
	syrkUpperT(pos, k, 1, scaled[:pos*k], 0, out)
	if neg < n {
		syrkUpperT(n-neg, k, -1, scaled[neg*k:n*k], 1, out)
	}
	mirrorUpper(out, k)
}

// logMatMulExpOp computes log(exp(op(A))·exp(op(B))): a matrix product in
// the log semiring, where non-negative circuits keep their parameters.
// Rows of op(A) and columns of op(B) are shifted by their maxima before
// exponentiating, so the product runs in BLAS without overflow.
type logMatMulExpOp struct {
	base
	transA, transB bool
	neg            int // trailing inner indices of weight −1 (SignedLogMatMulExp)
	// forward cache, read by the backward ops of the same program run:
	// ea = exp(op(A) − ma) (m×k), eb = exp(op(B)ᵀ − mb) (n×k), c = ea·ebᵀ.
	ea, eb, c *tensor.Dense
	ma, mb    *tensor.Dense
}

// LogMatMulExp returns log(exp(op(a))·exp(op(b))) computed stably.
func LogMatMulExp(a, b *G.Node, transA, transB bool) (*G.Node, error) {
	if a.Dims() != 2 || b.Dims() != 2 {
		return nil, fmt.Errorf("graph.LogMatMulExp: need matrices, got %v and %v", a.Shape(), b.Shape())
	}
	name := fmt.Sprintf("LogMatMulExp(%s,%s)", tflag("A", transA), tflag("B", transB))
	return apply(&logMatMulExpOp{base: newBase(name), transA: transA, transB: transB}, a, b)
}

// SignedLogMatMulExp returns log(exp(op(a))·S·exp(op(b))) with S the k×k
// diagonal of +1 but for −1 on the trailing neg of the k inner indices:
//
//	y_ij = log(Σ_{l<k−neg} e^{a_il + b_lj} − Σ_{l≥k−neg} e^{a_il + b_lj}),
//
// the scores of a non-negative circuit with negative terms (ComplEx+)
// against every candidate. It is one product where slicing both operands
// into the two parts, a LogMatMulExp each and a log-space difference owned
// copies of the operands and four more m×n buffers. An entry whose
// difference is zero gives −Inf and a negative one NaN, as p + Log1mExp(n
// − p) does (though which entries cancel exactly can differ by rounding);
// an entry with no mass on either side gives −Inf, where that composite
// gave NaN. Each row of op(a) and column of op(b) is shifted by its maximum
// over all k inner indices, so the result keeps its precision when those
// maxima fall on positive indices, as in ComplEx+ (whose imaginary parts
// never exceed the real ones); otherwise a positive part far below the
// negative one can underflow to −Inf. With neg = 0 it is LogMatMulExp.
func SignedLogMatMulExp(a, b *G.Node, transA, transB bool, neg int) (*G.Node, error) {
	if a == nil || b == nil {
		return nil, fmt.Errorf("graph.SignedLogMatMulExp: nil operand")
	}
	if a.Dims() != 2 || b.Dims() != 2 {
		return nil, fmt.Errorf("graph.SignedLogMatMulExp: need matrices, got %v and %v", a.Shape(), b.Shape())
	}
	k := a.Shape()[1]
	if transA {
		k = a.Shape()[0]
	}
	if neg < 0 || neg >= k {
		return nil, fmt.Errorf("graph.SignedLogMatMulExp: %d negative inner indices of %d; want 0 ≤ neg < %d", neg, k, k)
	}
	if neg == 0 {
		return LogMatMulExp(a, b, transA, transB)
	}
	name := fmt.Sprintf("SignedLogMatMulExp%d(%s,%s)", neg, tflag("A", transA), tflag("B", transB))
	return apply(&logMatMulExpOp{base: newBase(name), transA: transA, transB: transB, neg: neg}, a, b)
}

func (o *logMatMulExpOp) Arity() int         { return 2 }
func (o *logMatMulExpOp) Type() hm.Type      { return fnType(2, 2, 2) }
func (o *logMatMulExpOp) DiffWRT(int) []bool { return []bool{true, true} }

func (o *logMatMulExpOp) shapes(a, b tensor.Shape) (m, n, k int, err error) {
	return (&matmulOp{transA: o.transA, transB: o.transB, base: o.base}).dims(a, b)
}

func (o *logMatMulExpOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	m, n, _, err := o.shapes(dims(in[0]), dims(in[1]))
	return tensor.Shape{m, n}, err
}

func ensure(t **tensor.Dense, dt tensor.Dtype, shape ...int) *tensor.Dense {
	if *t == nil || (*t).Dtype() != dt || !(*t).Shape().Eq(tensor.Shape(shape)) {
		*t = tensor.New(tensor.Of(dt), tensor.WithShape(shape...))
	}
	return *t
}

func (o *logMatMulExpOp) Do(in ...G.Value) (G.Value, error) {
	sa, sb := shapeOf(in[0]), shapeOf(in[1])
	m, n, k, err := o.shapes(sa, sb)
	if err != nil {
		return nil, err
	}
	if o.neg >= k {
		return nil, fmt.Errorf("%v: %d negative inner indices of %d", o, o.neg, k)
	}
	dt := in[0].Dtype()
	out := o.buffer(dt, m, n)
	ensure(&o.ea, dt, m, k)
	ensure(&o.eb, dt, n, k)
	ensure(&o.c, dt, m, n)
	ensure(&o.ma, dt, m)
	ensure(&o.mb, dt, n)
	return dispatch(in[0],
		func() (G.Value, error) { logMatMulExpFwd[float32](o, in[0], in[1], out, m, n, k); return out, nil },
		func() (G.Value, error) { logMatMulExpFwd[float64](o, in[0], in[1], out, m, n, k); return out, nil })
}

// expRowsShifted writes exp(X − rowmax) for the r×c matrix X = x or xᵀ
// (trans) into out (row-major r×c), and the row maxima into mx.
func expRowsShifted[T Float](x []T, ld int, trans bool, r, c int, out, mx []T) {
	if trans {
		transpose(x[:c*ld], c, ld, out) // x is c×r with ld = r
		x, trans = out, false
	}
	// Plain comparisons, not math.Max (whose float64 round trip and
	// signed-zero case made this loop a tenth of a ComplEx+ ranking).
	// A NaN entry makes its row's maximum NaN, as math.Max did, so that the
	// whole row's products are NaN: float32's vectorised exp would turn a
	// lone NaN into a finite number.
	parallelFor(r, r*c, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			m := T(math.Inf(-1))
			for _, v := range x[i*c : (i+1)*c] {
				if v > m {
					m = v
				} else if v != v {
					m = v
					break
				}
			}
			if math.IsInf(float64(m), 0) {
				m = 0 // a row of −Inf (no mass) or +Inf: leave it unshifted
			}
			mx[i] = m
		}
	})
	expShift(x, r, c, mx, nil, out)
}

func logMatMulExpFwd[T Float](o *logMatMulExpOp, a, b G.Value, out *tensor.Dense, m, n, k int) {
	sa, sb := shapeOf(a), shapeOf(b)
	ea, eb, c := data[T](o.ea), data[T](o.eb), data[T](o.c)
	ma, mb := data[T](o.ma), data[T](o.mb)
	expRowsShifted(data[T](a), sa[1], o.transA, m, k, ea, ma)
	// op(B)ᵀ is n×k: B itself when transB, else Bᵀ.
	expRowsShifted(data[T](b), sb[1], !o.transB, n, k, eb, mb)
	// The signs go into ea, which the backward then uses as is:
	// d op(A) = S·EA ∘ (H·EB) and d op(B)ᵀ = EB ∘ (Hᵀ·S·EA).
	if o.neg > 0 {
		for i := 0; i < m; i++ {
			for l := k - o.neg; l < k; l++ {
				ea[i*k+l] = -ea[i*k+l]
			}
		}
	}
	gemm(false, true, m, n, k, 1, ea, k, eb, k, 0, c, n)
	logShifted(c, ma, mb, o.neg > 0, data[T](out))
}

// logShifted writes y = log c + ma_i + mb_j for the m×n product c of two
// exponentials shifted by their row maxima ma and mb: −Inf where c is
// zero, and where signed, NaN where c is negative (the log of a negative
// difference, as Log1mExp gives).
func logShifted[T Float](c, ma, mb []T, signed bool, y []T) {
	m, n := len(ma), len(mb)
	unaryKernel(kindLogPos, 0, c, y)
	nan := T(math.NaN())
	parallelFor(m, m*n, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			for j := 0; j < n; j++ {
				y[i*n+j] += ma[i] + mb[j]
			}
			if !signed {
				continue
			}
			for j, v := range c[i*n : (i+1)*n] {
				if v < 0 {
					y[i*n+j] = nan
				}
			}
		}
	})
}

func (o *logMatMulExpOp) SymDiff(in G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	ga, err := apply(&logMatMulExpGradOp{logProductGrad: logProductGrad{base: newBase(o.name + "Grad0"), which: 0}, fwd: o}, grad, in[0], in[1], out)
	if err != nil {
		return nil, err
	}
	gb, err := apply(&logMatMulExpGradOp{logProductGrad: logProductGrad{base: newBase(o.name + "Grad1"), which: 1}, fwd: o}, grad, in[0], in[1], out)
	if err != nil {
		return nil, err
	}
	return G.Nodes{ga, gb}, nil
}

// logMatMulExpGradOp: with H = Γ / C (zero where C underflowed),
// d op(A) = EA ∘ (H·EB) and d op(B)ᵀ = EB ∘ (Hᵀ·EA), transposed back when
// the operand was. It reads the forward op's cache, which the topological
// order guarantees is fresh.
type logMatMulExpGradOp struct {
	logProductGrad
	fwd *logMatMulExpOp
}

// logProductGrad is what the gradient ops of the log-space products
// (LogMatMulExp, FoldedLogMatMulExp) share: inputs (Γ, a, b, y), the
// gradient of operand which as output, and the buffers of H = Γ / C and
// of the product that multiplies it.
type logProductGrad struct {
	base
	which int
	h, p  *tensor.Dense
}

func (o *logProductGrad) Arity() int         { return 4 }
func (o *logProductGrad) Type() hm.Type      { return fnType(2, 2, 2, 2, 2) }
func (o *logProductGrad) DiffWRT(int) []bool { return []bool{false, false, false, false} }
func (o *logProductGrad) SymDiff(G.Nodes, *G.Node, *G.Node) (G.Nodes, error) {
	return nil, errNoSecondOrder(o)
}
func (o *logProductGrad) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return dims(in[1+o.which]).Clone(), nil
}

func (o *logMatMulExpGradOp) Do(in ...G.Value) (G.Value, error) {
	target := shapeOf(in[1+o.which])
	out := o.buffer(in[0].Dtype(), target...)
	return dispatch(in[0],
		func() (G.Value, error) { logMatMulExpBwd[float32](o, in[0], out); return out, nil },
		func() (G.Value, error) { logMatMulExpBwd[float64](o, in[0], out); return out, nil })
}

// gradOverMass writes h = g / c where c > 0 and 0 elsewhere: the gradient
// of a log-space product's output over its linear value c, with no
// gradient through entries that underflowed or cancelled to c ≤ 0.
func gradOverMass[T Float](g, c, h []T) {
	for i := range h {
		if c[i] > 0 {
			h[i] = g[i] / c[i]
		} else {
			h[i] = 0
		}
	}
}

func logMatMulExpBwd[T Float](o *logMatMulExpGradOp, grad G.Value, out *tensor.Dense) {
	f := o.fwd
	m, k := f.ea.Shape()[0], f.ea.Shape()[1]
	n := f.eb.Shape()[0]
	dt := out.Dtype()
	ensure(&o.h, dt, m, n)
	h := data[T](o.h)
	gradOverMass(data[T](grad), data[T](f.c), h)
	ea, eb, y := data[T](f.ea), data[T](f.eb), data[T](out)
	// rows×k result P, multiplied by E (rows×k), stored op-transposed if needed.
	write := func(e, p []T, rows int, trans bool) {
		for i := 0; i < rows; i++ {
			for j := 0; j < k; j++ {
				v := e[i*k+j] * p[i*k+j]
				if trans {
					y[j*rows+i] = v
				} else {
					y[i*k+j] = v
				}
			}
		}
	}
	if o.which == 0 {
		p := data[T](ensure(&o.p, dt, m, k))
		gemm(false, false, m, k, n, 1, h, n, eb, k, 0, p, k) // H·EB: m×k
		write(ea, p, m, f.transA)
		return
	}
	p := data[T](ensure(&o.p, dt, n, k))
	gemm(true, false, n, k, m, 1, h, n, ea, k, 0, p, k) // Hᵀ·EA: n×k
	// op(B)ᵀ has rows n; B is n×k when transB, else k×n.
	write(eb, p, n, !f.transB)
}
