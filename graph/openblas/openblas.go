// Package openblas routes the matrix products of gekc through OpenBLAS and
// sets the process's floating-point mode for training. A program opts in by
// importing it, as the experiments command does:
//
//	import _ "gekc/graph/openblas"
//
// Importing it has three process-wide effects, which is why no library
// package of gekc imports it:
//
//   - The matrix-matrix products (BLAS level 3) of Gorgonia's stock ops,
//     gonum's blas32/blas64 (and so gonum's mat, used by metrics and the
//     samplers) and the graph package run on OpenBLAS (via cgo and gonum's
//     netlib binding) instead of gonum's pure-Go BLAS, which is 25-50x
//     slower at them here. Vector and matrix-vector operations (levels 1
//     and 2) stay on gonum's Go code: they are memory-bound, so OpenBLAS
//     gains little on them, and OpenBLAS runs those above ~96² on all its
//     threads, each call then waiting for a thread to be scheduled. On a
//     machine whose cores are busy (a training beside) that wait is a
//     scheduler slice per call: sampling a 4,600-triple surrogate of UMLS,
//     whose 46 eigendecompositions of 100×100 matrices make hundreds of
//     matrix-vector calls each, took 22 s with them on OpenBLAS and 0.9 s
//     with them in Go, beside two trainings.
//   - OpenBLAS computes on GOMAXPROCS threads unless OPENBLAS_NUM_THREADS
//     (or GOTO_NUM_THREADS, OMP_NUM_THREADS) is set: by itself it would
//     take every core whatever GOMAXPROCS says.
//   - On amd64, subnormal floats are flushed to zero and read as zero (MXCSR
//     FTZ and DAZ) on every thread. Parameters that training pulls towards
//     zero reach 1e-36 and below; their products are subnormal, and every
//     BLAS call and kernel touching them runs 10-100x slower on x86
//     (measured: a FB15k-237 CP² epoch went from 14 s to 119 s). Values
//     below 1.2e-38 (float32) or 2.2e-308 (float64) become zero, which
//     changes no result of this project. The mode is set by a C constructor
//     at load, before the Go runtime starts its threads, so that every
//     thread inherits it; graph.SubnormalsFlushed reports it.
package openblas

// #cgo LDFLAGS: -lopenblas
import "C"

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/blas/gonum"
	"gonum.org/v1/netlib/blas/netlib"
	G "gorgonia.org/gorgonia"
)

func init() {
	var impl levelThree
	G.Use(impl)
	blas64.Use(impl)
	blas32.Use(impl)
}

// levelThree is gonum's Go BLAS with its real level-3 routines replaced by
// OpenBLAS's.
type levelThree struct {
	gonum.Implementation
	ob netlib.Implementation
}

func (l levelThree) Sgemm(tA, tB blas.Transpose, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	l.ob.Sgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

func (l levelThree) Dgemm(tA, tB blas.Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	l.ob.Dgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

func (l levelThree) Ssymm(s blas.Side, ul blas.Uplo, m, n int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	l.ob.Ssymm(s, ul, m, n, alpha, a, lda, b, ldb, beta, c, ldc)
}

func (l levelThree) Dsymm(s blas.Side, ul blas.Uplo, m, n int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	l.ob.Dsymm(s, ul, m, n, alpha, a, lda, b, ldb, beta, c, ldc)
}

func (l levelThree) Ssyrk(ul blas.Uplo, t blas.Transpose, n, k int, alpha float32, a []float32, lda int, beta float32, c []float32, ldc int) {
	l.ob.Ssyrk(ul, t, n, k, alpha, a, lda, beta, c, ldc)
}

func (l levelThree) Dsyrk(ul blas.Uplo, t blas.Transpose, n, k int, alpha float64, a []float64, lda int, beta float64, c []float64, ldc int) {
	l.ob.Dsyrk(ul, t, n, k, alpha, a, lda, beta, c, ldc)
}

func (l levelThree) Ssyr2k(ul blas.Uplo, t blas.Transpose, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	l.ob.Ssyr2k(ul, t, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

func (l levelThree) Dsyr2k(ul blas.Uplo, t blas.Transpose, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	l.ob.Dsyr2k(ul, t, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

func (l levelThree) Strmm(s blas.Side, ul blas.Uplo, tA blas.Transpose, d blas.Diag, m, n int, alpha float32, a []float32, lda int, b []float32, ldb int) {
	l.ob.Strmm(s, ul, tA, d, m, n, alpha, a, lda, b, ldb)
}

func (l levelThree) Dtrmm(s blas.Side, ul blas.Uplo, tA blas.Transpose, d blas.Diag, m, n int, alpha float64, a []float64, lda int, b []float64, ldb int) {
	l.ob.Dtrmm(s, ul, tA, d, m, n, alpha, a, lda, b, ldb)
}

func (l levelThree) Strsm(s blas.Side, ul blas.Uplo, tA blas.Transpose, d blas.Diag, m, n int, alpha float32, a []float32, lda int, b []float32, ldb int) {
	l.ob.Strsm(s, ul, tA, d, m, n, alpha, a, lda, b, ldb)
}

func (l levelThree) Dtrsm(s blas.Side, ul blas.Uplo, tA blas.Transpose, d blas.Diag, m, n int, alpha float64, a []float64, lda int, b []float64, ldb int) {
	l.ob.Dtrsm(s, ul, tA, d, m, n, alpha, a, lda, b, ldb)
}
