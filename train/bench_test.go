package train

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"gekc/graph"
	"gekc/kg"
	"gekc/models"
	"gekc/objectives"
)

// BenchmarkStep times one training step (forward, backward, Adam) of the
// real models at FB15k-237's sizes (|E| = 14,541, |R| = 237), B = 500, the
// setting of ../shared/bench/torch_peer.py. PLL here uses the subject and
// object terms only, as the peer does; "pll3" adds the relation term,
// "pll+n3" the N3 regulariser (kbc's ComplEx). The
// peer's "cp" and "cp2" share one entity table between subjects and
// objects: they are distmult and distmult2 here, while cp and cp2 have the
// paper's two role tables (two Gram matrices for cp2).
func BenchmarkStep(b *testing.B) {
	const ne, nr, batch = 14541, 237, 500
	for _, c := range []struct{ model, obj string }{
		{"cp", "pll"}, {"distmult", "pll"}, {"complex", "pll"}, {"cp2", "pll"}, {"distmult2", "pll"}, {"complex2", "pll"},
		{"cp2", "mle"}, {"complex2", "mle"}, {"cp+", "pll"}, {"complex+", "pll"}, {"complex2", "pll3"},
		{"complex", "pll+n3"}, {"quate", "pll"}, {"quate2", "pll"}, {"quate+", "pll"},
	} {
		for _, d := range []int{200, 1000} {
			if strings.HasPrefix(c.model, "quate") {
				d /= 2 // a quaternion row of rank d/2 has the reals of a complex one of rank d
			}
			b.Run(fmt.Sprintf("%s/%s/d=%d", c.model, c.obj, d), func(b *testing.B) {
				m, err := models.New(c.model, models.Sizes{Entities: ne, Relations: nr, Rank: d}, models.Options{Seed: 1})
				if err != nil {
					b.Fatal(err)
				}
				var obj objectives.Objective = objectives.PLL{Weights: objectives.Weights{Subject: 1, Object: 1}}
				switch c.obj {
				case "mle":
					obj = objectives.MLE{}
				case "pll3":
					obj = objectives.PLL{Weights: objectives.Uniform}
				case "pll+n3":
					obj = objectives.Regularized{Objective: obj, N3: 0.05}
				}
				st, err := NewStepper(m, obj, batch, graph.NewAdam(1e-3))
				if err != nil {
					b.Fatal(err)
				}
				benchmarkRandomSteps(b, st, batch, ne, nr)
			})
		}
	}
}

// BenchmarkConstrainedStep times a PLL step of ComplEx² with and without
// the domain constraint at Hetionet-5k's sizes (26,574 entities of 11
// types, 24 relations), B = 500: the price of the constraint circuit.
func BenchmarkConstrainedStep(b *testing.B) {
	const ne, nr, types, batch = 26574, 24, 11, 500
	rng := rand.New(rand.NewPCG(3, 3))
	entityType := make([]int32, ne)
	for i := range entityType {
		entityType[i] = int32(min(rng.IntN(2*types), types-1)) // one large type, ten smaller
	}
	subjType, objType := make([]int32, nr), make([]int32, nr)
	for r := range subjType {
		subjType[r], objType[r] = int32(rng.IntN(types)), int32(rng.IntN(types))
	}
	dom, err := models.NewDomain(entityType, subjType, objType, types)
	if err != nil {
		b.Fatal(err)
	}
	byType := make([][]int32, types)
	for e, t := range entityType {
		byType[t] = append(byType[t], int32(e))
	}
	for _, d := range []int{50, 200} {
		for _, constrained := range []bool{false, true} {
			b.Run(fmt.Sprintf("complex2/d=%d/constrained=%v", d, constrained), func(b *testing.B) {
				m, err := models.New("complex2", models.Sizes{Entities: ne, Relations: nr, Rank: d}, models.Options{Seed: 1})
				if err != nil {
					b.Fatal(err)
				}
				var cd *models.Domain
				if constrained {
					cd = dom
				}
				st, err := NewConstrainedStepper(m, cd, objectives.PLL{Weights: objectives.Uniform}, batch, graph.NewAdam(1e-3))
				if err != nil {
					b.Fatal(err)
				}
				triples := make([]kg.Triple, batch)
				draw := func() { // consistent triples, as training data are
					for i := range triples {
						r := rng.IntN(nr)
						ss, os := byType[subjType[r]], byType[objType[r]]
						triples[i] = kg.Triple{S: ss[rng.IntN(len(ss))], R: int32(r), O: os[rng.IntN(len(os))]}
					}
				}
				benchmarkSteps(b, st, triples, draw)
			})
		}
	}
}

// benchmarkSteps times st.Step on batches that draw refills, after one
// untimed warm-up step.
func benchmarkSteps(b *testing.B, st *Stepper, triples []kg.Triple, draw func()) {
	b.Helper()
	draw()
	if _, err := st.Step(triples); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		draw()
		if _, err := st.Step(triples); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLargeBatchStep times the paper's d = 1000 steps at the batch
// sizes its search favours for GeKCs (2,000 and 5,000), FB15k-237's sizes:
// "pll3" is the PLL over all three terms that the paper's grids train,
// "pll" the subject and object terms only, as ../shared/bench/torch_peer.py
// computes. Here the batch's quadratic forms qᵀGq (B·k² each) cost as much
// as the Gram matrix (|E|·k²).
func BenchmarkLargeBatchStep(b *testing.B) {
	const ne, nr, d = 14541, 237, 1000
	for _, model := range []string{"complex2", "cp2"} {
		for _, c := range []struct {
			name string
			w    objectives.Weights
		}{{"pll", objectives.Weights{Subject: 1, Object: 1}}, {"pll3", objectives.Uniform}} {
			for _, batch := range []int{2000, 5000} {
				b.Run(fmt.Sprintf("%s/%s/b=%d", model, c.name, batch), func(b *testing.B) {
					m, err := models.New(model, models.Sizes{Entities: ne, Relations: nr, Rank: d}, models.Options{Seed: 1})
					if err != nil {
						b.Fatal(err)
					}
					st, err := NewStepper(m, objectives.PLL{Weights: c.w}, batch, graph.NewAdam(1e-3))
					if err != nil {
						b.Fatal(err)
					}
					benchmarkRandomSteps(b, st, batch, ne, nr)
				})
			}
		}
	}
}

// benchmarkRandomSteps times st.Step on batches of uniformly random triples
// over ne entities and nr relations.
func benchmarkRandomSteps(b *testing.B, st *Stepper, batch, ne, nr int) {
	b.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	triples := make([]kg.Triple, batch)
	draw := func() {
		for i := range triples {
			triples[i] = kg.Triple{S: int32(rng.IntN(ne)), R: int32(rng.IntN(nr)), O: int32(rng.IntN(ne))}
		}
	}
	benchmarkSteps(b, st, triples, draw)
}

// BenchmarkPsiStep times a step of the KTD feature map ψ as
// grids/wn18rr-psi.toml and grids/fb15k237-psi.toml train it (Chen et al.'s
// ComplEx: weighted PLL with the relation term, N3, Adagrad) at d = 1000.
// WN18RR's batch of 50 makes it a small-batch step: every step still pays
// six products against the whole |E| × 2d table (scores, their gradient to
// the queries and to the table, both directions) and a dense Adagrad
// update, and products of 50 rows run at about two thirds of the rate of
// 500 (on 2026-11-28: 71 ms each at B = 50, 122 ms for 100 stacked rows,
// so stacking both directions would save about a tenth of the step).
func BenchmarkPsiStep(b *testing.B) {
	for _, c := range []struct {
		name          string
		ne, nr, batch int
		relation, n3  float64
	}{
		{"wn18rr/b=50", 40943, 11, 50, 0.1, 0.2},
		{"fb15k237/b=500", 14541, 237, 500, 8, 0.1},
	} {
		b.Run(c.name, func(b *testing.B) {
			m, err := models.New("complex", models.Sizes{Entities: c.ne, Relations: c.nr, Rank: 1000}, models.Options{Seed: 1})
			if err != nil {
				b.Fatal(err)
			}
			obj := objectives.Regularized{Objective: objectives.PLL{Weights: objectives.Weights{Subject: 1, Relation: c.relation, Object: 1}}, N3: c.n3}
			st, err := NewStepper(m, obj, c.batch, graph.NewAdagrad(0.1, 0))
			if err != nil {
				b.Fatal(err)
			}
			benchmarkRandomSteps(b, st, c.batch, c.ne, c.nr)
		})
	}
}
