package models

func init() { references["simple"] = refSimplE }

// refSimplE: φ = ½ Σ_i (h_si·v_ri·t_oi + h_oi·v⁻¹_ri·t_si), with entity rows
// [h | t] and relation rows [v | v⁻¹].
func refSimplE(p refParams, s, r, o int) float64 {
	e, w, d := p.table("entity"), p.table("relation"), p.rank()
	h := func(x, i int) float64 { return p.val(e[x*2*d+i]) }
	t := func(x, i int) float64 { return p.val(e[x*2*d+d+i]) }
	var phi float64
	for i := 0; i < d; i++ {
		phi += h(s, i)*p.val(w[r*2*d+i])*t(o, i) + h(o, i)*p.val(w[r*2*d+d+i])*t(s, i)
	}
	return phi / 2
}
