package models

import (
	"math"
	"math/rand/v2"
	"testing"

	"gekc/kg"

	"gonum.org/v1/gonum/stat/distuv"
)

const gofSamples = 200_000

// chiSquare returns the p-value of the samples against the exact
// distribution of m (by enumeration), merging cells expected below 5.
func chiSquare(t *testing.T, m *Model, samples []kg.Triple) float64 {
	return chiSquareWith(t, m.Sizes, func(s, r, o int) float64 { return refUnnorm(m, s, r, o) }, samples)
}

// chiSquareK is chiSquare for the constrained distribution p_K.
func chiSquareK(t *testing.T, m *Model, d *Domain, samples []kg.Triple) float64 {
	return chiSquareWith(t, m.Sizes, func(s, r, o int) float64 { return refUnnormK(m, d, s, r, o) }, samples)
}

func chiSquareWith(t *testing.T, sz Sizes, unnorm func(s, r, o int) float64, samples []kg.Triple) float64 {
	t.Helper()
	cell := func(s, r, o int) int { return (s*sz.Relations+r)*sz.Entities + o }
	n := sz.Entities * sz.Entities * sz.Relations
	p := make([]float64, n)
	var z float64
	for s := 0; s < sz.Entities; s++ {
		for r := 0; r < sz.Relations; r++ {
			for o := 0; o < sz.Entities; o++ {
				u := unnorm(s, r, o)
				p[cell(s, r, o)] = u
				z += u
			}
		}
	}
	counts := make([]float64, n)
	for _, tr := range samples {
		counts[cell(int(tr.S), int(tr.R), int(tr.O))]++
	}
	N := float64(len(samples))
	var chi2, smallExp, smallObs float64
	df := -1
	for i := range p {
		e := N * p[i] / z
		if e == 0 && counts[i] > 0 {
			t.Fatalf("%v samples of a triple with probability zero", counts[i])
		}
		if e < 5 {
			smallExp += e
			smallObs += counts[i]
			continue
		}
		chi2 += (counts[i] - e) * (counts[i] - e) / e
		df++
	}
	if smallExp > 0 {
		chi2 += (smallObs - smallExp) * (smallObs - smallExp) / math.Max(smallExp, 1e-300)
		df++
	}
	return distuv.ChiSquared{K: float64(df)}.Survival(chi2)
}

func TestSamplersPassGoodnessOfFit(t *testing.T) {
	for _, name := range Names() {
		m := newTiny(t, name, 21)
		if m.Semantics == Energy {
			if _, err := NewSampler(m, 0); err == nil {
				t.Errorf("%s: energy model got a sampler", name)
			}
			continue
		}
		t.Run(name, func(t *testing.T) {
			s, err := NewSampler(m, 4096)
			if err != nil {
				t.Fatal(err)
			}
			samples, err := s.Sample(gofSamples, rand.New(rand.NewPCG(1, 1)))
			if err != nil {
				t.Fatal(err)
			}
			if p := chiSquare(t, m, samples); p <= 1e-3 {
				t.Errorf("inverse-transform sampler: χ² p-value %.3g", p)
			}
			if _, ok := m.Score.(MixtureScore); !ok || m.Semantics != NonNegative {
				return
			}
			a, err := NewAncestralSampler(m)
			if err != nil {
				t.Fatal(err)
			}
			samples, err = a.Sample(gofSamples, rand.New(rand.NewPCG(2, 2)))
			if err != nil {
				t.Fatal(err)
			}
			if p := chiSquare(t, m, samples); p <= 1e-3 {
				t.Errorf("ancestral sampler: χ² p-value %.3g", p)
			}
		})
	}
}

// A CP+ whose components have very different masses: the ancestral sampler
// must weigh components by mass; drawing them uniformly must fail the test.
func TestAncestralSamplerWeighsComponentsByMass(t *testing.T) {
	m := newTiny(t, "cp+", 3)
	w := m.Param("relation").Data().([]float64)
	d := m.Sizes.Rank
	for r := 0; r < m.Sizes.Relations; r++ {
		for i := 0; i < d; i++ {
			w[r*d+i] += 3 * float64(i) // component i is e^{3i} times heavier
		}
	}
	a, err := NewAncestralSampler(m)
	if err != nil {
		t.Fatal(err)
	}
	samples, err := a.Sample(gofSamples, rand.New(rand.NewPCG(4, 4)))
	if err != nil {
		t.Fatal(err)
	}
	if p := chiSquare(t, m, samples); p <= 1e-3 {
		t.Errorf("mass-weighted components: χ² p-value %.3g", p)
	}
	uniform, _ := newCategorical(make([]float64, d))
	a.components = uniform
	samples, err = a.Sample(gofSamples, rand.New(rand.NewPCG(5, 5)))
	if err != nil {
		t.Fatal(err)
	}
	if p := chiSquare(t, m, samples); p > 1e-3 {
		t.Errorf("uniformly drawn components passed the test (p = %.3g): the test cannot tell them apart", p)
	}
}

// The patterns users call samplers with: one triple per call (every call
// a handful of relations, most absent), and few per call. A sampler that
// reads a relation's distribution from the wrong row of a call's batch
// passes a single large call, where every relation appears, but not
// these.
func TestSamplersPerCallPatterns(t *testing.T) {
	for _, name := range Names() {
		m := newTiny(t, name, 31)
		if m.Semantics == Energy {
			continue
		}
		t.Run(name, func(t *testing.T) {
			for _, perCall := range []int{1, 3} {
				s, err := NewSampler(m, 4)
				if err != nil {
					t.Fatal(err)
				}
				rng := rand.New(rand.NewPCG(uint64(perCall), 9))
				var samples []kg.Triple
				for len(samples) < 12_000 {
					got, err := s.Sample(perCall, rng)
					if err != nil {
						t.Fatal(err)
					}
					samples = append(samples, got...)
				}
				if p := chiSquare(t, m, samples); p <= 1e-3 {
					t.Errorf("%d triples per call: χ² p-value %.3g", perCall, p)
				}
			}
		})
	}
}

// UniformComponents draws from (1/d)·Σ_h p_h(s)·p_h(r)·p_h(o), each p_h
// the normalised columns of component h: χ² against that mixture by
// enumeration passes (and, by the test above, against the model fails).
// ComponentPerplexity is d for equal masses and falls as they spread.
func TestAncestralSamplerUniformComponents(t *testing.T) {
	m := newTiny(t, "cp+", 3)
	d := m.Sizes.Rank
	a, err := NewAncestralSampler(m)
	if err != nil {
		t.Fatal(err)
	}
	even := a.ComponentPerplexity()
	w := m.Param("relation").Data().([]float64)
	for r := 0; r < m.Sizes.Relations; r++ {
		for i := 0; i < d; i++ {
			w[r*d+i] += 3 * float64(i)
		}
	}
	if a, err = NewAncestralSampler(m); err != nil {
		t.Fatal(err)
	}
	if p := a.ComponentPerplexity(); !(p >= 1 && p < even && p < float64(d)-0.5) || !(even <= float64(d)+1e-9) {
		t.Errorf("component perplexity %v after spreading the masses, %v before, rank %d", p, even, d)
	}
	u, err := a.UniformComponents()
	if err != nil {
		t.Fatal(err)
	}
	samples, err := u.Sample(gofSamples, rand.New(rand.NewPCG(6, 6)))
	if err != nil {
		t.Fatal(err)
	}
	col := func(name string, row, h int) float64 { // normalised column h of a log-space table
		x := m.Param(name).Data().([]float64)
		rows := m.Param(name).Shape()[0]
		var z float64
		for i := 0; i < rows; i++ {
			z += math.Exp(x[i*d+h])
		}
		return math.Exp(x[row*d+h]) / z
	}
	mixture := func(s, r, o int) float64 {
		var p float64
		for h := 0; h < d; h++ {
			p += col("subject", s, h) * col("relation", r, h) * col("object", o, h)
		}
		return p / float64(d)
	}
	if p := chiSquareWith(t, m.Sizes, mixture, samples); p <= 1e-3 {
		t.Errorf("uniform components against their mixture: χ² p-value %.3g", p)
	}
}
