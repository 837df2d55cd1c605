package report

import (
	"math"
	"strings"
	"testing"
	"time"
)

// The one-sided Mann–Whitney test against values worked out by hand:
// complete separation of 3 and 3 (p = 1/C(6,3)); 5 and 5 with one y above
// every x (U = 20; 1+1+2+3+5+7 = 19 of the 252 splits reach it); ties
// (x = {2, 3}, y = {1, 2, 2}: midranks 1, 3, 3, 3, 5, U = 5, and 3 of the
// 10 splits reach it); and the normal approximation on 15 and 15
// (z = 112/√581.25 = 4.6455).
func TestMannWhitneyGreater(t *testing.T) {
	seq := func(from, to int) []float64 {
		var xs []float64
		for i := from; i <= to; i++ {
			xs = append(xs, float64(i))
		}
		return xs
	}
	for _, c := range []struct {
		name   string
		x, y   []float64
		u, p   float64
		relTol float64
	}{
		{"separated 3 and 3", []float64{4, 5, 6}, []float64{1, 2, 3}, 9, 1.0 / 20, 1e-12},
		{"separated the other way", []float64{1, 2, 3}, []float64{4, 5, 6}, 0, 1, 1e-12},
		{"5 and 5, one y on top", []float64{5, 6, 7, 8, 9}, []float64{1, 2, 3, 4, 10}, 20, 19.0 / 252, 1e-12},
		{"ties", []float64{2, 3}, []float64{1, 2, 2}, 5, 3.0 / 10, 1e-12},
		{"all equal", []float64{1, 1}, []float64{1, 1}, 2, 1, 1e-12},
		{"1 and 1", []float64{0.3}, []float64{0.2}, 1, 0.5, 1e-12},
		{"normal approximation", seq(16, 30), seq(1, 15), 225, 1.695910695412552e-06, 1e-6},
	} {
		u, p, err := MannWhitneyGreater(c.x, c.y)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if u != c.u || math.Abs(p-c.p) > c.relTol*c.p {
			t.Errorf("%s: U = %v, p = %.10g; want %v, %.10g", c.name, u, p, c.u, c.p)
		}
	}
	for _, bad := range [][2][]float64{{nil, {1}}, {{1}, nil}, {{math.NaN()}, {1}}, {{1, 2}, {3, math.NaN()}},
		{make([]float64, 40), append(make([]float64, 39), math.NaN())}} { // the normal approximation's path too
		if _, _, err := MannWhitneyGreater(bad[0], bad[1]); err == nil || !strings.Contains(err.Error(), "Mann–Whitney") {
			t.Errorf("MannWhitneyGreater(%v, %v): %v", bad[0], bad[1], err)
		}
	}
}

// Ranks and tie sums end on samples holding a NaN: no caller's guard is
// what keeps a table from hanging.
func TestMidranksEndOnNaN(t *testing.T) {
	done := make(chan []float64)
	go func() { done <- midranks([]float64{1, math.NaN(), 2}) }()
	select {
	case r := <-done:
		if len(r) != 3 || r[0] != 1 {
			t.Errorf("midranks with a NaN: %v", r)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("midranks loops on a NaN")
	}
	go func() { normalUpperTail([]float64{math.NaN()}, []float64{1}, 0); done <- nil }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("normalUpperTail loops on a NaN")
	}
}

// The smallest attainable p says when a test at 99% can find anything.
func TestMinOneSidedP(t *testing.T) {
	for _, c := range []struct {
		n, m int
		p    float64
	}{{1, 1, 0.5}, {3, 3, 1.0 / 20}, {5, 3, 1.0 / 56}, {5, 4, 1.0 / 126}, {5, 5, 1.0 / 252}} {
		if got := MinOneSidedP(c.n, c.m); math.Abs(got-c.p) > 1e-15 {
			t.Errorf("MinOneSidedP(%d, %d) = %v, want %v", c.n, c.m, got, c.p)
		}
		// It is the p of complete separation.
		x, y := make([]float64, c.n), make([]float64, c.m)
		for i := range x {
			x[i] = float64(100 + i)
		}
		for i := range y {
			y[i] = float64(i)
		}
		if _, p, _ := MannWhitneyGreater(x, y); math.Abs(p-c.p) > 1e-12 {
			t.Errorf("separated samples of %d and %d: p = %v, want %v", c.n, c.m, p, c.p)
		}
	}
}

// MinUpperTail is MinOneSidedP without ties and what the pooled values
// allow with them. x = 1,1,1,1,2 against y = 1,1,1,1: the extreme split
// puts the 2 in x, U = 4 + 16·½ = 12, and every split with the 2 in x (5 of
// the 9 places it can take) has that U: p = 5/9 however the values are
// labelled, above 0.01 although 1/C(9, 5) = 1/126 is below.
func TestMinUpperTail(t *testing.T) {
	for _, c := range []struct {
		name string
		x, y []float64
		want float64
	}{
		{"no ties, 5 and 4", []float64{0.1, 0.5, 0.2, 0.9, 0.3}, []float64{0.8, 0.4, 0.6, 0.7}, 1.0 / 126},
		{"no ties, 3 and 3, labels irrelevant", []float64{6, 5, 4}, []float64{1, 2, 3}, 1.0 / 20},
		{"ties raise it", []float64{1, 1, 1, 1, 2}, []float64{1, 1, 1, 1}, 5.0 / 9},
		{"ties across the split", []float64{1, 1, 1, 1, 2}, []float64{2, 2, 2, 2}, 1.0 / 126},
		{"all equal", []float64{3, 3}, []float64{3, 3, 3}, 1},
	} {
		got, err := MinUpperTail(c.x, c.y)
		if err != nil || math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: MinUpperTail = %v, %v; want %v", c.name, got, err, c.want)
		}
	}
	if _, err := MinUpperTail(nil, []float64{1}); err == nil {
		t.Error("MinUpperTail of an empty sample: no error")
	}
}

// Past about a million splits the p-value is the normal approximation, and
// its variance is corrected for ties: for x = 2,2,2,2,3,3,3,3,4,4,4,4 and
// y = 1,1,1,1,2,2,2,2,3,3,3,3 (C(24,12) = 2,704,156 splits), U = 112 and
// the tie groups of 4, 8, 8 and 4 give Σ(t³ − t) = 1128, so the variance is
// 144/12·(25 − 1128/552) = 6336/23 and z = (112 − 72 − ½)/√(6336/23) =
// 2.37987: p = 0.0086593, below 1%, where the uncorrected (or wrongly
// corrected) variance would leave it above. Two samples all of one value
// carry no evidence: p = 1.
func TestMannWhitneyNormalApproximationTies(t *testing.T) {
	rep := func(vals ...float64) []float64 {
		var xs []float64
		for _, v := range vals {
			xs = append(xs, v, v, v, v)
		}
		return xs
	}
	for _, c := range []struct {
		name string
		x, y []float64
		u, p float64
	}{
		{"ties", rep(2, 3, 4), rep(1, 2, 3), 112, 0.008659348228981421},
		{"all equal", rep(7, 7, 7), rep(7, 7, 7), 72, 1},
	} {
		u, p, err := MannWhitneyGreater(c.x, c.y)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if u != c.u || math.Abs(p-c.p) > 1e-6*c.p {
			t.Errorf("%s: U = %v, p = %.10g; want %v, %.10g", c.name, u, p, c.u, c.p)
		}
	}
}
