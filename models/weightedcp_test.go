package models

func init() { references["wcp"], constantTables["wcp.weight"] = refWeightedCP, true }

// refWeightedCP: φ = Σ_i a_i·u_si·w_ri·v_oi, the WeightedCP that the
// package example (example_test.go) defines and registers.
func refWeightedCP(p refParams, s, r, o int) float64 {
	u, w, v, a, d := p.table("subject"), p.table("relation"), p.table("object"), p.table("weight"), p.rank()
	var phi float64
	for i := 0; i < d; i++ {
		phi += p.val(a[i]) * p.val(u[s*d+i]) * p.val(w[r*d+i]) * p.val(v[o*d+i])
	}
	return phi
}
