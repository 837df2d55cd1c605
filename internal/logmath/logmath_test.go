package logmath

import (
	"math"
	"testing"
)

func TestLogAddExp(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	for _, c := range []struct{ a, b, want float64 }{
		{0, 0, math.Log(2)},
		{1, 2, math.Log(math.E + math.E*math.E)},
		{-1000, -1000, -1000 + math.Log(2)}, // e^−1000 underflows; the sum does not
		{1000, 999, 1000 + math.Log1p(math.Exp(-1))},
		{-inf, 3, 3},
		{3, -inf, 3},
		{-inf, -inf, -inf},
		{inf, 3, inf},
		{-inf, nan, nan},
		{nan, -inf, nan},
		{nan, 1, nan},
	} {
		got := LogAddExp(c.a, c.b)
		if !same(got, c.want, 1e-15) {
			t.Errorf("LogAddExp(%v, %v) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

func TestLogSumExp(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	for _, c := range []struct {
		x    []float64
		want float64
	}{
		{nil, -inf},
		{[]float64{0}, 0},
		{[]float64{0, 0, 0, 0}, math.Log(4)},
		{[]float64{30, 20, 10}, 30 + math.Log1p(math.Exp(-10)+math.Exp(-20))},
		{[]float64{-800, -800}, -800 + math.Log(2)},
		{[]float64{-inf, -inf}, -inf},
		{[]float64{-inf, 2}, 2},
		{[]float64{1, inf}, inf},
		{[]float64{1, nan, inf}, nan},
	} {
		got := LogSumExp(c.x)
		if !same(got, c.want, 1e-14) {
			t.Errorf("LogSumExp(%v) = %v, want %v", c.x, got, c.want)
		}
	}
	// float32 input is widened first: the sum of 1000 copies of 80 (e^80
	// overflows float32) is exact in float64.
	x := make([]float32, 1000)
	for i := range x {
		x[i] = 80
	}
	if got, want := LogSumExp(x), 80+math.Log(1000); math.Abs(got-want) > 1e-12 {
		t.Errorf("float32 LogSumExp = %v, want %v", got, want)
	}
}

// LogSumExp agrees with folding LogAddExp over the slice.
func TestLogSumExpIsFoldedLogAddExp(t *testing.T) {
	x := []float64{-3.5, 0.25, 7, -100, 6.9, math.Inf(-1), 2}
	fold := math.Inf(-1)
	for _, v := range x {
		fold = LogAddExp(fold, v)
	}
	if got := LogSumExp(x); math.Abs(got-fold) > 1e-14 {
		t.Errorf("LogSumExp %v, folded LogAddExp %v", got, fold)
	}
}

func same(got, want, tol float64) bool {
	switch {
	case math.IsNaN(want):
		return math.IsNaN(got)
	case math.IsInf(want, 0):
		return got == want
	}
	return math.Abs(got-want) <= tol*math.Max(1, math.Abs(want))
}
