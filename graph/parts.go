package graph

import (
	"fmt"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// A PartTerm adds Sign·(part A of x)∘(part B of y) into part Out of a
// PartProduct, rows being cut into parts of equal width.
type PartTerm struct {
	A, B, Out int
	Sign      float64
}

// PartProduct returns z whose part c is Σ Sign·x_A∘y_B over the terms
// with Out = c (a part no term writes is zero), where x_p is columns
// [p·k, (p+1)·k) of x and k = cols/parts: the product of hypercomplex
// numbers stored as rows of parts (ComplEx's [re | im], a quaternion's
// four parts) written as its table of signed part products. Either
// operand may have a single row, broadcast over the other's. One pass
// forward and one per operand backward, whatever the number of terms.
func PartProduct(x, y *G.Node, parts int, terms []PartTerm) (*G.Node, error) {
	if x.Dims() != 2 || y.Dims() != 2 || parts < 1 || x.Shape()[1]%parts != 0 || x.Shape()[1] != y.Shape()[1] {
		return nil, fmt.Errorf("graph.PartProduct: want matrices of equal width cut into %d parts, got %v and %v", parts, x.Shape(), y.Shape())
	}
	if _, err := broadcastShape(x.Shape(), y.Shape()); err != nil {
		return nil, fmt.Errorf("graph.PartProduct: %w", err)
	}
	for _, t := range terms {
		if min(t.A, t.B, t.Out) < 0 || max(t.A, t.B, t.Out) >= parts {
			return nil, fmt.Errorf("graph.PartProduct: term %+v outside %d parts", t, parts)
		}
	}
	return apply(&partProductOp{base: newBase("PartProduct"), parts: parts, terms: terms}, x, y)
}

// partProductOp computes PartProduct; with rows1 it sums the result over
// the rows into one row (the gradient of a broadcast operand).
type partProductOp struct {
	base
	parts int
	terms []PartTerm
	rows1 bool
}

func (o *partProductOp) Arity() int         { return 2 }
func (o *partProductOp) Type() hm.Type      { return fnType(2, 2, 2) }
func (o *partProductOp) DiffWRT(int) []bool { return []bool{!o.rows1, !o.rows1} }
func (o *partProductOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	s, err := broadcastShape(dims(in[0]), dims(in[1]))
	if o.rows1 && err == nil {
		s = tensor.Shape{1, s[1]}
	}
	return s, err
}

func (o *partProductOp) Do(in ...G.Value) (G.Value, error) {
	s, err := broadcastShape(shapeOf(in[0]), shapeOf(in[1]))
	if err != nil {
		return nil, fmt.Errorf("%v: %w", o, err)
	}
	outRows := s[0]
	if o.rows1 {
		outRows = 1
	}
	out := o.buffer(in[0].Dtype(), outRows, s[1])
	return dispatch(in[0],
		func() (G.Value, error) {
			partProductKernel(data[float32](in[0]), data[float32](in[1]), data[float32](out), s[0], s[1]/o.parts, o.terms, o.rows1)
			return out, nil
		},
		func() (G.Value, error) {
			partProductKernel(data[float64](in[0]), data[float64](in[1]), data[float64](out), s[0], s[1]/o.parts, o.terms, o.rows1)
			return out, nil
		})
}

// partProductKernel writes the terms' products of rows of x and y (k
// columns a part; a single-row operand is broadcast) into out, or with
// rows1 their sum over the rows into out's one row.
func partProductKernel[T Float](x, y, out []T, rows, k int, terms []PartTerm, rows1 bool) {
	n := len(out)
	if !rows1 {
		n = len(out) / rows
	}
	stX, stY := n, n
	if len(x) == n && rows > 1 {
		stX = 0
	}
	if len(y) == n && rows > 1 {
		stY = 0
	}
	row := func(i int, z []T) {
		xi, yi := x[i*stX:i*stX+n], y[i*stY:i*stY+n]
		for _, t := range terms {
			a, b, c, sg := xi[t.A*k:(t.A+1)*k], yi[t.B*k:(t.B+1)*k], z[t.Out*k:(t.Out+1)*k], T(t.Sign)
			for j := range c {
				c[j] += sg * a[j] * b[j]
			}
		}
	}
	clear(out)
	if rows1 {
		for i := range rows {
			row(i, out)
		}
		return
	}
	parallelFor(rows, rows*n*len(terms), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			row(i, out[i*n:(i+1)*n])
		}
	})
}

// SymDiff: z_c += σ·x_A∘y_B gives ∂L/∂x_A += σ·g_c∘y_B and ∂L/∂y_B +=
// σ·g_c∘x_A, part products of the gradient with the other operand under
// the term table read the other way.
func (o *partProductOp) SymDiff(in G.Nodes, _, grad *G.Node) (G.Nodes, error) {
	forX, forY := make([]PartTerm, len(o.terms)), make([]PartTerm, len(o.terms))
	for i, t := range o.terms {
		forX[i] = PartTerm{A: t.Out, B: t.B, Out: t.A, Sign: t.Sign}
		forY[i] = PartTerm{A: t.Out, B: t.A, Out: t.B, Sign: t.Sign}
	}
	gx, err := apply(&partProductOp{base: newBase("PartProductGrad0"), parts: o.parts, terms: forX, rows1: isRow(in[0], grad)}, grad, in[1])
	if err != nil {
		return nil, err
	}
	gy, err := apply(&partProductOp{base: newBase("PartProductGrad1"), parts: o.parts, terms: forY, rows1: isRow(in[1], grad)}, grad, in[0])
	if err != nil {
		return nil, err
	}
	return G.Nodes{gx, gy}, nil
}

// isRow reports whether operand x was broadcast over grad's rows.
func isRow(x, grad *G.Node) bool { return x.Shape()[0] == 1 && grad.Shape()[0] != 1 }

// A TriTerm is one signed trilinear term Sign·Σ_j s_S,j·r_R,j·o_O,j of a
// score over parts of the subject, relation and object rows.
type TriTerm struct {
	S, R, O int
	Sign    float64
}

// SignedBlockContract returns Σ_{t,u} σ_t σ_u ⟨GS^{S_t S_u} ∘ GR^{R_t R_u},
// GO^{O_t O_u}⟩ over pairs of terms, G^{pq} being the k×k block (p, q) of
// an (n·k)×(n·k) Gram matrix cut into parts × parts blocks: Σ φ² over
// every triple of a score φ = Σ_t σ_t Σ_j s_{S_t,j} r_{R_t,j} o_{O_t,j}
// whose subject, relation and object Gram matrices are gs, gr and gobj
// (paper, appendix C.4.1, for any number of parts). One pass over the
// blocks forward, one per Gram matrix backward.
func SignedBlockContract(gs, gr, gobj *G.Node, parts int, terms []TriTerm) (*G.Node, error) {
	for _, g := range []*G.Node{gs, gr, gobj} {
		s := g.Shape()
		if g.Dims() != 2 || s[0] != s[1] || parts < 1 || s[0]%parts != 0 || s[0] != gs.Shape()[0] {
			return nil, fmt.Errorf("graph.SignedBlockContract: want square matrices of one size cut into %d parts, got %v, %v and %v", parts, gs.Shape(), gr.Shape(), gobj.Shape())
		}
	}
	for _, t := range terms {
		if min(t.S, t.R, t.O) < 0 || max(t.S, t.R, t.O) >= parts {
			return nil, fmt.Errorf("graph.SignedBlockContract: term %+v outside %d parts", t, parts)
		}
	}
	return apply(&blockContractOp{base: newBase("SignedBlockContract"), parts: parts, terms: terms, which: -1}, gs, gr, gobj)
}

// blockContractOp is SignedBlockContract (which −1) or, with which 0, 1
// or 2 and the output gradient as a fourth input, its gradient with
// respect to that Gram matrix.
type blockContractOp struct {
	base
	parts int
	terms []TriTerm
	which int
}

func (o *blockContractOp) Arity() int {
	if o.which < 0 {
		return 3
	}
	return 4
}

func (o *blockContractOp) Type() hm.Type {
	if o.which < 0 {
		return fnType(2, 2, 2, 0)
	}
	return fnType(2, 2, 2, 0, 2)
}

func (o *blockContractOp) DiffWRT(n int) []bool {
	w := make([]bool, n)
	for i := range min(n, 3) {
		w[i] = o.which < 0
	}
	return w
}

func (o *blockContractOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	if o.which < 0 {
		return tensor.ScalarShape(), nil
	}
	return dims(in[o.which]).Clone(), nil
}

func (o *blockContractOp) Do(in ...G.Value) (G.Value, error) {
	n := shapeOf(in[0])[0]
	if o.which < 0 {
		return dispatch(in[0],
			func() (G.Value, error) {
				return scalarValue(float32(blockContract(data[float32](in[0]), data[float32](in[1]), data[float32](in[2]), n, o.parts, o.terms))), nil
			},
			func() (G.Value, error) {
				return scalarValue(blockContract(data[float64](in[0]), data[float64](in[1]), data[float64](in[2]), n, o.parts, o.terms)), nil
			})
	}
	g := scalarOf(in[3])
	out := o.buffer(in[0].Dtype(), n, n)
	return dispatch(in[0],
		func() (G.Value, error) {
			blockContractGrad(data[float32](in[0]), data[float32](in[1]), data[float32](in[2]), data[float32](out), n, o.parts, o.terms, o.which, g)
			return out, nil
		},
		func() (G.Value, error) {
			blockContractGrad(data[float64](in[0]), data[float64](in[1]), data[float64](in[2]), data[float64](out), n, o.parts, o.terms, o.which, g)
			return out, nil
		})
}

// SymDiff: ∂/∂GS^{S_t S_u} = Σ σ_t σ_u GR^{R_t R_u} ∘ GO^{O_t O_u}, and
// likewise for the other two, each times the output gradient.
func (o *blockContractOp) SymDiff(in G.Nodes, _, grad *G.Node) (G.Nodes, error) {
	if o.which >= 0 {
		return nil, errNoSecondOrder(o)
	}
	out := make(G.Nodes, 3)
	for w := range out {
		var err error
		if out[w], err = apply(&blockContractOp{base: newBase(fmt.Sprintf("SignedBlockContractGrad%d", w)), parts: o.parts, terms: o.terms, which: w},
			in[0], in[1], in[2], grad); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// blockPairs calls f with the top-left offsets of the three blocks each
// pair of terms meets, and the pair's sign.
func blockPairs(terms []TriTerm, k int, f func(s, r, o [2]int, sign float64)) {
	for _, t := range terms {
		for _, u := range terms {
			f([2]int{t.S * k, u.S * k}, [2]int{t.R * k, u.R * k}, [2]int{t.O * k, u.O * k}, t.Sign*u.Sign)
		}
	}
}

func blockContract[T Float](gs, gr, gobj []T, n, parts int, terms []TriTerm) float64 {
	k := n / parts
	var total float64
	blockPairs(terms, k, func(s, r, o [2]int, sign float64) {
		var acc T
		for i := range k {
			rs, rr, ro := gs[(s[0]+i)*n+s[1]:], gr[(r[0]+i)*n+r[1]:], gobj[(o[0]+i)*n+o[1]:]
			for j := range k {
				acc += rs[j] * rr[j] * ro[j]
			}
		}
		total += sign * float64(acc)
	})
	return total
}

// blockContractGrad writes g·∂/∂G_which into out.
func blockContractGrad[T Float](gs, gr, gobj, out []T, n, parts int, terms []TriTerm, which int, g float64) {
	k := n / parts
	clear(out)
	blockPairs(terms, k, func(s, r, o [2]int, sign float64) {
		at := [3][2]int{s, r, o}
		mats := [3][]T{gs, gr, gobj}
		p, q := (which+1)%3, (which+2)%3
		c := T(sign * g)
		for i := range k {
			dst := out[(at[which][0]+i)*n+at[which][1]:]
			a, b := mats[p][(at[p][0]+i)*n+at[p][1]:], mats[q][(at[q][0]+i)*n+at[q][1]:]
			for j := range k {
				dst[j] += c * a[j] * b[j]
			}
		}
	})
}
