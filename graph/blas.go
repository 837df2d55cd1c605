package graph

import (
	"runtime"

	"gonum.org/v1/gonum/blas"
	G "gorgonia.org/gorgonia"
)

// Matrix products go through the BLAS that Gorgonia is set to use
// (G.WhichBLAS): gonum's pure-Go implementation unless a program opts in to
// OpenBLAS by importing gekc/graph/openblas, as the experiments command
// does. Importing graph changes no process-wide state.

func transFlag(t bool) blas.Transpose {
	if t {
		return blas.Trans
	}
	return blas.NoTrans
}

// gemm computes C = alpha·op(A)·op(B) + beta·C for row-major matrices, where
// op(A) is m×k and op(B) is k×n. Leading dimensions are the row lengths of the
// stored (untransposed) matrices.
func gemm[T Float](transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	if k == 0 {
		scaleInPlace(c, beta)
		return
	}
	switch a := any(a).(type) {
	case []float32:
		G.WhichBLAS().Sgemm(transFlag(transA), transFlag(transB), m, n, k, float32(alpha), a, lda,
			any(b).([]float32), ldb, float32(beta), any(c).([]float32), ldc)
	case []float64:
		G.WhichBLAS().Dgemm(transFlag(transA), transFlag(transB), m, n, k, float64(alpha), a, lda,
			any(b).([]float64), ldb, float64(beta), any(c).([]float64), ldc)
	}
}

// syrkUpperT computes the upper triangle of C = Aᵀ·A for a row-major n×k
// matrix A (C is k×k), then mirrors it: half the flops of a general product.
func syrkT[T Float](n, k int, a []T, c []T) {
	syrkUpperT(n, k, 1, a, 0, c)
	mirrorUpper(c, k)
}

// syrkUpperT updates the upper triangle of the k×k matrix C to
// alpha·AᵀA + beta·C for a row-major n×k matrix A, leaving the strict lower
// triangle alone.
func syrkUpperT[T Float](n, k int, alpha T, a []T, beta T, c []T) {
	if n == 0 { // BLAS requires lda ≥ 1 rows' worth; AᵀA is zero
		for i := 0; i < k; i++ {
			scaleInPlace(c[i*k+i:(i+1)*k], beta)
		}
		return
	}
	switch a := any(a).(type) {
	case []float32:
		// Row-major Aᵀ·A is column-major A·Aᵀ with A seen as k×n: in gonum's
		// row-major convention that is Syrk(Upper, Trans) on the n×k matrix.
		G.WhichBLAS().Ssyrk(blas.Upper, blas.Trans, k, n, float32(alpha), a, k, float32(beta), any(c).([]float32), k)
	case []float64:
		G.WhichBLAS().Dsyrk(blas.Upper, blas.Trans, k, n, float64(alpha), a, k, float64(beta), any(c).([]float64), k)
	}
}

// mirrorUpper copies the upper triangle of the k×k matrix c to the lower.
func mirrorUpper[T Float](c []T, k int) {
	for i := 0; i < k; i++ {
		for j := i + 1; j < k; j++ {
			c[j*k+i] = c[i*k+j]
		}
	}
}

func scaleInPlace[T Float](x []T, s T) {
	if s == 0 {
		clear(x)
		return
	}
	for i := range x {
		x[i] *= s
	}
}

// BLASThreads is the number of threads a matrix product computes on: what
// the BLAS in use says (a Threads method, as package openblas's has, which
// says -1 when another BLAS library is linked), else GOMAXPROCS, over which
// gonum's Go BLAS spreads its level-3 work.
func BLASThreads() int {
	if t, ok := G.WhichBLAS().(interface{ Threads() int }); ok && t.Threads() >= 1 {
		return t.Threads()
	}
	return runtime.GOMAXPROCS(0)
}
