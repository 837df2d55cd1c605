package models

import (
	"math"
	"math/cmplx"
)

func init() { references["complex"], moduli["complex"] = refComplEx, 2 }

// refComplEx: φ = Re Σ_i e_si·w_ri·conj(e_oi) in complex128 arithmetic;
// the non-negative model's rows are [log Re | θ] with Im = Re·σ(θ).
func refComplEx(p refParams, s, r, o int) float64 {
	e, w, d := p.table("entity"), p.table("relation"), p.rank()
	c := func(tab []float64, row int, i int) complex128 {
		re, im := tab[row*2*d+i], tab[row*2*d+d+i]
		if p.m.Semantics == NonNegative {
			return complex(math.Exp(re), math.Exp(re)/(1+math.Exp(-im)))
		}
		return complex(re, im)
	}
	var phi complex128
	for i := 0; i < d; i++ {
		phi += c(e, s, i) * c(w, r, i) * cmplx.Conj(c(e, o, i))
	}
	return real(phi)
}
