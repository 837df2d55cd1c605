package metrics

import (
	"errors"
	"math"
	"testing"

	"gekc/internal/logmath"
	"gekc/kg"
	"gekc/models"

	"gorgonia.org/tensor"
)

// The circuit's marginal over a slot equals the log-sum-exp of that slot's
// candidates, and the relations' marginals sum to the partition function,
// for energy-based, non-negative and squared models, unconstrained and (on
// triples the schema admits) constrained.
func TestLogMarginalsMatchCandidates(t *testing.T) {
	sz := models.Sizes{Entities: 5, Relations: 3, Rank: 3}
	// Types 0 1 0 1 1; relations 0 and 2 go 0 → 1, relation 1 goes 1 → 0.
	dom, err := models.NewDomain([]int32{0, 1, 0, 1, 1}, []int32{0, 1, 0}, []int32{1, 0, 1}, 2)
	if err != nil {
		t.Fatal(err)
	}
	triples := []kg.Triple{{S: 0, R: 0, O: 1}, {S: 3, R: 1, O: 2}, {S: 2, R: 2, O: 4}, {S: 0, R: 2, O: 3}}
	for _, name := range []string{"cp", "cp+", "cp2", "complex+", "complex2"} {
		m, err := models.New(name, sz, models.Options{Seed: 3, Dtype: tensor.Float64, InitScale: 0.5})
		if err != nil {
			t.Fatal(err)
		}
		doms := []*models.Domain{nil}
		if m.Semantics != models.Energy {
			doms = append(doms, dom)
		}
		for _, d := range doms {
			ev, err := NewConstrainedEvaluator(m, d, 3)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range models.Vars {
				want := make([]float64, len(triples))
				if err := ev.Candidates(triples, v, func(i int, row []float64) { want[i] = logmath.LogSumExp(row) }); err != nil {
					t.Fatal(err)
				}
				got := make([]float64, len(triples))
				if err := ev.LogMarginals(triples, v, func(i int, lm float64) { got[i] = lm }); err != nil {
					t.Fatal(err)
				}
				for i := range want {
					if !(math.Abs(got[i]-want[i]) <= 1e-10*math.Max(1, math.Abs(want[i]))) {
						t.Errorf("%s (constrained %v): marginal over %v of %v = %v, candidates' log-sum-exp %v", name, d != nil, v, triples[i], got[i], want[i])
					}
				}
			}
			rel, err := ev.RelationLogMarginals()
			if m.Semantics == models.Energy {
				if !errors.Is(err, models.ErrIntractable) {
					t.Errorf("%s: relation marginals of an energy-based model: %v", name, err)
				}
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			lz, err := ev.LogPartition()
			if err != nil {
				t.Fatal(err)
			}
			if got := logmath.LogSumExp(rel); !(math.Abs(got-lz) <= 1e-10*math.Max(1, math.Abs(lz))) {
				t.Errorf("%s (constrained %v): relation marginals sum to log %v, log Z = %v", name, d != nil, got, lz)
			}
		}
	}
}
