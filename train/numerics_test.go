package train

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gekc/graph"
	"gekc/kg"
	"gekc/models"
	"gekc/objectives"
)

// At the paper's rank (d = 1000) in float32, a GeKC's first losses must be
// those of the near-uniform distribution its initialisation is built to give
// (squared: φ ≈ 1 for every triple; non-negative: Dirichlet columns), and
// training steps must stay finite: no overflow in Σφ² over d² Gram entries
// or in log-space sums, no log of zero.
func TestGeKCsStayFiniteAtPaperRank(t *testing.T) {
	if testing.Short() {
		t.Skip("float32 training steps at d = 1000")
	}
	const ne, batch = 2000, 100
	for _, c := range []struct {
		family        string
		rank, relRank int
		relations     int
	}{
		{"cp", 1000, 0, 20},
		{"distmult", 1000, 0, 20},
		{"complex", 1000, 0, 20},
		// φ sums d² (RESCAL) and d²·d_r (TuckER) products: more terms than
		// CP's at d = 1000, at a size a unit test can afford.
		{"rescal", 250, 0, 5},
		{"tucker", 200, 50, 20},
	} {
		for _, sem := range []string{"2", "+"} {
			name := c.family + sem
			for _, obj := range []objectives.Objective{objectives.PLL{Weights: objectives.Uniform}, objectives.MLE{}} {
				t.Run(fmt.Sprintf("%s/%s", name, obj.Name()), func(t *testing.T) {
					sz := models.Sizes{Entities: ne, Relations: c.relations, Rank: c.rank, RelationRank: c.relRank}
					m, err := models.New(name, sz, models.Options{Seed: 3})
					if err != nil {
						t.Fatal(err)
					}
					lr := 1e-3
					if sem == "+" {
						lr = 1e-2
					}
					st, err := NewStepper(m, obj, batch, graph.NewAdam(lr))
					if err != nil {
						t.Fatal(err)
					}
					// -log of the uniform distribution over all triples, or
					// the sum of the uniform conditionals' for PLL.
					uniform := math.Log(float64(ne)*float64(ne)) + math.Log(float64(c.relations))
					rng := rand.New(rand.NewPCG(5, 6))
					triples := make([]kg.Triple, batch)
					for step := 0; step < 3; step++ {
						for i := range triples {
							triples[i] = kg.Triple{S: int32(rng.IntN(ne)), R: int32(rng.IntN(c.relations)), O: int32(rng.IntN(ne))}
						}
						loss, err := st.Step(triples)
						if err != nil {
							t.Fatalf("step %d: loss %v: %v", step, loss, err)
						}
						if step == 0 && math.Abs(loss-uniform) > 0.5 {
							t.Errorf("first loss %.4f, want about %.4f (the uniform distribution's)", loss, uniform)
						}
					}
				})
			}
		}
	}
}
