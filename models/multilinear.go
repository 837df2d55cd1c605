package models

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gekc/graph"

	G "gorgonia.org/gorgonia"
)

// Multilinear is a score written as its table of signed trilinear terms
// over rows cut into Parts parts of rank columns each:
//
//	φ(s, r, o) = Σ_t Sign_t Σ_j s[S_t, j]·r[R_t, j]·o[O_t, j],
//
// part p of a row being its columns [p·rank, (p+1)·rank). A hypercomplex
// score (ComplEx's two parts, QuatE's four) is such a table. Embedding it
// in a score function gives the linear Query (graph.PartProduct), the
// squared partition function (graph.SignedBlockContract over the Gram
// matrices' Parts × Parts blocks), the moduli of ModulusScore and the
// product units of ProductUnitScore; the score function adds Name,
// Layout (MultilinearLayout) and Init.
//
// With Cap > 0 it also implements NonNegativeScore by the gated
// restriction: each row's part 0 holds log-values a, every later part p
// gates θ_p, and the parts' values are a, a·Cap·σ(θ₁), …, so that every
// later part is at most Cap times part 0. The embedding score must prove
// in its doc comment that φ ≥ 0 for such rows (QuatE's proof is the
// pattern); terms must then have signs ±1. Cap 0 declines the
// non-negative semantics (DeclinesSemantics).
type Multilinear struct {
	Parts int
	Terms []graph.TriTerm
	Cap   float64
}

// MultilinearLayout is the layout of a multilinear score over one entity
// table and one relation table, rows of parts·rank columns.
func MultilinearLayout(sz Sizes, parts int) Layout {
	return Layout{
		Tables: []TableSpec{
			{Name: "entity", Rows: sz.Entities, Cols: parts * sz.Rank},
			{Name: "relation", Rows: sz.Relations, Cols: parts * sz.Rank},
		},
		Subject: "entity", Relation: "relation", Object: "entity",
	}
}

// slotParts returns, for each term, the parts of the two slots other than
// target (in Vars order) and of target.
func (m Multilinear) slotParts(target Var) (first, second, out []int) {
	for _, t := range m.Terms {
		p := [3]int{t.S, t.R, t.O}
		var others []int
		for _, v := range Vars {
			if v != target {
				others = append(others, p[v])
			}
		}
		first, second, out = append(first, others[0]), append(second, others[1]), append(out, p[target])
	}
	return first, second, out
}

// Query is the part product of the other two slots that φ = ⟨q, x_target⟩
// reads: each term adds Sign·(first slot's part)∘(second's) into the
// target's part. It has no log-space form (see NonNegativeScore).
func (m Multilinear) Query(alg Algebra, target Var, x Inputs, _ Tables) (*G.Node, error) {
	if alg.IsLog() {
		return nil, ErrNotMonotone
	}
	a, b, c := m.slotParts(target)
	terms := make([]graph.PartTerm, len(m.Terms))
	for i, t := range m.Terms {
		terms[i] = graph.PartTerm{A: a[i], B: b[i], Out: c[i], Sign: t.Sign}
	}
	var others []*G.Node
	for _, v := range Vars {
		if v != target {
			others = append(others, x.get(v))
		}
	}
	return graph.PartProduct(others[0], others[1], m.Parts, terms)
}

// SquaredPartition is Σ_{t,u} σ_t σ_u ⟨G_S^{S_t S_u} ∘ G_R^{R_t R_u},
// G_O^{O_t O_u}⟩ over the slots' Gram blocks, O((|E| + |R|)·(Parts·rank)²).
func (m Multilinear) SquaredPartition(t Tables) (*G.Node, error) {
	var grams [3]*G.Node
	for _, v := range Vars {
		g, err := t.RoleGram(v)
		if err != nil {
			return nil, err
		}
		grams[v] = g
	}
	return graph.SignedBlockContract(grams[0], grams[1], grams[2], m.Parts, m.Terms)
}

// ModulusParts: the Lp regularisers penalise the moduli of the numbers
// whose parts a row packs.
func (m Multilinear) ModulusParts(Var) int { return m.Parts }

// ProductUnits: one unit per term and component.
func (m Multilinear) ProductUnits(sz Sizes) int { return len(m.Terms) * sz.Rank }

// ProductUnitValues writes each term's unsigned product s·r·o, term by
// term (positive terms first, as the restricted circuit's columns),
// component by component.
func (m Multilinear) ProductUnitValues(sz Sizes, s, r, o, out []float64) {
	k := sz.Rank
	for i, t := range m.ordered() {
		for j := range k {
			out[i*k+j] = s[t.S*k+j] * r[t.R*k+j] * o[t.O*k+j]
		}
	}
}

// DeclinesSemantics: a multilinear score without a Cap has no proven
// non-negative restriction.
func (m Multilinear) DeclinesSemantics(sem Semantics) error {
	if sem == NonNegative && !(m.Cap > 0) {
		return fmt.Errorf("its terms subtract and it defines no non-negative restriction with a proof that φ ≥ 0")
	}
	return nil
}

// ordered returns the terms positive first, then negative, the order of
// the restricted circuit's columns.
func (m Multilinear) ordered() []graph.TriTerm {
	terms := slices.Clone(m.Terms)
	slices.SortStableFunc(terms, func(a, b graph.TriTerm) int {
		switch {
		case a.Sign > 0 && b.Sign < 0:
			return -1
		case a.Sign < 0 && b.Sign > 0:
			return 1
		}
		return 0
	})
	return terms
}

// LogFeatures gates the later parts: [a | θ₁ | …] ↦ [a | a + log Cap + log σ(θ₁) | …].
func (m Multilinear) LogFeatures(rows *G.Node) (*G.Node, error) {
	if err := m.DeclinesSemantics(NonNegative); err != nil {
		return nil, err
	}
	return graph.GatedLogParts(rows, m.Parts, math.Log(m.Cap))
}

// LogQuery is, per term (positive ones first), the log-product of the
// other two slots' parts: one PartSums op.
func (m Multilinear) LogQuery(target Var, x Inputs, _ Tables) (*G.Node, error) {
	terms := Multilinear{Parts: m.Parts, Terms: m.ordered()}
	a, b, _ := terms.slotParts(target)
	pairs := make([][2]int, len(a))
	for i := range pairs {
		pairs[i] = [2]int{a[i], b[i]}
	}
	var others []*G.Node
	for _, v := range Vars {
		if v != target {
			others = append(others, x.get(v))
		}
	}
	return graph.PartSums(others[0], others[1], m.Parts, pairs)
}

// CandidateBlocks: each term (positive ones first) reads target's part.
func (m Multilinear) CandidateBlocks(target Var) []int {
	_, _, out := Multilinear{Parts: m.Parts, Terms: m.ordered()}.slotParts(target)
	return out
}

// LogCandidates repeats target's parts in the order CandidateBlocks names.
func (m Multilinear) LogCandidates(target Var, feats *G.Node) (*G.Node, error) {
	var e graph.Builder
	parts := e.Parts(feats, m.Parts)
	if parts == nil {
		return e.Result(nil)
	}
	blocks := m.CandidateBlocks(target)
	cols := make([]*G.Node, len(blocks))
	for i, p := range blocks {
		cols[i] = parts[p]
	}
	return e.Result(e.ConcatCols(cols...))
}

// Negative: the trailing columns of the negative terms.
func (m Multilinear) Negative(_ Var, cols int) int {
	neg := 0
	for _, t := range m.Terms {
		if t.Sign < 0 {
			neg++
		}
	}
	return cols / len(m.Terms) * neg
}

// InitMultilinear initialises a table of a multilinear score: the
// semantics' default (DefaultInit, centred for a score of netTerms
// positive-minus-negative products per component) for energy and squared
// models; for the gated restriction, part 0 log-Dirichlet over the rows
// and the gates N(0, GateInitStd²).
func InitMultilinear(m Multilinear, sem Semantics, sz Sizes, t TableSpec, x []float64, rng *rand.Rand, scale float64, netTerms int) {
	if sem != NonNegative {
		DefaultInit(sem, t, x, rng, scale, float64(netTerms*sz.Rank), 3)
		return
	}
	k := t.Cols / m.Parts
	first := make([]float64, t.Rows*k)
	InitLogDirichletColumns(first, t.Rows, k, or(scale, DirichletConcentration), rng)
	for i := range t.Rows {
		copy(x[i*t.Cols:i*t.Cols+k], first[i*k:(i+1)*k])
		for j := k; j < t.Cols; j++ {
			x[i*t.Cols+j] = GateInitStd * rng.NormFloat64()
		}
	}
}

// multilinear returns the term table, for the tests' checks of any
// score that embeds it.
func (m Multilinear) multilinear() Multilinear { return m }
