package models

import (
	"math"
	"testing"
)

// The product units a score declares for the kernel triple distance are
// the terms of its sum: added up (ComplEx's last quarter, the term
// im_s·im_r·re_o, with weight −1), they give φ(s, r, o) as the independent
// reference evaluates it.
func TestProductUnitsSumToScore(t *testing.T) {
	for _, name := range Names() {
		base, sem, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		pu, ok := base.(ProductUnitScore)
		if !ok || sem == NonNegative {
			continue
		}
		t.Run(name, func(t *testing.T) {
			m := newTiny(t, name, 3)
			n := pu.ProductUnits(m.Sizes)
			negative := 0
			if nn, ok := base.(interface{ Negative(Var, int) int }); ok {
				negative = nn.Negative(Object, n)
			}
			lay := m.Layout
			row := func(table string, i int) []float64 {
				x := m.Param(table).Data().([]float64)
				w := m.Param(table).Shape()[1]
				return x[i*w : (i+1)*w]
			}
			units := make([]float64, n)
			for s := 0; s < m.Sizes.Entities; s++ {
				for r := 0; r < m.Sizes.Relations; r++ {
					for o := 0; o < m.Sizes.Entities; o++ {
						pu.ProductUnitValues(m.Sizes, row(lay.Subject, s), row(lay.Relation, r), row(lay.Object, o), units)
						var sum float64
						for j, v := range units {
							if j >= n-negative {
								v = -v
							}
							sum += v
						}
						want := refScore(m, s, r, o)
						if got := sum; math.Abs(got-want) > 1e-9*max(1, math.Abs(want)) {
							t.Fatalf("(%d,%d,%d): units sum to %v, φ = %v", s, r, o, got, want)
						}
					}
				}
			}
		})
	}
}
