package report

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
)

// MannWhitneyU returns the Mann–Whitney U statistic of sample x against y:
// the number of pairs (xᵢ, yⱼ) with xᵢ > yⱼ, ties counting one half. It
// ranges from 0 to len(x)·len(y); large values say x tends to exceed y.
func MannWhitneyU(x, y []float64) float64 {
	var u float64
	for _, a := range x {
		for _, b := range y {
			switch {
			case a > b:
				u++
			case a == b:
				u += 0.5
			}
		}
	}
	return u
}

// maxExactArrangements bounds the enumeration of MannWhitneyGreater's exact
// p-value: C(n+m, n) splits of the pooled sample (C(20, 10) = 184,756).
const maxExactArrangements = 1 << 20

// MannWhitneyGreater tests the one-sided hypothesis that x tends to exceed
// y: it returns U (MannWhitneyU) and the p-value P(U' ≥ U) under the null
// hypothesis that both samples come from one distribution. The p-value is
// exact — the share of the C(n+m, n) equally likely ways of splitting the
// pooled values into samples of x's and y's sizes whose U is at least as
// large, which also handles ties exactly — when there are at most about a
// million such splits (every sample of seeds); otherwise it is the normal
// approximation with tie correction and continuity correction. Either
// sample empty is an error.
func MannWhitneyGreater(x, y []float64) (u, p float64, err error) {
	n, m := len(x), len(y)
	if n == 0 || m == 0 {
		return 0, 0, fmt.Errorf("report: Mann–Whitney test of samples of sizes %d and %d", n, m)
	}
	for _, v := range append(slices.Clone(x), y...) {
		if math.IsNaN(v) {
			return 0, 0, fmt.Errorf("report: Mann–Whitney test of a sample with NaN")
		}
	}
	u = MannWhitneyU(x, y)
	if binomial(n+m, n) <= maxExactArrangements {
		return u, exactUpperTail(x, y, u), nil
	}
	return u, normalUpperTail(x, y, u), nil
}

// MinOneSidedP is the smallest p-value MannWhitneyGreater can return for
// samples of sizes n and m: 1/C(n+m, n), when every x exceeds every y. A
// test at level α can only find a difference when MinOneSidedP(n, m) ≤ α;
// at 99%, two samples of 3 (1/20) cannot, samples of 5 and 4 (1/126) can.
func MinOneSidedP(n, m int) float64 { return 1 / binomial(n+m, n) }

// MinUpperTail is the smallest p-value MannWhitneyGreater can return for
// samples of x's and y's sizes drawn from their pooled values: the p of
// the split that gives x the largest values. Without ties it is
// MinOneSidedP(len(x), len(y)); ties raise it (x = {1,1,1,1,2} against
// y = {1,1,1,1}: 1/126 without ties, 5/9 with these), so it, not the
// sizes alone, says whether a test at level α could decide at all.
func MinUpperTail(x, y []float64) (float64, error) {
	pooled := append(slices.Clone(x), y...)
	slices.Sort(pooled)
	m := len(y)
	_, p, err := MannWhitneyGreater(pooled[m:], pooled[:m])
	return p, err
}

// exactUpperTail enumerates every split of the pooled sample into n "x"
// and m "y" values and returns the share with U ≥ u.
func exactUpperTail(x, y []float64, u float64) float64 {
	pooled := append(slices.Clone(x), y...)
	slices.Sort(pooled)
	n, total := len(x), len(pooled)
	// U of a split = Σ over its x values of (# pooled y below it + ½ # y
	// equal to it) = Σ over x values of their midrank − n(n+1)/2.
	mid := midranks(pooled)
	base := float64(n*(n+1)) / 2
	var count, all float64
	var walk func(start, left int, rankSum float64)
	walk = func(start, left int, rankSum float64) {
		if left == 0 {
			all++
			if rankSum-base >= u-1e-9 {
				count++
			}
			return
		}
		for i := start; i <= total-left; i++ {
			walk(i+1, left-1, rankSum+mid[i])
		}
	}
	walk(0, n, 0)
	return count / all
}

// midranks returns the 1-based ranks of sorted values, ties sharing the
// mean of their ranks.
func midranks(sorted []float64) []float64 {
	r := make([]float64, len(sorted))
	for i := 0; i < len(sorted); {
		j := i + 1 // a NaN equals nothing, itself included
		for j < len(sorted) && sorted[j] == sorted[i] {
			j++
		}
		for k := i; k < j; k++ {
			r[k] = float64(i+j+1) / 2 // mean of ranks i+1 … j
		}
		i = j
	}
	return r
}

// normalUpperTail is P(U' ≥ u) by the normal approximation, with the
// variance corrected for ties and a continuity correction of ½.
func normalUpperTail(x, y []float64, u float64) float64 {
	n, m := float64(len(x)), float64(len(y))
	pooled := append(slices.Clone(x), y...)
	slices.Sort(pooled)
	var ties float64
	for i := 0; i < len(pooled); {
		j := i + 1
		for j < len(pooled) && pooled[j] == pooled[i] {
			j++
		}
		t := float64(j - i)
		ties += t*t*t - t
		i = j
	}
	N := n + m
	variance := n * m / 12 * ((N + 1) - ties/(N*(N-1)))
	if variance <= 0 {
		return 1 // every value equal: no evidence either way
	}
	z := (u - n*m/2 - 0.5) / math.Sqrt(variance)
	return distuv.UnitNormal.Survival(z)
}

// binomial is C(n, k) as a float64 (exact up to 2⁵³).
func binomial(n, k int) float64 {
	if k < 0 || k > n {
		return 0
	}
	k = min(k, n-k)
	c := 1.0
	for i := 1; i <= k; i++ {
		c = c * float64(n-k+i) / float64(i)
	}
	return math.Round(c)
}
