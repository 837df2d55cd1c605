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
	var e graph.Builder
	// The quadrants of a Gram matrix of [re | im] rows are re·re, re·im,
	// im·re and im·im.
	A, B, BT, C := e.Quadrants(e.Use(t.RoleGram(Subject)))
	P, Q, QT, S := e.Quadrants(e.Use(t.RoleGram(Relation)))
	Ao, Bo, _, Co := e.Quadrants(e.Use(t.RoleGram(Object)))
	saa := e.AddAll(e.Mul(A, P), e.Neg(e.Mul(B, Q)), e.Neg(e.Mul(BT, QT)), e.Mul(C, S))
	sbb := e.AddAll(e.Mul(A, S), e.Mul(B, QT), e.Mul(BT, Q), e.Mul(C, P))
	sab := e.AddAll(e.Mul(A, Q), e.Mul(B, P), e.Neg(e.Mul(BT, S)), e.Neg(e.Mul(C, QT)))
	z := e.AddAll(e.Mul(Ao, saa), e.Scale(e.Mul(Bo, sab), 2), e.Mul(Co, sbb))
	return e.Result(e.Sum(z))
}

// ModulusParts: every slot's rows are [re | im], so the Lp regularisers
// penalise the complex moduli.
func (ComplEx) ModulusParts(Var) int { return 2 }

// LogFeatures maps parameter rows [log Re | θ] to log input values
// [log Re | log Re + log σ(θ)], so Im = Re·σ(θ) never exceeds Re.
func (ComplEx) LogFeatures(rows *G.Node) (*G.Node, error) {
	return graph.GatedLogHalves(rows)
}

// The four trilinear terms of ComplEx (paper, eq. 8), as (subject part,
// relation part, object part) with re=0, im=1; the last has weight −1.
var complexTerms = [4][3]int{{0, 0, 0}, {1, 0, 1}, {0, 1, 1}, {1, 1, 0}}

// LogQuery returns the 4d columns log(part_a) + log(part_b) of the four
// terms, for the two slots a, b other than target (in Vars order), as one
// HalfSums op: its blocks pick each term's re or im half of a and of b.
func (ComplEx) LogQuery(target Var, x Inputs, _ Tables) (*G.Node, error) {
	var slots []Var
	for _, v := range Vars {
		if v != target {
			slots = append(slots, v)
		}
	}
	pairs := make([][2]int, len(complexTerms))
	for i, term := range complexTerms {
		pairs[i] = [2]int{term[slots[0]], term[slots[1]]}
	}
	return graph.HalfSums(x.get(slots[0]), x.get(slots[1]), pairs)
}

// LogCandidates picks, for each of the four terms, target's re or im part.
func (ComplEx) LogCandidates(target Var, feats *G.Node) (*G.Node, error) {
	var e graph.Builder
	re, im := e.Halves(feats)
	cols := make([]*G.Node, 4)
	for i, term := range complexTerms {
		cols[i] = [2]*G.Node{re, im}[term[target]]
	}
	return e.Result(e.ConcatCols(cols...))
}

// CandidateBlocks: LogCandidates picks each term's re (block 0) or im
// (block 1) half of the features.
func (ComplEx) CandidateBlocks(target Var) []int {
	blocks := make([]int, len(complexTerms))
	for i, term := range complexTerms {
		blocks[i] = term[target]
	}
	return blocks
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
