package models

import (
	"math/rand/v2"
	"testing"

	"gekc/kg"
)

// The tree sampler draws from the exact distribution of every squared
// model: χ² against brute-force enumeration, with trees as deep as the
// tiny tables allow (one row per leaf) and shallow (the default, one
// leaf), in one call and in calls of a few triples, and with the uniform ε
// mass made large enough to be drawn often.
func TestTreeSamplerPassesGoodnessOfFit(t *testing.T) {
	for _, name := range Names() {
		m := newTiny(t, name, 23)
		if m.Semantics != Squared {
			if _, err := NewTreeSampler(m); err == nil {
				t.Errorf("%s: a tree sampler for a model that is not squared", name)
			}
			continue
		}
		t.Run(name, func(t *testing.T) {
			for _, c := range []struct {
				leaf, perCall int
				epsMass       float64
			}{{1, gofSamples, 1}, {2, 50, 1}, {0, gofSamples, 1}, {1, 500, 400}} {
				m.EpsMass = c.epsMass
				s, err := newTreeSampler(m, c.leaf)
				if err != nil {
					t.Fatal(err)
				}
				rng := rand.New(rand.NewPCG(uint64(c.leaf), uint64(c.perCall)))
				n := gofSamples
				if c.perCall < gofSamples {
					n = 20_000 // each call runs the query program on a full batch
				}
				var samples []kg.Triple
				for len(samples) < n {
					got, err := s.Sample(min(c.perCall, n-len(samples)), rng)
					if err != nil {
						t.Fatal(err)
					}
					samples = append(samples, got...)
				}
				if p := chiSquare(t, m, samples); p <= 1e-3 {
					t.Errorf("leaf %d, %d per call, ε mass %g: χ² p-value %.3g", c.leaf, c.perCall, c.epsMass, p)
				}
			}
			m.EpsMass = 1
		})
	}
}
