package nnmfaug_test

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gekc/kg"
	"gekc/nnmfaug"
)

// NNMFAug on a toy graph of two communities: entities 0–3 link among
// themselves by relation 0, entities 4–7 by relation 1.
func Example() {
	var train []kg.Triple
	for s := int32(0); s < 4; s++ {
		for o := int32(0); o < 4; o++ {
			if s != o {
				train = append(train, kg.Triple{S: s, R: 0, O: o}, kg.Triple{S: s + 4, R: 1, O: o + 4})
			}
		}
	}
	opt := nnmfaug.DefaultOptions()
	opt.Components, opt.Clusters = 2, 2
	m, err := nnmfaug.Fit(train, 8, 2, opt)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("clusters:", m.Cluster)
	for _, t := range m.Sample(3, rand.New(rand.NewPCG(1, 2))) {
		fmt.Printf("(%d, %d, %d) p = %.4f\n", t.S, t.R, t.O, math.Exp(m.LogProb(t)))
	}
	fmt.Printf("across the communities: log p = %v, the paper's %.2f\n",
		m.LogProb(kg.Triple{S: 0, R: 0, O: 4}), m.PaperLogProb(kg.Triple{S: 0, R: 0, O: 4}))
	// Output:
	// clusters: [0 0 0 0 1 1 1 1]
	// (0, 0, 0) p = 0.0312
	// (0, 0, 1) p = 0.0312
	// (4, 1, 7) p = 0.0312
	// across the communities: log p = -Inf, the paper's -4.16
}
