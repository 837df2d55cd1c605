package models

import (
	"math/rand/v2"

	"gekc/graph"

	G "gorgonia.org/gorgonia"
)

// RESCAL is φ(s,r,o) = e_sᵀ W_r e_o (Nickel et al. 2011): a d×d matrix per
// relation, stored as a row of d² values (W_r[i,j] at column i·d+j). As a
// circuit: d² product units e_si·W_r,ij·e_oj under one sum unit.
type RESCAL struct{}

func init() { Register("rescal", func() ScoreFunction { return RESCAL{} }) }

func (RESCAL) Name() string { return "rescal" }

func (RESCAL) Layout(sz Sizes) Layout {
	return Layout{
		Tables: []TableSpec{
			{Name: "entity", Rows: sz.Entities, Cols: sz.Rank},
			{Name: "relation", Rows: sz.Relations, Cols: sz.Rank * sz.Rank},
		},
		Subject: "entity", Relation: "relation", Object: "entity",
	}
}

// Query: q_o = W_rᵀe_s, q_s = W_r e_o, q_r = vec(e_s e_oᵀ).
func (RESCAL) Query(alg Algebra, target Var, x Inputs, t Tables) (*G.Node, error) {
	d := t.Sizes().Rank
	switch target {
	case Object:
		return alg.BatchVecMat(x.S, x.R, d, d, false)
	case Subject:
		return alg.BatchVecMat(x.O, x.R, d, d, true)
	}
	return alg.BatchOuter(x.S, x.O)
}

// SquaredPartition: Σ φ² = Σ_r tr(W_rᵀ G_S W_r G_O) = Σ_r ⟨G_S W_r, W_r G_O⟩
// with G_S, G_O the subject and object Gram matrices, in
// O(|E|·d² + |R|·d³) time.
func (RESCAL) SquaredPartition(t Tables) (*G.Node, error) {
	sz := t.Sizes()
	var e graph.Builder
	gs, gobj := e.Use(t.RoleGram(Subject)), e.Use(t.RoleGram(Object))
	w := t.RoleTable(Relation)
	dims := [3]int{sz.Relations, sz.Rank, sz.Rank}
	left := e.ModeProduct(w, gs, 2, dims, false)    // G_S·W_r
	right := e.ModeProduct(w, gobj, 3, dims, false) // W_r·G_Oᵀ = W_r·G_O
	return e.Result(e.Dot(left, right))
}

func (RESCAL) Init(sem Semantics, sz Sizes, t TableSpec, x []float64, rng *rand.Rand, scale float64) error {
	DefaultInit(sem, t, x, rng, scale, float64(sz.Rank*sz.Rank), 3)
	return nil
}

// Components and Component give RESCAL's mixture structure (MixtureScore),
// for ancestral sampling of RESCAL+: one product unit per entry (i, j) of W_r.
func (RESCAL) Components(sz Sizes) int { return sz.Rank * sz.Rank }
func (RESCAL) Component(sz Sizes, h int) (int, int, int, string, int) {
	i, j := h/sz.Rank, h%sz.Rank
	return i, h, j, "", 0 // relation column i·d+j holds W_r[i,j]
}
