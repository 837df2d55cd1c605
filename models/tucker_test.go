package models

func init() { references["tucker"] = refTuckER }

// refTuckER: φ = Σ_ijk W_ijk·e_si·w_rj·e_ok.
func refTuckER(p refParams, s, r, o int) float64 {
	e, w, core, d, dr := p.table("entity"), p.table("relation"), p.table("core"), p.rank(), p.relRank()
	var phi float64
	for i := 0; i < d; i++ {
		for j := 0; j < dr; j++ {
			for k := 0; k < d; k++ {
				phi += p.val(core[i*dr*d+j*d+k]) * p.val(e[s*d+i]) * p.val(w[r*dr+j]) * p.val(e[o*d+k])
			}
		}
	}
	return phi
}
