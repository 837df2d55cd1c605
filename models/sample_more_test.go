package models

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gekc/internal/logmath"

	"gorgonia.org/tensor"
)

// A squared model's ε component carries mass of its own: with EpsMass
// comparable to Σφ², a sampler that drew by φ² alone fails the test.
func TestSquaredSamplerKeepsEpsMass(t *testing.T) {
	for _, name := range []string{"cp2", "complex2"} {
		m := newTiny(t, name, 8)
		m.EpsMass = 300
		s, err := NewSampler(m, 4096)
		if err != nil {
			t.Fatal(err)
		}
		samples, err := s.Sample(100_000, rand.New(rand.NewPCG(6, 6)))
		if err != nil {
			t.Fatal(err)
		}
		if p := chiSquare(t, m, samples); p <= 1e-3 {
			t.Errorf("%s with ε mass %v: χ² p-value %.3g", name, m.EpsMass, p)
		}
	}
}

// The same seed draws the same triples, whatever the order in which a map
// hands out the relations.
func TestSamplerIsReproducible(t *testing.T) {
	for _, name := range []string{"cp2", "complex+"} {
		// Many relations: a map's iteration order varies more.
		m, err := New(name, Sizes{Entities: 3, Relations: 40, Rank: 2}, Options{Seed: 9, Dtype: tensor.Float64, InitScale: 0.5})
		if err != nil {
			t.Fatal(err)
		}
		s, err := NewSampler(m, 512)
		if err != nil {
			t.Fatal(err)
		}
		var runs [4][]int32
		for i := range runs {
			ts, err := s.Sample(3000, rand.New(rand.NewPCG(7, 7)))
			if err != nil {
				t.Fatal(err)
			}
			for _, tr := range ts {
				runs[i] = append(runs[i], tr.S, tr.R, tr.O)
			}
		}
		for i := 1; i < len(runs); i++ {
			if !slices.Equal(runs[0], runs[i]) {
				t.Errorf("%s: draw %d with the same seed differs from the first", name, i+1)
			}
		}
	}
}

// The squared models' log-normal initialisation has mean terms^(−1/factors)
// per entry, so that a product of `factors` entries summed over `terms`
// has mean 1; the Dirichlet columns of non-negative models are normalised.
func TestInitialisations(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	x := make([]float64, 200_000)
	InitLogNormal(x, 8, 3, 0.5, rng)
	var mean float64
	for _, v := range x {
		mean += v / float64(len(x))
	}
	if !(math.Abs(mean-0.5) <= 0.005) { // 8^(−1/3); the standard error is 0.0006
		t.Errorf("log-normal init: mean %v, want 0.5", mean)
	}
	rows, cols := 6, 4
	y := make([]float64, rows*cols)
	InitLogDirichletColumns(y, rows, cols, 3, rng)
	for j := range cols {
		col := make([]float64, rows)
		for i := range rows {
			col[i] = y[i*cols+j]
		}
		if s := logmath.LogSumExp(col); !(math.Abs(s) <= 1e-12) {
			t.Errorf("Dirichlet column %d: log Σ exp = %v, want 0", j, s)
		}
	}
}

// Size counts the constraint circuit's edges: per (subject type, object
// type) pair, the three sums' inputs and the product's three.
func TestDomainCounts(t *testing.T) {
	// Types A = {0, 1} and B = {2, 3, 4}; relations 0, 1: A→B; 2: B→A.
	d, err := NewDomain([]int32{0, 0, 1, 1, 1}, []int32{0, 0, 1}, []int32{1, 1, 0}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := d.Size(), (2+2+3+3)+(3+1+2+3); got != want {
		t.Errorf("Size %d, want %d", got, want)
	}
	if got := d.Pairs(); got != 2 {
		t.Errorf("Pairs %d, want 2", got)
	}
	if got := d.ConsistentTriples(); got != 2*6+6 {
		t.Errorf("ConsistentTriples %v, want 18", got)
	}
}
