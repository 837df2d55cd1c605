package analysis

import (
	"math"
	"testing"
)

// checkRunID takes names of directories under runs/ and nothing that
// leaves it.
func TestCheckRunID(t *testing.T) {
	for _, id := range []string{"cp2-pll-d50-b500-lr0.01-s0-9e019df1", "a", "x..y"} {
		if err := checkRunID(id); err != nil {
			t.Errorf("%q: %v", id, err)
		}
	}
	for _, id := range []string{"", ".", "..", "a/b", `a\b`, "../x"} {
		if err := checkRunID(id); err == nil {
			t.Errorf("%q accepted as a run ID", id)
		}
	}
}

// Z is the binomial z-score: 60 hits of 100 at mass 0.5 is 2 standard
// deviations (√(100·0.5·0.5) = 5) above the mean; NaN at mass 0 and 1.
func TestSplitMassZ(t *testing.T) {
	if z := (SplitMass{Mass: 0.5, Hits: 60}).Z(100); z != 2 {
		t.Errorf("z %v, want 2", z)
	}
	if z := (SplitMass{Mass: 0.2, Hits: 20}).Z(100); z != 0 {
		t.Errorf("z %v at the mean, want 0", z)
	}
	if z := (SplitMass{Mass: 0.1, Hits: 16}).Z(100); math.Abs(z-2) > 1e-12 {
		t.Errorf("z %v, want 2 (σ = 3)", z)
	}
	for _, m := range []float64{0, 1} {
		if z := (SplitMass{Mass: m, Hits: 3}).Z(100); !math.IsNaN(z) {
			t.Errorf("mass %v: z %v, want NaN", m, z)
		}
	}
}

// A KTD draw takes at most KTDDrawSize triples, and no more than the test
// split or the samples have.
func TestKTDSize(t *testing.T) {
	for _, c := range []struct{ tests, samples, want int }{
		{5000, 25000, KTDDrawSize}, {5000, 200, 200}, {300, 5000, 300}, {661, 661, 661}, {0, 10, 0},
	} {
		if got := KTDSize(c.tests, c.samples); got != c.want {
			t.Errorf("KTDSize(%d, %d) = %d, want %d", c.tests, c.samples, got, c.want)
		}
	}
}
