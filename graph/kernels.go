package graph

import (
	"math"
	"runtime"
	"sync"

	"gekc/internal/logmath"
)

// Float is the element type of every tensor the package computes on:
// float32 for training speed, float64 for exactness tests.
type Float interface{ ~float32 | ~float64 }

// parallelFor runs fn over [0,n) split into contiguous chunks, one per
// available core, when the work is large enough to pay for the goroutines.
func parallelFor(n, work int, fn func(lo, hi int)) {
	workers := runtime.GOMAXPROCS(0)
	if workers > n {
		workers = n
	}
	if workers <= 1 || work < 1<<16 {
		fn(0, n)
		return
	}
	var wg sync.WaitGroup
	chunk := (n + workers - 1) / workers
	for lo := 0; lo < n; lo += chunk {
		hi := min(lo+chunk, n)
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			fn(lo, hi)
		}(lo, hi)
	}
	wg.Wait()
}

// lseRows writes the log-sum-exp of each row of the rows×cols matrix x
// (row stride ld) into out. A row holding a NaN yields NaN.
func lseRows[T Float](x []T, rows, cols, ld int, out []T) {
	parallelFor(rows, rows*cols, func(lo, hi int) {
		if xs, ok := any(x).([]float32); ok && lseRowsF32(xs[lo*ld:], hi-lo, cols, ld, any(out).([]float32)[lo:hi]) {
			return
		}
		for i := lo; i < hi; i++ {
			out[i] = T(logmath.LogSumExp(x[i*ld : i*ld+cols]))
		}
	})
}

// softmaxScale writes out[i,j] = g[i]·exp(x[i,j] − lse[i]).
func softmaxScale[T Float](x, lse, g []T, rows, cols, ld int, out []T) {
	parallelFor(rows, rows*cols, func(lo, hi int) {
		if xs, ok := any(x).([]float32); ok && softmaxScaleF32(xs[lo*ld:], any(lse).([]float32)[lo:hi],
			any(g).([]float32)[lo:hi], hi-lo, cols, ld, any(out).([]float32)[lo*ld:]) {
			return
		}
		for i := lo; i < hi; i++ {
			l, gi := float64(lse[i]), float64(g[i])
			for j := 0; j < cols; j++ {
				out[i*ld+j] = T(gi * math.Exp(float64(x[i*ld+j])-l))
			}
		}
	})
}

// expShift writes out[i,j] = exp(x[i,j] − rowShift[i] − colShift[j]) for a
// dense rows×cols matrix; a nil shift counts as zero.
func expShift[T Float](x []T, rows, cols int, rowShift, colShift []T, out []T) {
	parallelFor(rows, rows*cols, func(lo, hi int) {
		var rs []T
		if rowShift != nil {
			rs = rowShift[lo:hi]
		}
		if xs, ok := any(x).([]float32); ok && expShiftF32(xs[lo*cols:hi*cols], hi-lo, cols,
			asF32(rs), asF32(colShift), any(out).([]float32)[lo*cols:hi*cols]) {
			return
		}
		for i := lo; i < hi; i++ {
			var r float64
			if rs != nil {
				r = float64(rs[i-lo])
			}
			for j := 0; j < cols; j++ {
				v := float64(x[i*cols+j]) - r
				if colShift != nil {
					v -= float64(colShift[j])
				}
				out[i*cols+j] = T(math.Exp(v))
			}
		}
	})
}

func asF32[T Float](x []T) []float32 {
	if x == nil {
		return nil
	}
	return any(x).([]float32)
}
