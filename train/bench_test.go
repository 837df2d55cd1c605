package train

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gekc/kg"
	"gekc/models"
	"gekc/objectives"
)

// BenchmarkStep times one training step (forward, backward, Adam) of the
// real models at FB15k-237's sizes (|E| = 14,541, |R| = 237), B = 500, the
// setting of ../shared/bench/torch_peer.py. PLL here uses the subject and
// object terms only, as the peer does; "pll3" adds the relation term.
func BenchmarkStep(b *testing.B) {
	const ne, nr, batch = 14541, 237, 500
	for _, c := range []struct{ model, obj string }{
		{"cp", "pll"}, {"complex", "pll"}, {"cp2", "pll"}, {"complex2", "pll"},
		{"cp2", "mle"}, {"complex2", "mle"}, {"cp+", "pll"}, {"complex+", "pll"}, {"complex2", "pll3"},
	} {
		for _, d := range []int{200, 1000} {
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
				}
				st, err := NewStepper(m, obj, batch, 1e-3)
				if err != nil {
					b.Fatal(err)
				}
				rng := rand.New(rand.NewPCG(1, 2))
				triples := make([]kg.Triple, batch)
				draw := func() {
					for i := range triples {
						triples[i] = kg.Triple{S: int32(rng.IntN(ne)), R: int32(rng.IntN(nr)), O: int32(rng.IntN(ne))}
					}
				}
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
			})
		}
	}
}
