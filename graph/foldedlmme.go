package graph

import (
	"fmt"
	"slices"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// FoldedLogMatMulExp scores log-space queries against candidates whose
// inner columns repeat blocks of a smaller feature matrix. With q m×(nb·w)
// in nb column blocks of width w, f n×(np·w) in np such blocks, and the
// trailing neg columns of q of weight −1,
//
//	y_ij = log Σ_b Σ_l s_{bw+l} exp(q_i,bw+l + f_j,blocks[b]·w+l),
//
// which is SignedLogMatMulExp(q, [f_blocks[0] | … | f_blocks[nb−1]], false,
// true, neg) without building that concatenation: the query blocks that
// meet the same block of f are summed after exponentiating, so the product
// is m×n×(np·w) rather than m×n×(nb·w). ComplEx+ scores its four terms
// against two candidate halves (re, im) this way, halving a ranking's
// product and its candidate exponentials. Every block of f must appear in
// blocks. Shifts, NaN for a negative sum and −Inf for none are as in
// SignedLogMatMulExp, and so is the gradient.
func FoldedLogMatMulExp(q, f *G.Node, blocks []int, neg int) (*G.Node, error) {
	if q == nil || f == nil {
		return nil, fmt.Errorf("graph.FoldedLogMatMulExp: nil operand")
	}
	if q.Dims() != 2 || f.Dims() != 2 {
		return nil, fmt.Errorf("graph.FoldedLogMatMulExp: need matrices, got %v and %v", q.Shape(), f.Shape())
	}
	nb := len(blocks)
	if nb == 0 || q.Shape()[1]%nb != 0 {
		return nil, fmt.Errorf("graph.FoldedLogMatMulExp: %d query columns in %d blocks", q.Shape()[1], nb)
	}
	w := q.Shape()[1] / nb
	np := 0
	for _, p := range blocks {
		if p < 0 {
			return nil, fmt.Errorf("graph.FoldedLogMatMulExp: negative block %d in %v", p, blocks)
		}
		np = max(np, p+1)
	}
	if f.Shape()[1] != np*w {
		return nil, fmt.Errorf("graph.FoldedLogMatMulExp: %d feature columns, want %d blocks of %d for blocks %v", f.Shape()[1], np, w, blocks)
	}
	// Every block of f must meet the query: f's rows are shifted by their
	// maximum over all its columns, which an unused block could hold.
	for p := 0; p < np; p++ {
		if !slices.Contains(blocks, p) {
			return nil, fmt.Errorf("graph.FoldedLogMatMulExp: block %d of the features is in none of the blocks %v", p, blocks)
		}
	}
	if neg < 0 || neg >= q.Shape()[1] {
		return nil, fmt.Errorf("graph.FoldedLogMatMulExp: %d negative inner indices of %d; want 0 ≤ neg < %d", neg, q.Shape()[1], q.Shape()[1])
	}
	name := fmt.Sprintf("FoldedLogMatMulExp%v/%d", blocks, neg)
	return apply(&foldedLMMEOp{base: newBase(name), blocks: slices.Clone(blocks), width: w, parts: np, neg: neg}, q, f)
}

type foldedLMMEOp struct {
	base
	blocks            []int
	width, parts, neg int
	eq, a, ef, c      *tensor.Dense // exp(q − mq), its fold, exp(f − mf), a·efᵀ
	mq, mf            *tensor.Dense
}

func (o *foldedLMMEOp) Arity() int         { return 2 }
func (o *foldedLMMEOp) Type() hm.Type      { return fnType(2, 2, 2) }
func (o *foldedLMMEOp) DiffWRT(int) []bool { return []bool{true, true} }

func (o *foldedLMMEOp) SymDiff(in G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	gs := make(G.Nodes, 2)
	for which := range gs {
		var err error
		gs[which], err = apply(&foldedLMMEGradOp{logProductGrad: logProductGrad{base: newBase(fmt.Sprintf("%sGrad%d", o.name, which)), which: which}, fwd: o}, grad, in[0], in[1], out)
		if err != nil {
			return nil, err
		}
	}
	return gs, nil
}

func (o *foldedLMMEOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	q, f := dims(in[0]), dims(in[1])
	if q[1] != len(o.blocks)*o.width || f[1] != o.parts*o.width {
		return nil, fmt.Errorf("%v: operands %v and %v", o, q, f)
	}
	return tensor.Shape{q[0], f[0]}, nil
}

func (o *foldedLMMEOp) Do(in ...G.Value) (G.Value, error) {
	sq, sf := shapeOf(in[0]), shapeOf(in[1])
	if sq[1] != len(o.blocks)*o.width || sf[1] != o.parts*o.width {
		return nil, fmt.Errorf("%v: operands %v and %v", o, sq, sf)
	}
	m, n, k := sq[0], sf[0], sf[1]
	dt := in[0].Dtype()
	out := o.buffer(dt, m, n)
	ensure(&o.eq, dt, m, sq[1])
	ensure(&o.a, dt, m, k)
	ensure(&o.ef, dt, n, k)
	ensure(&o.c, dt, m, n)
	ensure(&o.mq, dt, m)
	ensure(&o.mf, dt, n)
	return dispatch(in[0],
		func() (G.Value, error) { foldedLMMEFwd[float32](o, in[0], in[1], out, m, n, k); return out, nil },
		func() (G.Value, error) { foldedLMMEFwd[float64](o, in[0], in[1], out, m, n, k); return out, nil })
}

func foldedLMMEFwd[T Float](o *foldedLMMEOp, q, f G.Value, out *tensor.Dense, m, n, k int) {
	kq := len(o.blocks) * o.width
	eq, a, ef, c := data[T](o.eq), data[T](o.a), data[T](o.ef), data[T](o.c)
	mq, mf := data[T](o.mq), data[T](o.mf)
	expRowsShifted(data[T](q), kq, false, m, kq, eq, mq)
	expRowsShifted(data[T](f), k, false, n, k, ef, mf)
	w := o.width
	parallelFor(m, m*kq, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			ai := a[i*k : (i+1)*k]
			clear(ai)
			for b, p := range o.blocks {
				src, dst := eq[i*kq+b*w:i*kq+(b+1)*w], ai[p*w:(p+1)*w]
				for l, v := range src {
					if b*w+l >= kq-o.neg {
						dst[l] -= v
					} else {
						dst[l] += v
					}
				}
			}
		}
	})
	gemm(false, true, m, n, k, 1, a, k, ef, k, 0, c, n)
	logShifted(c, mq, mf, o.neg > 0, data[T](out))
}

// foldedLMMEGradOp: with H = Γ / C (zero where C underflowed) and A the
// signed fold of EQ, dq = S·EQ ∘ (H·EF) read back through the blocks, and
// df = EF ∘ (Hᵀ·A). It reads the forward op's cache, which the
// topological order guarantees is fresh.
type foldedLMMEGradOp struct {
	logProductGrad
	fwd *foldedLMMEOp
}

func (o *foldedLMMEGradOp) Do(in ...G.Value) (G.Value, error) {
	out := o.buffer(in[0].Dtype(), shapeOf(in[1+o.which])...)
	return dispatch(in[0],
		func() (G.Value, error) { foldedLMMEBwd[float32](o, in[0], out); return out, nil },
		func() (G.Value, error) { foldedLMMEBwd[float64](o, in[0], out); return out, nil })
}

func foldedLMMEBwd[T Float](o *foldedLMMEGradOp, grad G.Value, out *tensor.Dense) {
	f := o.fwd
	m, k := f.a.Shape()[0], f.a.Shape()[1]
	n := f.ef.Shape()[0]
	dt := out.Dtype()
	h := data[T](ensure(&o.h, dt, m, n))
	gradOverMass(data[T](grad), data[T](f.c), h)
	ef, y := data[T](f.ef), data[T](out)
	if o.which == 1 {
		p := data[T](ensure(&o.p, dt, n, k))
		gemm(true, false, n, k, m, 1, h, n, data[T](f.a), k, 0, p, k) // Hᵀ·A: n×k
		for i, v := range p {
			y[i] = ef[i] * v
		}
		return
	}
	p := data[T](ensure(&o.p, dt, m, k))
	gemm(false, false, m, k, n, 1, h, n, ef, k, 0, p, k) // H·EF: m×k
	eq, w := data[T](f.eq), f.width
	kq := len(f.blocks) * w
	for i := 0; i < m; i++ {
		for b, part := range f.blocks {
			for l := 0; l < w; l++ {
				v := eq[i*kq+b*w+l] * p[i*k+part*w+l]
				if b*w+l >= kq-f.neg {
					v = -v
				}
				y[i*kq+b*w+l] = v
			}
		}
	}
}
