package graph

import "time"

// SgemmRate measures the float32 matrix-product rate of graph's BLAS path
// on this machine, in GFLOP/s: the best of three 1000×1000×1000 products
// after one warm-up, with the BLAS threads the process has (package
// openblas: GOMAXPROCS unless OPENBLAS_NUM_THREADS says otherwise). It
// takes about 0.1 s on one thread of a 100 GFLOP/s core. Sweeps record it
// with every run, so that times taken on different hosts, or against the
// paper's GPU, can be put in scale.
func SgemmRate() float64 {
	const n = 1000
	x := make([]float32, n*n)
	for i := range x {
		x[i] = float32(i%7) * 0.1
	}
	c := make([]float32, n*n)
	gemm(false, false, n, n, n, 1, x, n, x, n, 0, c, n)
	best := time.Duration(1 << 62)
	for range 3 {
		start := time.Now()
		gemm(false, false, n, n, n, 1, x, n, x, n, 0, c, n)
		best = min(best, time.Since(start))
	}
	return 2 * n * n * n / best.Seconds() / 1e9
}
