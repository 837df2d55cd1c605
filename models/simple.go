package models

import (
	"math/rand/v2"

	"gekc/graph"

	G "gorgonia.org/gorgonia"
)

// SimplE is φ(s,r,o) = ½(⟨h_s, v_r, t_o⟩ + ⟨h_o, v⁻¹_r, t_s⟩) (Kazemi &
// Poole 2018): each entity has a head and a tail embedding, each relation
// one for itself and one for its inverse. Query receives one table's row
// per slot, so the two roles of a slot share a row: entity rows are
// [h | t] and relation rows [v | v⁻¹], both of width 2d.
//
// As a circuit SimplE is ½·CP over 2d components whose object columns are
// the entity row with its halves swapped: component k < d reads h_s, v_r
// and t_o, component d+k reads t_s, v⁻¹_r and h_o. That gives the squared
// partition function from CP's, with the object Gram matrix's quadrants
// swapped, and CP's mixture structure for sampling SimplE+.
type SimplE struct{}

func init() { Register("simple", func() ScoreFunction { return SimplE{} }) }

func (SimplE) Name() string { return "simple" }

func (SimplE) Layout(sz Sizes) Layout {
	return Layout{
		Tables: []TableSpec{
			{Name: "entity", Rows: sz.Entities, Cols: 2 * sz.Rank},
			{Name: "relation", Rows: sz.Relations, Cols: 2 * sz.Rank},
		},
		Subject: "entity", Relation: "relation", Object: "entity",
	}
}

// Query returns, in alg, the query that meets the target's row:
//
//	q_o = ½[t_s ⊙ v⁻¹_r | h_s ⊙ v_r]   against [h_o | t_o]
//	q_s = ½[v_r ⊙ t_o | v⁻¹_r ⊙ h_o]   against [h_s | t_s]
//	q_r = ½[h_s ⊙ t_o | h_o ⊙ t_s]     against [v_r | v⁻¹_r]
func (SimplE) Query(alg Algebra, target Var, x Inputs, _ Tables) (*G.Node, error) {
	var e graph.Builder
	in := e.In(alg)
	var first, second *G.Node
	switch target {
	case Object:
		hs, ts := e.Halves(x.S)
		v, vInv := e.Halves(x.R)
		first, second = in.Mul(ts, vInv), in.Mul(hs, v)
	case Subject:
		v, vInv := e.Halves(x.R)
		ho, to := e.Halves(x.O)
		first, second = in.Mul(v, to), in.Mul(vInv, ho)
	default:
		hs, ts := e.Halves(x.S)
		ho, to := e.Halves(x.O)
		first, second = in.Mul(hs, to), in.Mul(ho, ts)
	}
	return e.Result(in.Scale(e.ConcatCols(first, second), 0.5))
}

// SquaredPartition is CP's Σ_kl G_S∘G_R∘G_O' over the 2d components, times
// ¼, where G_O' is the Gram matrix of the object rows with their halves
// swapped ([t | h]): the object Gram matrix's quadrants exchanged
// diagonally.
func (SimplE) SquaredPartition(t Tables) (*G.Node, error) {
	var e graph.Builder
	s1, s2, s3, s4 := e.Quadrants(e.Use(t.RoleGram(Subject)))
	r1, r2, r3, r4 := e.Quadrants(e.Use(t.RoleGram(Relation)))
	o1, o2, o3, o4 := e.Quadrants(e.Use(t.RoleGram(Object)))
	z := e.AddAll(e.Dot(e.Mul(s1, r1), o4), e.Dot(e.Mul(s2, r2), o3), e.Dot(e.Mul(s3, r3), o2), e.Dot(e.Mul(s4, r4), o1))
	return e.Result(e.Scale(z, 0.25))
}

// Init: ½ times 2d products is about d of them (see InitLogNormal).
func (SimplE) Init(sem Semantics, sz Sizes, t TableSpec, x []float64, rng *rand.Rand, scale float64) error {
	DefaultInit(sem, t, x, rng, scale, float64(sz.Rank), 3)
	return nil
}

// Components and Component give SimplE+ CP's ancestral sampler
// (MixtureScore): 2d product units under a sum whose weights are all ½, a
// common factor that leaves the choice of unit as it is.
func (SimplE) Components(sz Sizes) int { return 2 * sz.Rank }
func (SimplE) Component(sz Sizes, h int) (int, int, int, string, int) {
	d := sz.Rank
	if h < d {
		return h, h, d + h, "", 0 // h_s, v_r, t_o
	}
	return h, h, h - d, "", 0 // t_s, v⁻¹_r, h_o
}

// ProductUnits: the 2d terms ½·h_s·v_r·t_o and ½·t_s·v⁻¹_r·h_o of φ
// (ProductUnitScore, the KTD features).
func (SimplE) ProductUnits(sz Sizes) int { return 2 * sz.Rank }

func (SimplE) ProductUnitValues(sz Sizes, s, r, o, out []float64) {
	d := sz.Rank
	for j := 0; j < d; j++ {
		out[j] = s[j] * r[j] * o[d+j] / 2
		out[d+j] = s[d+j] * r[d+j] * o[j] / 2
	}
}
