package models

import (
	"math/rand/v2"

	"gekc/graph"

	G "gorgonia.org/gorgonia"
)

// ComplEx is φ(s,r,o) = Re⟨e_s, w_r, conj(e_o)⟩ (Trouillon et al. 2016) with
// complex embeddings stored as real rows [re | im] of width 2d. Its score
// has a subtraction, so its non-negative restriction is defined explicitly
// (NonNegativeScore): the imaginary part is reparametrised as
// Im = Re·σ(θ) ≤ Re (paper, appendix C.2) and the score is written as four
// log-space trilinear terms, the last with weight −1.
type ComplEx struct{}

func init() { Register("complex", func() ScoreFunction { return ComplEx{} }) }

func (ComplEx) Name() string { return "complex" }

func (ComplEx) Layout(sz Sizes) Layout {
	return Layout{
		Tables: []TableSpec{
			{Name: "entity", Rows: sz.Entities, Cols: 2 * sz.Rank},
			{Name: "relation", Rows: sz.Relations, Cols: 2 * sz.Rank},
		},
		Subject: "entity", Relation: "relation", Object: "entity",
	}
}

// halves splits [re | im] rows.
func halves(x *G.Node) (re, im *G.Node, err error) {
	d := x.Shape()[1] / 2
	if re, err = graph.SliceCols(x, 0, d); err != nil {
		return nil, nil, err
	}
	im, err = graph.SliceCols(x, d, 2*d)
	return re, im, err
}

// Query (linear algebra only; the restriction uses LogQuery) is a complex
// Hadamard product of the other two slots, [re | im]:
//
//	q_o = s ⊙ r,   q_s = conj(r) ⊙ o,   q_r = conj(s) ⊙ o,
//
// so that φ = ⟨q, x⟩ over the 2d real columns of the target's row x.
func (ComplEx) Query(alg Algebra, target Var, x Inputs, _ Tables) (*G.Node, error) {
	if alg.IsLog() {
		return nil, ErrNotMonotone
	}
	switch target {
	case Object:
		return graph.ComplexMul(x.S, x.R, false)
	case Subject:
		return graph.ComplexMul(x.R, x.O, true)
	default:
		return graph.ComplexMul(x.S, x.O, true)
	}
}

// SquaredPartition expands Σ_{s,r} q_oᵀ G_O q_o with q_o = [a, b] into the
// blocks A, B, C (re·re, re·im, im·im) of the subject Gram matrix, P, Q, S
// of the relation one and A', B', C' of the object one:
//
//	Σ aaᵀ = A∘P − B∘Q − Bᵀ∘Qᵀ + C∘S
//	Σ bbᵀ = A∘S + B∘Qᵀ + Bᵀ∘Q + C∘P
//	Σ abᵀ = A∘Q + B∘P − Bᵀ∘S − C∘Qᵀ
//	Z = ⟨A', Σaaᵀ⟩ + 2⟨B', Σabᵀ⟩ + ⟨C', Σbbᵀ⟩
//
// costing O((|E| + |R|)·d²).
func (ComplEx) SquaredPartition(t Tables) (*G.Node, error) {
	d := t.Sizes().Rank
	gs, err := t.RoleGram(Subject)
	if err != nil {
		return nil, err
	}
	gr, err := t.RoleGram(Relation)
	if err != nil {
		return nil, err
	}
	gobj, err := t.RoleGram(Object)
	if err != nil {
		return nil, err
	}
	blocks := func(g *G.Node) (x, y, z, yT *G.Node, err error) {
		if x, err = graph.SliceBlock(g, 0, d, 0, d); err != nil {
			return
		}
		if y, err = graph.SliceBlock(g, 0, d, d, 2*d); err != nil {
			return
		}
		if z, err = graph.SliceBlock(g, d, 2*d, d, 2*d); err != nil {
			return
		}
		yT, err = graph.SliceBlock(g, d, 2*d, 0, d)
		return
	}
	A, B, C, BT, err := blocks(gs)
	if err != nil {
		return nil, err
	}
	P, Q, S, QT, err := blocks(gr)
	if err != nil {
		return nil, err
	}
	Ao, Bo, Co, _, err := blocks(gobj)
	if err != nil {
		return nil, err
	}
	e := &exprs{}
	saa := e.sum(e.mul(A, P), e.neg(e.mul(B, Q)), e.neg(e.mul(BT, QT)), e.mul(C, S))
	sbb := e.sum(e.mul(A, S), e.mul(B, QT), e.mul(BT, Q), e.mul(C, P))
	sab := e.sum(e.mul(A, Q), e.mul(B, P), e.neg(e.mul(BT, S)), e.neg(e.mul(C, QT)))
	z := e.sum(e.mul(Ao, saa), e.scale(e.mul(Bo, sab), 2), e.mul(Co, sbb))
	if e.err != nil {
		return nil, e.err
	}
	return graph.Sum(z)
}

// exprs chains elementwise graph ops, keeping the first error.
type exprs struct{ err error }

func (e *exprs) do(f func() (*G.Node, error)) *G.Node {
	if e.err != nil {
		return nil
	}
	n, err := f()
	e.err = err
	return n
}
func (e *exprs) mul(a, b *G.Node) *G.Node {
	return e.do(func() (*G.Node, error) { return graph.Mul(a, b) })
}
func (e *exprs) neg(a *G.Node) *G.Node { return e.scale(a, -1) }
func (e *exprs) scale(a *G.Node, c float64) *G.Node {
	return e.do(func() (*G.Node, error) { return graph.Scale(a, c) })
}
func (e *exprs) sum(xs ...*G.Node) *G.Node {
	acc := xs[0]
	for _, x := range xs[1:] {
		a := acc
		acc = e.do(func() (*G.Node, error) { return graph.Add(a, x) })
	}
	return acc
}

// LogFeatures maps parameter rows [log Re | θ] to log input values
// [log Re | log Re + log σ(θ)], so Im = Re·σ(θ) never exceeds Re.
func (ComplEx) LogFeatures(rows *G.Node) (*G.Node, error) {
	return graph.GatedLogHalves(rows)
}

// The four trilinear terms of ComplEx (paper, eq. 8), as (subject part,
// relation part, object part) with re=0, im=1; the last has weight −1.
var complexTerms = [4][3]int{{0, 0, 0}, {1, 0, 1}, {0, 1, 1}, {1, 1, 0}}

// LogQuery returns the 4d columns log(part_a) + log(part_b) of the four
// terms, for the two slots other than target.
func (ComplEx) LogQuery(target Var, x Inputs, _ Tables) (*G.Node, error) {
	var parts [3][2]*G.Node
	for _, v := range Vars {
		if v == target {
			continue
		}
		re, im, err := halves(x.get(v))
		if err != nil {
			return nil, err
		}
		parts[v] = [2]*G.Node{re, im}
	}
	cols := make([]*G.Node, 4)
	for i, term := range complexTerms {
		var ops []*G.Node
		for _, v := range Vars {
			if v != target {
				ops = append(ops, parts[v][term[v]])
			}
		}
		c, err := graph.Add(ops[0], ops[1])
		if err != nil {
			return nil, err
		}
		cols[i] = c
	}
	return graph.ConcatCols(cols...)
}

// LogCandidates picks, for each of the four terms, target's re or im part.
func (ComplEx) LogCandidates(target Var, feats *G.Node) (*G.Node, error) {
	re, im, err := halves(feats)
	if err != nil {
		return nil, err
	}
	cols := make([]*G.Node, 4)
	for i, term := range complexTerms {
		cols[i] = [2]*G.Node{re, im}[term[target]]
	}
	return graph.ConcatCols(cols...)
}

// Negative: the last quarter of the columns (term iir) has weight −1.
func (ComplEx) Negative(_ Var, cols int) int { return cols / 4 }

func (ComplEx) Init(sem Semantics, sz Sizes, t TableSpec, x []float64, rng *rand.Rand, scale float64) error {
	if sem != NonNegative {
		DefaultInit(sem, t, x, rng, scale, 2*float64(sz.Rank), 3)
		return nil
	}
	// [log Re | θ]: Re columns log-Dirichlet over the rows, gates N(0, 1e-2²).
	d := t.Cols / 2
	re := make([]float64, t.Rows*d)
	InitLogDirichletColumns(re, t.Rows, d, or(scale, DirichletConcentration), rng)
	for i := 0; i < t.Rows; i++ {
		copy(x[i*t.Cols:i*t.Cols+d], re[i*d:(i+1)*d])
		for j := d; j < t.Cols; j++ {
			x[i*t.Cols+j] = GateInitStd * rng.NormFloat64()
		}
	}
	return nil
}

// ProductUnits: ComplEx's 4d product units (ProductUnitScore), the KTD
// features of the paper.
func (ComplEx) ProductUnits(sz Sizes) int { return 4 * sz.Rank }

// ProductUnitValues writes re_s·re_r·re_o, im_s·re_r·im_o, re_s·im_r·im_o
// and im_s·im_r·re_o for each of the d components.
func (ComplEx) ProductUnitValues(sz Sizes, s, r, o, out []float64) {
	d := sz.Rank
	for j := 0; j < d; j++ {
		rs, is, rr, ir, ro, io := s[j], s[d+j], r[j], r[d+j], o[j], o[d+j]
		out[j], out[d+j], out[2*d+j], out[3*d+j] = rs*rr*ro, is*rr*io, rs*ir*io, is*ir*ro
	}
}
