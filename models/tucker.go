package models

import (
	"math/rand/v2"

	"gekc/graph"

	G "gorgonia.org/gorgonia"
)

// TuckER is φ(s,r,o) = T ×₁ e_s ×₂ w_r ×₃ e_o (Balažević et al. 2019) with a
// learned core tensor T of size d_e×d_r×d_e, stored as its mode-1 unfolding
// (d_e rows of d_r·d_e). As a circuit: d_e²·d_r product units under a sum
// unit whose weights are the core's entries.
type TuckER struct{}

func init() { Register("tucker", func() ScoreFunction { return TuckER{} }) }

func (TuckER) Name() string { return "tucker" }

func (TuckER) Layout(sz Sizes) Layout {
	de, dr := sz.Rank, sz.relRank()
	return Layout{
		Tables: []TableSpec{
			{Name: "entity", Rows: sz.Entities, Cols: de},
			{Name: "relation", Rows: sz.Relations, Cols: dr},
			{Name: "core", Rows: de, Cols: dr * de},
		},
		Subject: "entity", Relation: "relation", Object: "entity",
	}
}

// Query contracts the core with the two known slots:
//
//	q_o = (e_sᵀ T)·w_r, q_s = T·vec(w_r e_oᵀ), q_r = (e_sᵀ T)·e_o.
func (TuckER) Query(alg Algebra, target Var, x Inputs, t Tables) (*G.Node, error) {
	de, dr := t.Sizes().Rank, t.Sizes().relRank()
	core := t.Node("core")
	switch target {
	case Subject:
		z, err := alg.BatchOuter(x.R, x.O) // B × (d_r·d_e)
		if err != nil {
			return nil, err
		}
		return alg.MatMul(z, core, false, true)
	case Object:
		y, err := alg.MatMul(x.S, core, false, false) // B × (d_r·d_e)
		if err != nil {
			return nil, err
		}
		return alg.BatchVecMat(x.R, y, dr, de, false)
	}
	y, err := alg.MatMul(x.S, core, false, false)
	if err != nil {
		return nil, err
	}
	return alg.BatchVecMat(x.O, y, dr, de, true)
}

// SquaredPartition: Σ φ² = ⟨T, T ×₁ G_S ×₂ G_R ×₃ G_O⟩ in
// O(|E|·d_e² + |R|·d_r² + d_e²·d_r·(d_e + d_r)).
func (TuckER) SquaredPartition(t Tables) (*G.Node, error) {
	de, dr := t.Sizes().Rank, t.Sizes().relRank()
	var e graph.Builder
	gs, gr, gobj := e.Use(t.RoleGram(Subject)), e.Use(t.RoleGram(Relation)), e.Use(t.RoleGram(Object))
	core := t.Node("core")
	dims := [3]int{de, dr, de}
	u := e.ModeProduct(core, gs, 1, dims, false)
	u = e.ModeProduct(u, gr, 2, dims, false)
	u = e.ModeProduct(u, gobj, 3, dims, false)
	return e.Result(e.Dot(core, u))
}

// Init: embeddings as DefaultInit; the core is N(0, 0.1²) for the energy
// model (small embeddings already keep scores small), one log-Dirichlet
// over all its entries for the non-negative model (the sum unit's mixture
// weights), and log-normal like the embeddings for the squared model, where
// each product term has four factors.
func (TuckER) Init(sem Semantics, sz Sizes, t TableSpec, x []float64, rng *rand.Rand, scale float64) error {
	terms := float64(sz.Rank * sz.Rank * sz.relRank())
	if t.Name != "core" {
		DefaultInit(sem, t, x, rng, scale, terms, 4)
		return nil
	}
	switch sem {
	case Energy:
		InitNormal(x, 0.1, rng)
	case NonNegative:
		InitLogDirichletColumns(x, len(x), 1, or(scale, DirichletConcentration), rng)
	case Squared:
		InitLogNormal(x, terms, 4, or(scale, LogNormalSigma), rng)
	}
	return nil
}

// Components and Component give TuckER's mixture structure (MixtureScore),
// for ancestral sampling of TuckER+: one product unit per core entry, weighted by it.
func (TuckER) Components(sz Sizes) int { return sz.Rank * sz.relRank() * sz.Rank }
func (TuckER) Component(sz Sizes, h int) (int, int, int, string, int) {
	de, dr := sz.Rank, sz.relRank()
	i, j, k := h/(dr*de), (h/de)%dr, h%de
	return i, j, k, "core", h // the core's flat index is i·d_r·d_e + j·d_e + k
}
