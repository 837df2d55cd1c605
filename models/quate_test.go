package models

import (
	"math"
	"slices"
	"strings"
	"testing"
)

func init() { references["quate"], moduli["quate"] = refQuatE, 4 }

// refQuatE: φ = ⟨s ⊗ r, o⟩ with the Hamilton product written out from
// i² = j² = k² = ijk = −1; the non-negative model's rows are
// [log a | θ_i | θ_j | θ_k] with parts a, 0.45·a·σ(θ).
func refQuatE(p refParams, s, r, o int) float64 {
	e, w, d := p.table("entity"), p.table("relation"), p.rank()
	quat := func(tab []float64, row, c int) [4]float64 {
		var q [4]float64
		for part := range 4 {
			q[part] = tab[row*4*d+part*d+c]
		}
		if p.m.Semantics == NonNegative {
			a := math.Exp(q[0])
			q = [4]float64{a, 0.45 * a / (1 + math.Exp(-q[1])), 0.45 * a / (1 + math.Exp(-q[2])), 0.45 * a / (1 + math.Exp(-q[3]))}
		}
		return q
	}
	var phi float64
	for c := range d {
		x, y, z := quat(e, s, c), quat(w, r, c), quat(e, o, c)
		prod := [4]float64{
			x[0]*y[0] - x[1]*y[1] - x[2]*y[2] - x[3]*y[3],
			x[0]*y[1] + x[1]*y[0] + x[2]*y[3] - x[3]*y[2],
			x[0]*y[2] - x[1]*y[3] + x[2]*y[0] + x[3]*y[1],
			x[0]*y[3] + x[1]*y[2] - x[2]*y[1] + x[3]*y[0],
		}
		for i := range 4 {
			phi += prod[i] * z[i]
		}
	}
	return phi
}

// A multilinear score without a proven restriction declines the
// non-negative semantics: Lookup says why and Names leaves the name out.
func TestDecliningScore(t *testing.T) {
	registry["declining"] = func() ScoreFunction { return decliningScore{QuatE{Multilinear{Parts: 4, Terms: hamilton}}} }
	defer delete(registry, "declining")
	if _, _, err := Lookup("declining+"); err == nil || !strings.Contains(err.Error(), "no non-negative form") {
		t.Errorf("declining+: %v, want an error saying it has no non-negative form", err)
	}
	for _, name := range []string{"declining", "declining2"} {
		if _, _, err := Lookup(name); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	names := Names()
	if slices.Contains(names, "declining+") || !slices.Contains(names, "declining2") {
		t.Errorf("Names() = %v: want declining2 and not declining+", names)
	}
}

type decliningScore struct{ QuatE }

func (decliningScore) Name() string { return "declining" }
