package models

func init() { references["cp"] = refCP }

// refCP: φ = Σ_i u_si·w_ri·v_oi.
func refCP(p refParams, s, r, o int) float64 {
	u, w, v, d := p.table("subject"), p.table("relation"), p.table("object"), p.rank()
	var phi float64
	for i := 0; i < d; i++ {
		phi += p.val(u[s*d+i]) * p.val(w[r*d+i]) * p.val(v[o*d+i])
	}
	return phi
}
