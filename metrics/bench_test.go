package metrics

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gekc/kg"
	"gekc/models"
)

// BenchmarkRank times the filtered ranking of 1,000 queries on both sides
// (what a validation pass does per 1,000 triples; FB15k-237's has 17,535)
// at FB15k-237's sizes, |E| = 14,541 and |R| = 237, in batches of 1,000
// (eval.batch_size's default), with a filter of 300,000 known triples
// (uniformly random, so a query has almost no other known answer: the
// filter costs less than on FB15k-237, whose queries have many).
// Ranking is one B × |E| score matrix per side: a product of the queries
// with the candidate table for energy-based and squared models, a signed
// log-matmul-exp over every product unit (4d columns for ComplEx) for the
// non-negative ones.
func BenchmarkRank(b *testing.B) {
	const ne, nr, queries, batch = 14541, 237, 1000, 1000
	rng := rand.New(rand.NewPCG(5, 5))
	triple := func() kg.Triple { return kg.Triple{S: rng.Int32N(ne), R: rng.Int32N(nr), O: rng.Int32N(ne)} }
	known := make([]kg.Triple, 300_000)
	for i := range known {
		known[i] = triple()
	}
	test := known[:queries]
	filter := kg.NewFilter(known)
	for _, model := range []string{"cp", "cp+", "cp2", "complex", "complex+", "complex2"} {
		for _, d := range []int{200, 1000} {
			b.Run(fmt.Sprintf("%s/d=%d", model, d), func(b *testing.B) {
				m, err := models.New(model, models.Sizes{Entities: ne, Relations: nr, Rank: d}, models.Options{Seed: 1})
				if err != nil {
					b.Fatal(err)
				}
				ev, err := NewEvaluator(m, batch)
				if err != nil {
					b.Fatal(err)
				}
				for b.Loop() {
					if _, err := ev.Rank(test, filter, Pessimistic, []int{1, 3, 10}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
