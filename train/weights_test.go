package train

import (
	"math"
	"testing"

	"gekc/graph"
	"gekc/kg"
	"gekc/models"
	"gekc/objectives"
)

// Every non-negative PLL weight vector with a positive term trains every
// registered model, constrained GeKCs included: one term alone (the cost a
// bare scaled conditional) once failed to differentiate.
func TestEveryPLLWeightPatternTrainsEveryModel(t *testing.T) {
	sz := models.Sizes{Entities: 6, Relations: 3, Rank: 4}
	dom, err := models.NewDomain([]int32{0, 0, 1, 1, 1, 0}, []int32{0, 1, 0}, []int32{1, 0, 0}, 2)
	if err != nil {
		t.Fatal(err)
	}
	// Consistent with dom: relation 0 maps type 0 → 1, relation 1 type 1 → 0, relation 2 type 0 → 0.
	batch := []kg.Triple{{S: 0, R: 0, O: 2}, {S: 3, R: 1, O: 5}, {S: 1, R: 2, O: 0}}
	for _, name := range models.Names() {
		for mask := 1; mask < 8; mask++ {
			w := objectives.Weights{Subject: float64(mask & 1), Relation: float64(mask >> 1 & 1), Object: 0.5 * float64(mask>>2&1)}
			doms := []*models.Domain{nil}
			if _, sem, _ := models.Lookup(name); sem != models.Energy {
				doms = append(doms, dom)
			}
			for _, d := range doms {
				m, err := models.New(name, sz, models.Options{Seed: 1})
				if err != nil {
					t.Fatal(err)
				}
				st, err := NewConstrainedStepper(m, d, objectives.PLL{Weights: w}, 4, graph.NewAdam(1e-2))
				if err != nil {
					t.Errorf("%s, ω = %+v, constrained %v: %v", name, w, d != nil, err)
					continue
				}
				// A negative log-conditional is ≥ 0; it is 0 when the schema
				// admits one relation only for a pair's types.
				loss, err := st.Step(batch)
				if err != nil || math.IsNaN(loss) || math.IsInf(loss, 0) || loss < -1e-6 {
					t.Errorf("%s, ω = %+v, constrained %v: loss %v, %v", name, w, d != nil, loss, err)
				}
			}
		}
	}
}
