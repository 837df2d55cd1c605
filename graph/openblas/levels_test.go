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
	check := func(name string, got []float32, gotD, want []float64) {
		t.Helper()
		for i := range want {
			scale := max(1, math.Abs(want[i]))
			if math.Abs(gotD[i]-want[i]) > 1e-12*scale || math.Abs(float64(got[i])-want[i]) > 1e-4*scale {
				t.Fatalf("%s: element %d: float64 %v, float32 %v, gonum %v", name, i, gotD[i], got[i], want[i])
			}
		}
	}
	flip := map[blas.Transpose]blas.Transpose{blas.NoTrans: blas.Trans, blas.Trans: blas.NoTrans}
	const big = 8 // every matrix is big×big storage: any shape and lda fit
	for _, tr := range []blas.Transpose{blas.NoTrans, blas.Trans} {
		for _, ul := range []blas.Uplo{blas.Upper, blas.Lower} {
			for _, side := range []blas.Side{blas.Left, blas.Right} {
				ad, as := randoms(big * big)
				bd, bs := randoms(big * big)
				cd, cs := randoms(big * big)
				want := append([]float64(nil), cd...)
				name := func(f string) string { return f + "/" + string(rune(tr)) + string(rune(ul)) + string(rune(side)) }

				ref.Dgemm(tr, flip[tr], m, n, k, 0.7, ad, big, bd, big, 0.3, want, big)
				gotD, got := append([]float64(nil), cd...), append([]float32(nil), cs...)
				ours.Dgemm(tr, flip[tr], m, n, k, 0.7, ad, big, bd, big, 0.3, gotD, big)
				ours.Sgemm(tr, flip[tr], m, n, k, 0.7, as, big, bs, big, 0.3, got, big)
				check(name("gemm"), got, gotD, want)

				want = append(want[:0], cd...)
				ref.Dsymm(side, ul, m, n, 0.7, ad, big, bd, big, 0.3, want, big)
				gotD, got = append(gotD[:0], cd...), append(got[:0], cs...)
				ours.Dsymm(side, ul, m, n, 0.7, ad, big, bd, big, 0.3, gotD, big)
				ours.Ssymm(side, ul, m, n, 0.7, as, big, bs, big, 0.3, got, big)
				check(name("symm"), got, gotD, want)

				want = append(want[:0], cd...)
				ref.Dsyrk(ul, tr, n, k, 0.7, ad, big, 0.3, want, big)
				gotD, got = append(gotD[:0], cd...), append(got[:0], cs...)
				ours.Dsyrk(ul, tr, n, k, 0.7, ad, big, 0.3, gotD, big)
				ours.Ssyrk(ul, tr, n, k, 0.7, as, big, 0.3, got, big)
				check(name("syrk"), got, gotD, want)

				want = append(want[:0], cd...)
				ref.Dsyr2k(ul, tr, n, k, 0.7, ad, big, bd, big, 0.3, want, big)
				gotD, got = append(gotD[:0], cd...), append(got[:0], cs...)
				ours.Dsyr2k(ul, tr, n, k, 0.7, ad, big, bd, big, 0.3, gotD, big)
				ours.Ssyr2k(ul, tr, n, k, 0.7, as, big, bs, big, 0.3, got, big)
				check(name("syr2k"), got, gotD, want)

				for _, diag := range []blas.Diag{blas.NonUnit, blas.Unit} {
					want = append(want[:0], bd...)
					ref.Dtrmm(side, ul, tr, diag, m, n, 0.7, ad, big, want, big)
					gotD, got = append(gotD[:0], bd...), append(got[:0], bs...)
					ours.Dtrmm(side, ul, tr, diag, m, n, 0.7, ad, big, gotD, big)
					ours.Strmm(side, ul, tr, diag, m, n, 0.7, as, big, got, big)
					check(name("trmm"), got, gotD, want)

					// A well-conditioned triangle for the solve: a dominant diagonal.
					tri, triS := append([]float64(nil), ad...), append([]float32(nil), as...)
					for i := 0; i < big; i++ {
						tri[i*big+i] += 10
						triS[i*big+i] += 10
					}
					want = append(want[:0], bd...)
					ref.Dtrsm(side, ul, tr, diag, m, n, 0.7, tri, big, want, big)
					gotD, got = append(gotD[:0], bd...), append(got[:0], bs...)
					ours.Dtrsm(side, ul, tr, diag, m, n, 0.7, tri, big, gotD, big)
					ours.Strsm(side, ul, tr, diag, m, n, 0.7, triS, big, got, big)
					check(name("trsm"), got, gotD, want)
				}
			}
		}
	}
}
