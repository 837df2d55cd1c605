package models

func init() { references["distmult"] = refDistMult }

// refDistMult: φ = Σ_i e_si·w_ri·e_oi, one entity table for both roles.
func refDistMult(p refParams, s, r, o int) float64 {
	e, w, d := p.table("entity"), p.table("relation"), p.rank()
	var phi float64
	for i := 0; i < d; i++ {
		phi += p.val(e[s*d+i]) * p.val(w[r*d+i]) * p.val(e[o*d+i])
	}
	return phi
}
