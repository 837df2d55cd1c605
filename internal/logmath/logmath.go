// Package logmath holds the log-space arithmetic that plain Go code of
// several layers needs on float slices: log(e^a + e^b) and log Σ e^x,
// computed without overflow. The graph ops of the same names (graph.LogAddExp,
// graph.RowLogSumExp) work on nodes and use these for their scalar kernels.
package logmath

import "math"

// LogAddExp returns log(e^a + e^b), exact for a or b = −Inf; a NaN operand
// gives NaN.
func LogAddExp(a, b float64) float64 {
	if a < b {
		a, b = b, a
	}
	if math.IsInf(a, -1) {
		return b // both −Inf, or b is NaN
	}
	return a + math.Log1p(math.Exp(b-a))
}

// LogSumExp returns log Σ_i e^{x_i}: −Inf for an empty slice or one of
// −Infs, +Inf if any x_i is +Inf, NaN if any is NaN. The largest value is
// factored out first, so a sum of values far from zero neither overflows
// nor underflows.
func LogSumExp[T ~float32 | ~float64](x []T) float64 {
	m := math.Inf(-1)
	for _, v := range x {
		f := float64(v)
		if f != f {
			return math.NaN()
		}
		if f > m {
			m = f
		}
	}
	if math.IsInf(m, 0) {
		return m
	}
	var s float64
	for _, v := range x {
		s += math.Exp(float64(v) - m)
	}
	return m + math.Log(s)
}
