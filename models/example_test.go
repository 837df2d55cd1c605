package models_test

import (
	"fmt"
	"math/rand/v2"

	"gekc/graph"
	"gekc/models"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// DistMult is φ(s,r,o) = Σ_i e_si·w_ri·e_oi: CP with one entity table for
// both roles. This is everything a new score function needs.
type DistMult struct{}

func (DistMult) Name() string { return "distmult" }

func (DistMult) Layout(sz models.Sizes) models.Layout {
	return models.Layout{
		Tables: []models.TableSpec{
			{Name: "entity", Rows: sz.Entities, Cols: sz.Rank},
			{Name: "relation", Rows: sz.Relations, Cols: sz.Rank},
		},
		Subject: "entity", Relation: "relation", Object: "entity",
	}
}

// Query: each slot's query is the product of the other two embeddings. In
// the log semiring alg.Mul adds, which gives DistMult+ for free.
func (DistMult) Query(alg models.Algebra, target models.Var, x models.Inputs, _ models.Tables) (*G.Node, error) {
	switch target {
	case models.Subject:
		return alg.Mul(x.R, x.O)
	case models.Relation:
		return alg.Mul(x.S, x.O)
	}
	return alg.Mul(x.S, x.R)
}

// SquaredPartition: Σ_{s,r,o} φ² = Σ_ij (G_S)_ij (G_R)_ij (G_O)_ij, with the
// Gram matrices of the rows summed over for each slot (G_S = G_O = EᵀE
// unless a constraint restricts the sums).
func (DistMult) SquaredPartition(t models.Tables) (*G.Node, error) {
	gs, err := t.RoleGram(models.Subject)
	if err != nil {
		return nil, err
	}
	gw, err := t.RoleGram(models.Relation)
	if err != nil {
		return nil, err
	}
	gobj, err := t.RoleGram(models.Object)
	if err != nil {
		return nil, err
	}
	gg, err := graph.Mul(gs, gobj)
	if err != nil {
		return nil, err
	}
	return graph.Dot(gg, gw)
}

func (DistMult) Init(sem models.Semantics, sz models.Sizes, t models.TableSpec, x []float64, rng *rand.Rand, scale float64) error {
	models.DefaultInit(sem, t, x, rng, scale, float64(sz.Rank), 3)
	return nil
}

func Example_newScoreFunction() {
	// A real score function registers in its file's init function; the
	// example guards against registering twice when tests repeat.
	if _, _, err := models.Lookup("distmult"); err != nil {
		models.Register("distmult", func() models.ScoreFunction { return DistMult{} })
	}

	for _, name := range []string{"distmult", "distmult+", "distmult2"} {
		m, err := models.New(name, models.Sizes{Entities: 4, Relations: 2, Rank: 3}, models.Options{Dtype: tensor.Float64})
		if err != nil {
			fmt.Println(err)
			return
		}
		g := G.NewGraph()
		c := m.Bind(g)
		logZ, err := c.LogPartition()
		if err != nil {
			fmt.Printf("%-9s %v semantics: %v\n", name, m.Semantics, err)
			continue
		}
		prog, _ := graph.Compile(logZ)
		if err := prog.Run(); err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%-9s %v semantics: log Z = %.3f\n", name, m.Semantics, logZ.Value().Data())
	}
	// At initialisation DistMult+'s columns are normalised Dirichlet draws, so
	// Z = Σ_i 1·1·1 = d = 3; DistMult² is centred so that φ ≈ 1 for every
	// triple, so Z ≈ |E|²|R| = 32 plus the ε mass 1.

	// Output:
	// distmult  energy semantics: intractable for an energy-based model: the partition function sums exp φ over all |E|²|R| triples
	// distmult+ non-negative semantics: log Z = 1.099
	// distmult2 squared semantics: log Z = 3.495
}
