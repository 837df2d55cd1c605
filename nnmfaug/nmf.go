package nnmfaug

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// nmfEpsilon keeps the multiplicative updates' denominators positive.
const nmfEpsilon = 1e-16

// factorization is W (n × k) and V (k × n), non-negative, with W·V ≈ H·Tᵀ,
// the squared Frobenius error ‖H·Tᵀ − W·V‖² measured every tenth
// iteration (and at the start), and ‖H·Tᵀ‖² (Norm2).
type factorization struct {
	W, V   *mat.Dense
	Errors []float64
	Norm2  float64
	Iters  int
}

// factorize fits W·V to X = H·Tᵀ (H, T: n × m) by Lee and Seung's
// multiplicative updates for the Frobenius norm, from scikit-learn's
// "random" initialisation (entries √(mean X / k)·|N(0, 1)|). Every product
// with X goes through H and T. It stops after maxIter iterations, or once
// ten iterations lower ‖X − W·V‖_F by less than tol times its initial value
// (the rule of scikit-learn's multiplicative-update solver).
func factorize(h, t *mat.Dense, k, maxIter int, tol float64, rng *rand.Rand) factorization {
	n, m := h.Dims()
	// mean X = Σ_r (Σ_i H_ir)(Σ_j T_jr) / n².
	var sum float64
	for r := 0; r < m; r++ {
		sum += mat.Sum(h.ColView(r)) * mat.Sum(t.ColView(r))
	}
	scale := math.Sqrt(sum / float64(n) / float64(n) / float64(k))
	w, v := mat.NewDense(n, k, nil), mat.NewDense(k, n, nil)
	for _, x := range []*mat.Dense{w, v} {
		raw := x.RawMatrix().Data
		for i := range raw {
			raw[i] = scale * math.Abs(rng.NormFloat64())
		}
	}
	// ‖X‖² = tr((HᵀH)(TᵀT)), both m × m.
	var hh, tt mat.Dense
	hh.Mul(h.T(), h)
	tt.Mul(t.T(), t)
	norm2 := elementDot(&hh, &tt)

	var (
		tv   = mat.NewDense(m, k, nil) // Tᵀ·Vᵀ
		xvt  = mat.NewDense(n, k, nil) // X·Vᵀ
		vvt  = mat.NewDense(k, k, nil) // V·Vᵀ
		den  = mat.NewDense(n, k, nil)
		wh   = mat.NewDense(k, m, nil) // Wᵀ·H
		wtx  = mat.NewDense(k, n, nil) // Wᵀ·X
		wtw  = mat.NewDense(k, k, nil)
		denV = mat.NewDense(k, n, nil)
	)
	f := factorization{W: w, V: v, Norm2: norm2}
	var initial, last float64
	for it := 0; it < maxIter; it++ {
		tv.Mul(t.T(), v.T())
		xvt.Mul(h, tv)
		vvt.Mul(v, v.T())
		if it%10 == 0 {
			// ‖X − WV‖² = ‖X‖² − 2·tr(Wᵀ X Vᵀ) + tr((WᵀW)(VVᵀ)).
			wtw.Mul(w.T(), w)
			e := norm2 - 2*elementDot(w, xvt) + elementDot(wtw, vvt)
			f.Errors = append(f.Errors, e)
			norm := math.Sqrt(max(e, 0))
			if it == 0 {
				initial = norm
			} else if (last-norm)/initial < tol {
				f.Iters = it
				return f
			}
			last = norm
		}
		den.Mul(w, vvt)
		multiplicativeUpdate(w, xvt, den)

		wh.Mul(w.T(), h)
		wtx.Mul(wh, t.T())
		wtw.Mul(w.T(), w)
		denV.Mul(wtw, v)
		multiplicativeUpdate(v, wtx, denV)
	}
	f.Iters = maxIter
	return f
}

// multiplicativeUpdate sets x ← x ⊙ num ⊘ (den + ε), entrywise.
func multiplicativeUpdate(x, num, den *mat.Dense) {
	xs, ns, ds := x.RawMatrix().Data, num.RawMatrix().Data, den.RawMatrix().Data
	for i := range xs {
		xs[i] *= ns[i] / (ds[i] + nmfEpsilon)
	}
}

// elementDot is Σ_ij a_ij·b_ij of two matrices of one shape.
func elementDot(a, b *mat.Dense) float64 {
	as, bs := a.RawMatrix().Data, b.RawMatrix().Data
	var s float64
	for i := range as {
		s += as[i] * bs[i]
	}
	return s
}
