package models

func init() { references["rescal"] = refRESCAL }

// refRESCAL: φ = e_sᵀ W_r e_o.
func refRESCAL(p refParams, s, r, o int) float64 {
	e, w, d := p.table("entity"), p.table("relation"), p.rank()
	var phi float64
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			phi += p.val(e[s*d+i]) * p.val(w[r*d*d+i*d+j]) * p.val(e[o*d+j])
		}
	}
	return phi
}
