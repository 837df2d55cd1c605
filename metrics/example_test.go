package metrics_test

import (
	"fmt"
	"math"

	"gekc/kg"
	"gekc/metrics"
	"gekc/models"

	"gorgonia.org/tensor"
)

// An evaluator answers the link-prediction and likelihood queries of a
// model: exact log-probabilities of triples for a GeKC (they sum to one over
// all |E|²|R| triples), and filtered ranks of the true answers.
func Example() {
	sz := models.Sizes{Entities: 6, Relations: 2, Rank: 3}
	m, err := models.New("complex2", sz, models.Options{Seed: 7, Dtype: tensor.Float64})
	if err != nil {
		panic(err)
	}
	ev, err := metrics.NewEvaluator(m, 16)
	if err != nil {
		panic(err)
	}
	var all []kg.Triple
	for s := range int32(6) {
		for r := range int32(2) {
			for o := range int32(6) {
				all = append(all, kg.Triple{S: s, R: r, O: o})
			}
		}
	}
	logp, err := ev.LogProbs(all)
	if err != nil {
		panic(err)
	}
	var total float64
	for _, lp := range logp {
		total += math.Exp(lp)
	}
	fmt.Printf("probability of all %d triples: %.9f\n", len(all), total)

	// Ranks among all candidates, the other known triples filtered out.
	test := []kg.Triple{{S: 0, R: 1, O: 2}, {S: 4, R: 0, O: 5}}
	filter := kg.NewFilter(test, []kg.Triple{{S: 0, R: 1, O: 3}})
	rk, err := ev.Rank(test, filter, metrics.Pessimistic, []int{6})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d queries, Hits@6 = %.0f (every answer is among the 6 entities)\n", rk.N, rk.Hits[6])
	// Output:
	// probability of all 72 triples: 1.000000000
	// 4 queries, Hits@6 = 1 (every answer is among the 6 entities)
}
