package models

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkSample25k draws 25,000 triples, the size of the paper's sample
// sets, at FB15k-237's sizes (|E| = 14,541, |R| = 237, d = 200) from
// freshly initialised models: inverse transform for every GeKC, ancestral
// for cp+. One op = 25,000 samples, sampler construction included.
func BenchmarkSample25k(b *testing.B) {
	const n = 25000
	sz := Sizes{Entities: 14541, Relations: 237, Rank: 200}
	for _, c := range []struct {
		model     string
		ancestral bool
	}{{"cp2", false}, {"complex2", false}, {"complex+", false}, {"cp+", false}, {"cp+", true}} {
		name := c.model
		if c.ancestral {
			name += "/ancestral"
		}
		b.Run(fmt.Sprintf("%s/d=%d", name, sz.Rank), func(b *testing.B) {
			m, err := New(c.model, sz, Options{Seed: 1})
			if err != nil {
				b.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(1, 2))
			for i := 0; i < b.N; i++ {
				if c.ancestral {
					s, err := NewAncestralSampler(m)
					if err != nil {
						b.Fatal(err)
					}
					if _, err := s.Sample(n, rng); err != nil {
						b.Fatal(err)
					}
					continue
				}
				s, err := NewSampler(m, 1000)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := s.Sample(n, rng); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
