package models_test

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gekc/graph"
	"gekc/models"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// WeightedCP is CP whose output sum unit has learnt weights,
// φ(s,r,o) = Σ_i a_i·u_si·w_ri·v_oi: a score function defined outside the
// models package, with a parameter table ("weight", one row) that belongs
// to no slot. models/cp.go is the same recipe inside the package.
type WeightedCP struct{}

// Registering in init makes "wcp", "wcp+" and "wcp2" valid model names (in
// grids too) and puts them under the package's brute-force tests, which
// check every registered name.
func init() { models.Register("wcp", func() models.ScoreFunction { return WeightedCP{} }) }

func (WeightedCP) Name() string { return "wcp" }

func (WeightedCP) Layout(sz models.Sizes) models.Layout {
	return models.Layout{
		Tables: []models.TableSpec{
			{Name: "subject", Rows: sz.Entities, Cols: sz.Rank},
			{Name: "relation", Rows: sz.Relations, Cols: sz.Rank},
			{Name: "object", Rows: sz.Entities, Cols: sz.Rank},
			{Name: "weight", Rows: 1, Cols: sz.Rank},
		},
		Subject: "subject", Relation: "relation", Object: "object",
	}
}

// Query: the product of the other two embeddings and the weights (a one-row
// table broadcasts over the batch). In the log semiring alg.Mul adds, which
// gives wcp+ with no more code.
func (WeightedCP) Query(alg models.Algebra, target models.Var, x models.Inputs, t models.Tables) (*G.Node, error) {
	var q *G.Node
	var err error
	switch target {
	case models.Subject:
		q, err = alg.Mul(x.R, x.O)
	case models.Relation:
		q, err = alg.Mul(x.S, x.O)
	default:
		q, err = alg.Mul(x.S, x.R)
	}
	if err != nil {
		return nil, err
	}
	return alg.Mul(q, t.Node("weight"))
}

// SquaredPartition: Σ_{s,r,o} φ² = aᵀ (G_S ∘ G_R ∘ G_O) a, with the Gram
// matrices of the rows summed over for each slot. graph.Builder keeps the
// first error, so the code reads as the formula.
func (WeightedCP) SquaredPartition(t models.Tables) (*G.Node, error) {
	var e graph.Builder
	gs, gr, gobj := e.Use(t.RoleGram(models.Subject)), e.Use(t.RoleGram(models.Relation)), e.Use(t.RoleGram(models.Object))
	a := t.Node("weight")
	return e.Result(e.Dot(e.MatMul(a, e.Mul(e.Mul(gs, gr), gobj), false, false), a))
}

// Init: the weights start at 1 (0 in the log space of wcp+); the embedding
// tables as CP's.
func (WeightedCP) Init(sem models.Semantics, sz models.Sizes, t models.TableSpec, x []float64, rng *rand.Rand, scale float64) error {
	if t.Name == "weight" {
		for i := range x {
			x[i] = 1
			if sem == models.NonNegative {
				x[i] = 0
			}
		}
		return nil
	}
	models.DefaultInit(sem, t, x, rng, scale, float64(sz.Rank), 3)
	return nil
}

func Example_newScoreFunction() {
	for _, name := range []string{"wcp", "wcp+", "wcp2"} {
		m, err := models.New(name, models.Sizes{Entities: 4, Relations: 2, Rank: 3}, models.Options{Dtype: tensor.Float64})
		if err != nil {
			fmt.Println(err)
			return
		}
		g := G.NewGraph()
		c := m.Bind(g)
		logZ, err := c.LogPartition()
		if err != nil {
			fmt.Printf("%-5s %v semantics: %v\n", name, m.Semantics, err)
			continue
		}
		prog, _ := graph.Compile(logZ)
		if err := prog.Run(); err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%-5s %v semantics: log Z = %.3f\n", name, m.Semantics, logZ.Value().Data())
	}
	// At initialisation wcp+'s columns are normalised Dirichlet draws and its
	// weights are 1, so Z = Σ_i 1·1·1·1 = d = 3; wcp2 is centred so that
	// φ ≈ 1 for every triple, so Z ≈ |E|²|R| = 32 plus the ε mass 1.

	// Output:
	// wcp   energy semantics: intractable for an energy-based model: the partition function sums exp φ over all |E|²|R| triples
	// wcp+  non-negative semantics: log Z = 1.099
	// wcp2  squared semantics: log Z = 3.495
}

// A query written once for both semirings, with the helpers a score
// function uses: Halves splits rows of two blocks ([re | im], SimplE's
// [head | tail]), In chains an Algebra's operations in a Builder, and
// Scale multiplies by a constant (½ here; a shift by log ½ in the log
// semiring). Evaluated on log-values in the log semiring, the query is the
// log of the linear one.
func ExampleAlgebra() {
	query := func(alg models.Algebra, x *G.Node) (*G.Node, error) {
		var e graph.Builder
		in := e.In(alg)
		head, tail := e.Halves(x)
		return e.Result(in.Scale(in.Mul(head, tail), 0.5))
	}
	run := func(alg models.Algebra, vals ...float64) []float64 {
		g := G.NewGraph()
		x := G.NewMatrix(g, tensor.Float64, G.WithShape(1, 4), G.WithName("x"),
			G.WithValue(tensor.New(tensor.WithShape(1, 4), tensor.WithBacking(vals))))
		q, err := query(alg, x)
		if err != nil {
			fmt.Println(err)
			return nil
		}
		prog, _ := graph.Compile(q)
		if err := prog.Run(); err != nil {
			fmt.Println(err)
			return nil
		}
		return q.Value().Data().([]float64)
	}
	lin := run(models.Linear, 2, 3, 5, 7)
	log := run(models.Log, math.Log(2), math.Log(3), math.Log(5), math.Log(7))
	fmt.Printf("linear ½[2·5, 3·7] = %.1f\n", lin)
	fmt.Printf("log semiring, exponentiated = %.1f\n", []float64{math.Exp(log[0]), math.Exp(log[1])})
	// Output:
	// linear ½[2·5, 3·7] = [5.0 10.5]
	// log semiring, exponentiated = [5.0 10.5]
}
