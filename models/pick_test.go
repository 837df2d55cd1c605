package models

import (
	"math"
	"math/rand/v2"
	"testing"
)

// refPick is inverse-transform sampling written out: index i owns the
// half-open interval [W_{i-1}, W_i) of the cumulative weights, so u·W_n
// falling exactly on a boundary belongs to the next index with mass.
func refPick(w []float64, u float64) int {
	var total float64
	for _, x := range w {
		total += x
	}
	var acc float64
	for i, x := range w {
		acc += x
		if u*total < acc {
			return i
		}
	}
	return -1
}

// pickers are the three inverse-transform draws of the samplers, each
// given weights (not log-weights) and a uniform.
var pickers = map[string]func(t *testing.T, w []float64, u float64) int{
	"categorical": func(t *testing.T, w []float64, u float64) int {
		logw := make([]float64, len(w))
		for i, x := range w {
			logw[i] = math.Log(x) // −Inf for no mass
		}
		c, err := newCategorical(logw)
		if err != nil {
			t.Fatal(err)
		}
		return c.pick(u)
	},
	"drawLog": func(t *testing.T, w []float64, u float64) int {
		logw := make([]float32, len(w))
		for i, x := range w {
			logw[i] = float32(math.Log(x))
		}
		j, err := drawLog(logw, u, make([]float64, len(w)))
		if err != nil {
			t.Fatal(err)
		}
		return j
	},
	"drawSquared": func(t *testing.T, w []float64, u float64) int {
		phi := make([]float64, len(w))
		for i, x := range w {
			phi[i] = math.Sqrt(x)
			if i%2 == 1 {
				phi[i] = -phi[i] // the sign of φ carries no mass
			}
		}
		j, err := drawSquared(phi, 0, u, make([]float64, len(w)))
		if err != nil {
			t.Fatal(err)
		}
		return j
	},
}

// Zero weights leading, trailing and inside, and uniforms exactly on every
// boundary of the cumulative weights, just below each, 0 and the largest
// float64 below 1: every draw is the index that owns u, never one without
// mass. The totals are powers of two, so u·total is exact; every weight
// (and its square root, for the squared draw) is exact too.
func TestInverseTransformNeverPicksZeroMass(t *testing.T) {
	for _, w := range [][]float64{
		{0, 0, 1, 1, 0, 1, 0, 0, 1, 0, 0},
		{0, 1, 0, 0, 0, 1, 1, 1, 0, 1, 1, 1, 1, 0, 0},
		{1, 0, 0, 0},
		{0, 0, 0, 1},
		{0, 4, 0, 0, 1, 1, 0, 1, 0, 0, 1, 0},
		{0, 0, 0.25, 0, 0.25, 0.25, 0, 0, 1, 0, 0.25, 0, 0},
	} {
		var total float64
		for _, x := range w {
			total += x
		}
		us := []float64{0, math.Nextafter(1, 0)}
		var acc float64
		for _, x := range w[:len(w)-1] {
			acc += x
			us = append(us, acc/total, math.Nextafter(acc/total, 0))
		}
		for name, pick := range pickers {
			// Through logarithms only weights 0 and 1 stay exact (the
			// largest weight becomes exp(0) = 1); elsewhere u may land
			// next to a boundary rather than on it, and only the mass
			// is checked.
			exact := name == "drawSquared" || zeroOne(w)
			for _, u := range us {
				if u >= 1 { // the boundaries after the last mass
					continue
				}
				got, want := pick(t, w, u), refPick(w, u)
				if w[got] == 0 || exact && got != want {
					t.Errorf("%s %v, u = %v (u·W = %v): index %d (weight %v), want %d", name, w, u, u*total, got, w[got], want)
				}
			}
		}
	}
}

func zeroOne(w []float64) bool {
	for _, x := range w {
		if x != 0 && x != 1 {
			return false
		}
	}
	return true
}

// The same with random weights, half of them zero, and uniforms on the
// boundaries of each draw's own cumulative sums: whatever the rounding,
// no zero-mass index comes out.
func TestInverseTransformRandomZeros(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for range 300 {
		w := make([]float64, 1+rng.IntN(12))
		for i := range w {
			if rng.IntN(2) == 0 {
				w[i] = rng.Float64() * math.Exp(rng.NormFloat64()*5)
			}
		}
		w[rng.IntN(len(w))] = 1 + rng.Float64()
		var total float64
		for _, x := range w {
			total += x
		}
		us := []float64{0, math.Nextafter(1, 0), rng.Float64()}
		var acc float64
		for _, x := range w {
			acc += x
			if u := acc / total; u < 1 {
				us = append(us, u, math.Nextafter(u, 0), math.Nextafter(u, 1))
			}
		}
		for name, pick := range pickers {
			for _, u := range us {
				if got := pick(t, w, u); w[got] == 0 {
					t.Fatalf("%s %v, u = %v: index %d has no mass", name, w, u, got)
				}
			}
		}
	}
}
