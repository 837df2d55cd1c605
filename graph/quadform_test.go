package graph

import (
	"math"
	"math/rand/v2"
	"testing"
)

// quadFormGradG's two signed rank updates equal Σ g_i q_i q_iᵀ computed
// directly, with positive, negative and zero weights; a NaN weight
// poisons the result rather than being skipped.
func TestQuadFormGradGSignedUpdates(t *testing.T) {
	const n, k = 7, 4
	rng := rand.New(rand.NewPCG(2, 8))
	q := make([]float64, n*k)
	for i := range q {
		q[i] = rng.NormFloat64()
	}
	for _, grad := range [][]float64{
		{0.5, -1.5, 0, 2, -0.25, 0, 1},
		{1, 2, 3, 4, 5, 6, 7},
		{-1, -2, -3, -4, -5, -6, -7},
		{0, 0, 0, 0, 0, 0, 0},
	} {
		out := make([]float64, k*k)
		quadFormGradG(n, k, q, grad, make([]float64, n*k), out)
		for a := 0; a < k; a++ {
			for b := 0; b < k; b++ {
				var want float64
				for i := 0; i < n; i++ {
					want += grad[i] * q[i*k+a] * q[i*k+b]
				}
				if math.Abs(out[a*k+b]-want) > 1e-12 {
					t.Fatalf("grad %v: dG[%d,%d] = %v, want %v", grad, a, b, out[a*k+b], want)
				}
			}
		}
	}
	out := make([]float64, k*k)
	quadFormGradG(n, k, q, []float64{1, math.NaN(), 0, 0, 0, 0, 0}, make([]float64, n*k), out)
	if !math.IsNaN(out[0]) {
		t.Fatalf("a NaN weight gave dG[0,0] = %v, want NaN", out[0])
	}
}
