package models

import (
	"math/rand/v2"

	"gekc/graph"

	G "gorgonia.org/gorgonia"
)

// CP is the canonical polyadic score φ(s,r,o) = Σ_i u_si·w_ri·v_oi with
// role-specific entity embeddings: U for subjects, V for objects (Lacroix
// et al. 2018). As a circuit: d product units under one sum unit.
type CP struct{}

func init() { Register("cp", func() ScoreFunction { return CP{} }) }

func (CP) Name() string { return "cp" }

func (CP) Layout(sz Sizes) Layout {
	return Layout{
		Tables: []TableSpec{
			{Name: "subject", Rows: sz.Entities, Cols: sz.Rank},
			{Name: "relation", Rows: sz.Relations, Cols: sz.Rank},
			{Name: "object", Rows: sz.Entities, Cols: sz.Rank},
		},
		Subject: "subject", Relation: "relation", Object: "object",
	}
}

// Query: each slot's query is the Hadamard product of the other two rows.
func (CP) Query(alg Algebra, target Var, x Inputs, _ Tables) (*G.Node, error) {
	switch target {
	case Subject:
		return alg.Mul(x.R, x.O)
	case Relation:
		return alg.Mul(x.S, x.O)
	}
	return alg.Mul(x.S, x.R)
}

// SquaredPartition: Σ φ² = Σ_ij (UᵀU)_ij (WᵀW)_ij (VᵀV)_ij.
func (CP) SquaredPartition(t Tables) (*G.Node, error) {
	var e graph.Builder
	gu, gw, gv := e.Use(t.RoleGram(Subject)), e.Use(t.RoleGram(Relation)), e.Use(t.RoleGram(Object))
	return e.Result(e.Dot(e.Mul(gu, gw), gv))
}

func (CP) Init(sem Semantics, sz Sizes, t TableSpec, x []float64, rng *rand.Rand, scale float64) error {
	DefaultInit(sem, t, x, rng, scale, float64(sz.Rank), 3)
	return nil
}

// Components and Component give CP's mixture structure (MixtureScore),
// for ancestral sampling of CP+: product unit h reads column h of each table.
func (CP) Components(sz Sizes) int { return sz.Rank }
func (CP) Component(_ Sizes, h int) (int, int, int, string, int) {
	return h, h, h, "", 0
}

// ProductUnits: CP's d product units u_si·w_ri·v_oi (ProductUnitScore).
func (CP) ProductUnits(sz Sizes) int { return sz.Rank }

func (CP) ProductUnitValues(_ Sizes, s, r, o, out []float64) {
	for j := range out {
		out[j] = s[j] * r[j] * o[j]
	}
}
