package train_test

import (
	"context"
	"fmt"
	"math"

	"gekc/kg"
	"gekc/objectives"
	"gekc/train"
)

// Training a squared ComplEx (ComplEx²) by exact maximum likelihood on the
// Nations graph shipped with the repository: the run keeps the parameters of
// its best validated epoch and reports their test metrics, here the MRR and
// the average log-likelihood (−8.65 nats against the uniform distribution's
// −9.29 on this small graph).
func ExampleRun() {
	ds, err := kg.Load("../data/nations")
	if err != nil {
		panic(err)
	}
	cfg := train.Config{
		Model: "complex2", Rank: 8, Objective: objectives.MLE{},
		LearningRate: 0.01, BatchSize: 200, Epochs: 20, Patience: 5, Seed: 1,
		Eval: train.EvalConfig{Hits: []int{10}, Select: "mrr", LogLikelihood: true},
	}
	res, err := train.Run(context.Background(), cfg, ds, nil)
	if err != nil {
		panic(err)
	}
	ne, nr := float64(ds.Entities.Len()), float64(ds.Relations.Len())
	uniform := -math.Log(ne * ne * nr)
	fmt.Println("status:", res.Status)
	fmt.Println("test MRR above 0.4:", res.Test["mrr"] > 0.4)
	fmt.Println("test LL above the uniform distribution's:", res.Test["ll"] > uniform)
	// Output:
	// status: finished
	// test MRR above 0.4: true
	// test LL above the uniform distribution's: true
}
