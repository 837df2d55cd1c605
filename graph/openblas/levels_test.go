package openblas

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// Each level-3 routine handed to OpenBLAS computes what gonum's computes,
// for both transposes, sides and triangles: a swapped argument in the
// forwarding would show here.
func TestLevelThreeAgreesWithGonum(t *testing.T) {
	var ours levelThree
	var ref gonum.Implementation
	const m, n, k = 7, 5, 6
	rng := rand.New(rand.NewPCG(1, 2))
	randoms := func(size int) ([]float64, []float32) {
		d, s := make([]float64, size), make([]float32, size)
		for i := range d {
			s[i] = float32(rng.NormFloat64())
			d[i] = float64(s[i])
		}
		return d, s
	}
	// same runs gonum's float64 routine and ours in float64 and float32,
	// each on its own copy of the output's starting contents, and compares.
	same := func(name string, d0 []float64, s0 []float32, refD, oursD func([]float64), oursS func([]float32)) {
		t.Helper()
		want, gotD, got := append([]float64(nil), d0...), append([]float64(nil), d0...), append([]float32(nil), s0...)
		refD(want)
		oursD(gotD)
		oursS(got)
		for i := range want {
			scale := max(1, math.Abs(want[i]))
			if math.Abs(gotD[i]-want[i]) > 1e-12*scale || math.Abs(float64(got[i])-want[i]) > 1e-4*scale {
				t.Fatalf("%s: element %d: float64 %v, float32 %v, gonum %v", name, i, gotD[i], got[i], want[i])
			}
		}
	}
	flip := map[blas.Transpose]blas.Transpose{blas.NoTrans: blas.Trans, blas.Trans: blas.NoTrans}
	// Every matrix has 8 rows of storage, each a different leading
	// dimension, so that a leading dimension forwarded in another's place
	// reads the wrong elements.
	const rows, lda, ldb, ldc = 8, 8, 9, 10
	for _, tr := range []blas.Transpose{blas.NoTrans, blas.Trans} {
		for _, ul := range []blas.Uplo{blas.Upper, blas.Lower} {
			for _, side := range []blas.Side{blas.Left, blas.Right} {
				ad, as := randoms(rows * lda)
				bd, bs := randoms(rows * ldb)
				cd, cs := randoms(rows * ldc)
				name := func(f string) string { return f + "/" + string(rune(tr)) + string(rune(ul)) + string(rune(side)) }

				same(name("gemm"), cd, cs,
					func(c []float64) { ref.Dgemm(tr, flip[tr], m, n, k, 0.7, ad, lda, bd, ldb, 0.3, c, ldc) },
					func(c []float64) { ours.Dgemm(tr, flip[tr], m, n, k, 0.7, ad, lda, bd, ldb, 0.3, c, ldc) },
					func(c []float32) { ours.Sgemm(tr, flip[tr], m, n, k, 0.7, as, lda, bs, ldb, 0.3, c, ldc) })
				same(name("symm"), cd, cs,
					func(c []float64) { ref.Dsymm(side, ul, m, n, 0.7, ad, lda, bd, ldb, 0.3, c, ldc) },
					func(c []float64) { ours.Dsymm(side, ul, m, n, 0.7, ad, lda, bd, ldb, 0.3, c, ldc) },
					func(c []float32) { ours.Ssymm(side, ul, m, n, 0.7, as, lda, bs, ldb, 0.3, c, ldc) })
				same(name("syrk"), cd, cs,
					func(c []float64) { ref.Dsyrk(ul, tr, n, k, 0.7, ad, lda, 0.3, c, ldc) },
					func(c []float64) { ours.Dsyrk(ul, tr, n, k, 0.7, ad, lda, 0.3, c, ldc) },
					func(c []float32) { ours.Ssyrk(ul, tr, n, k, 0.7, as, lda, 0.3, c, ldc) })
				same(name("syr2k"), cd, cs,
					func(c []float64) { ref.Dsyr2k(ul, tr, n, k, 0.7, ad, lda, bd, ldb, 0.3, c, ldc) },
					func(c []float64) { ours.Dsyr2k(ul, tr, n, k, 0.7, ad, lda, bd, ldb, 0.3, c, ldc) },
					func(c []float32) { ours.Ssyr2k(ul, tr, n, k, 0.7, as, lda, bs, ldb, 0.3, c, ldc) })

				// A well-conditioned triangle for the solves, with a unit
				// diagonal too: small off-diagonal elements, a dominant
				// diagonal.
				tri, triS := make([]float64, len(ad)), make([]float32, len(as))
				for i := range rows {
					for j := range lda {
						x := 0.1 * as[i*lda+j]
						if i == j {
							x += 10
						}
						tri[i*lda+j], triS[i*lda+j] = float64(x), x
					}
				}
				for _, diag := range []blas.Diag{blas.NonUnit, blas.Unit} {
					same(name("trmm"), bd, bs,
						func(b []float64) { ref.Dtrmm(side, ul, tr, diag, m, n, 0.7, ad, lda, b, ldb) },
						func(b []float64) { ours.Dtrmm(side, ul, tr, diag, m, n, 0.7, ad, lda, b, ldb) },
						func(b []float32) { ours.Strmm(side, ul, tr, diag, m, n, 0.7, as, lda, b, ldb) })
					same(name("trsm"), bd, bs,
						func(b []float64) { ref.Dtrsm(side, ul, tr, diag, m, n, 0.7, tri, lda, b, ldb) },
						func(b []float64) { ours.Dtrsm(side, ul, tr, diag, m, n, 0.7, tri, lda, b, ldb) },
						func(b []float32) { ours.Strsm(side, ul, tr, diag, m, n, 0.7, triS, lda, b, ldb) })
				}
			}
		}
	}
}
