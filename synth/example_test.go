package synth_test

import (
	"fmt"
	"math"
	"os"

	"gekc/kg"
	"gekc/models"
	"gekc/synth"
)

// A planted graph: draw a GeKC's parameters, sample a data set of distinct
// triples from it exactly, score every split under the true model, and
// write the splits where any grid can load them. The exact log-likelihoods
// are the ceiling a model trained on the data is measured against.
func Example() {
	sz := models.Sizes{Entities: 30, Relations: 3, Rank: 4}
	truth, err := synth.Planted("complex2", sz, 1, 0, 0)
	if err != nil {
		panic(err)
	}
	sampler, err := synth.NewSampler(truth, nil)
	if err != nil {
		panic(err)
	}
	support := synth.Support(sz, nil) // |E|²|R| triples
	sizes := synth.Splits{Train: 400, Valid: 50, Test: 50}
	d, err := synth.DrawSplits(sampler, sizes, synth.Distinct, support, 1)
	if err != nil {
		panic(err)
	}
	_, _, test, err := synth.LogLikelihoods(truth, nil, d)
	if err != nil {
		panic(err)
	}
	uniform := -math.Log(support)
	fmt.Printf("splits: %d / %d / %d triples\n", len(d.Train), len(d.Valid), len(d.Test))
	fmt.Println("test LL under the truth beats the uniform model's:", test > uniform)

	dir, err := os.MkdirTemp("", "planted")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	if err := synth.WriteSplits(dir, d, synth.NumberedNames(sz.Entities, sz.Relations), false); err != nil {
		panic(err)
	}
	ds, err := kg.Load(dir)
	if err != nil {
		panic(err)
	}
	fmt.Printf("loaded back: %d / %d / %d triples\n", len(ds.Train), len(ds.Valid), len(ds.Test))
	// Output:
	// splits: 400 / 50 / 50 triples
	// test LL under the truth beats the uniform model's: true
	// loaded back: 400 / 50 / 50 triples
}
