package models

import (
	"fmt"
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

// BenchmarkTreeSampler: draws per second of the Gram-tree sampler against
// the inverse-transform sampler, ComplEx² with N(0, 1) parameters, 535
// relations, rank 25: at 10⁵ entities the tree already wins by far, and its
// cost grows as log|E| where the other's grows as |E|. Rank 200 at
// FB15k-237's 14,541 entities is the size of issue 31's surrogates.
//
//	go test -run '^$' -bench TreeSampler -benchtime 3x ./models/
func BenchmarkTreeSampler(b *testing.B) {
	for _, sz := range []Sizes{{Entities: 20_000, Relations: 535, Rank: 25}, {Entities: 100_000, Relations: 535, Rank: 25},
		{Entities: 14541, Relations: 237, Rank: 200}} {
		ne := sz.Entities
		m, err := New("complex2", sz, Options{Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(1, 2))
		for _, n := range m.ParamNames() {
			x := m.Param(n).Data().([]float32)
			for i := range x {
				x[i] = float32(rng.NormFloat64())
			}
		}
		const draws = 20_000
		for _, c := range []struct {
			name string
			make func() (tripleSampler, error)
		}{
			{"tree", func() (tripleSampler, error) { return NewTreeSampler(m) }},
			{"inverse-transform", func() (tripleSampler, error) { return NewSampler(m, 512) }},
		} {
			b.Run(fmt.Sprintf("%s/entities=%d/d=%d", c.name, ne, sz.Rank), func(b *testing.B) {
				s, err := c.make()
				if err != nil {
					b.Fatal(err)
				}
				if _, err := s.Sample(draws, rng); err != nil { // p(S | r) per relation, computed once
					b.Fatal(err)
				}
				b.ResetTimer()
				for range b.N {
					if _, err := s.Sample(draws, rng); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(draws*b.N)/b.Elapsed().Seconds(), "triples/s")
			})
		}
	}
}

type tripleSampler interface {
	Sample(n int, rng *rand.Rand) ([]kg.Triple, error)
}
