package models

import (
	"math/rand/v2"

	"gekc/graph"

	G "gorgonia.org/gorgonia"
)

// DistMult is φ(s,r,o) = Σ_i e_si·w_ri·e_oi (Yang et al. 2015): CP with one
// entity table for both roles, so φ is symmetric in s and o. Its squared
// version needs one |E|×d Gram matrix where CP² needs two; it is the model
// the PyTorch peer (../shared/bench) calls CP².
//
// The whole of a score function is this file: the layout, the query of each
// slot, the squared partition function and the initialisation.
type DistMult struct{}

func init() { Register("distmult", func() ScoreFunction { return DistMult{} }) }

func (DistMult) Name() string { return "distmult" }

func (DistMult) Layout(sz Sizes) Layout {
	return Layout{
		Tables: []TableSpec{
			{Name: "entity", Rows: sz.Entities, Cols: sz.Rank},
			{Name: "relation", Rows: sz.Relations, Cols: sz.Rank},
		},
		Subject: "entity", Relation: "relation", Object: "entity",
	}
}

// Query: each slot's query is the product of the other two embeddings. In
// the log semiring alg.Mul adds, which gives DistMult+ with no more code.
func (DistMult) Query(alg Algebra, target Var, x Inputs, _ Tables) (*G.Node, error) {
	switch target {
	case Subject:
		return alg.Mul(x.R, x.O)
	case Relation:
		return alg.Mul(x.S, x.O)
	}
	return alg.Mul(x.S, x.R)
}

// SquaredPartition: Σ φ² = Σ_ij (G_S)_ij (G_R)_ij (G_O)_ij. G_S and G_O are
// the same EᵀE unless a constraint restricts the sums; RoleGram builds a
// shared table's Gram matrix once.
func (DistMult) SquaredPartition(t Tables) (*G.Node, error) {
	gs, err := t.RoleGram(Subject)
	if err != nil {
		return nil, err
	}
	gw, err := t.RoleGram(Relation)
	if err != nil {
		return nil, err
	}
	gobj, err := t.RoleGram(Object)
	if err != nil {
		return nil, err
	}
	so, err := graph.Mul(gs, gobj)
	if err != nil {
		return nil, err
	}
	return graph.Dot(so, gw)
}

func (DistMult) Init(sem Semantics, sz Sizes, t TableSpec, x []float64, rng *rand.Rand, scale float64) error {
	DefaultInit(sem, t, x, rng, scale, float64(sz.Rank), 3)
	return nil
}
