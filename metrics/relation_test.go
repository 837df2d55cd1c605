package metrics

import (
	"math"
	"testing"

	"gekc/kg"
	"gekc/models"
)

// RankRelations equals the filtered rank of the true relation recomputed
// from every candidate triple's own log-score, under every tie policy, for
// energy models, GeKCs and constrained GeKCs; a constrained model ranks
// only the relations its schema admits for the pair's types.
func TestRankRelationsMatchesEnumeration(t *testing.T) {
	sz := models.Sizes{Entities: 8, Relations: 5, Rank: 3}
	// Types: entities alternate 0, 1. Relations 0, 1, 3, 4 go 0 → 1, relation 2 goes 1 → 0.
	dom, err := models.NewDomain([]int32{0, 1, 0, 1, 0, 1, 0, 1}, []int32{0, 0, 1, 0, 0}, []int32{1, 1, 0, 1, 1}, 2)
	if err != nil {
		t.Fatal(err)
	}
	test := []kg.Triple{{S: 0, R: 1, O: 1}, {S: 2, R: 0, O: 3}, {S: 5, R: 2, O: 4}, {S: 6, R: 3, O: 7}, {S: 0, R: 4, O: 3}}
	known := append([]kg.Triple{{S: 0, R: 0, O: 1}, {S: 6, R: 1, O: 7}, {S: 2, R: 3, O: 3}}, test...)
	filter := kg.NewFilter(known)
	hits := []int{1, 2, 3}
	for _, name := range []string{"cp", "complex", "cp2", "complex2", "rescal2", "cp+", "complex+", "tucker+"} {
		m := mustModel(t, name, sz)
		// Relations 1, 3 and 4 get the same parameters: their scores tie
		// exactly, which is where the tie policies differ.
		for _, tab := range m.ParamNames() {
			if tab != m.Layout.Relation {
				continue
			}
			p := m.Param(tab)
			cols := p.Shape()[1]
			x := p.Data().([]float64)
			copy(x[3*cols:4*cols], x[1*cols:2*cols])
			copy(x[4*cols:5*cols], x[1*cols:2*cols])
		}
		doms := []*models.Domain{nil}
		if m.Semantics != models.Energy {
			doms = append(doms, dom)
		}
		for _, d := range doms {
			ev, err := NewConstrainedEvaluator(m, d, 2)
			if err != nil {
				t.Fatal(err)
			}
			score := func(tr kg.Triple) float64 {
				var v float64
				if err := ev.LogScores([]kg.Triple{tr}, func(_ int, s float64) { v = s }); err != nil {
					t.Fatal(err)
				}
				return v
			}
			ties := 0
			for p := Pessimistic; p <= Optimistic; p++ {
				got, err := ev.RankRelations(test, filter, p, hits)
				if err != nil {
					t.Fatal(err)
				}
				var mrr float64
				wantHits := map[int]float64{}
				for i, tr := range test {
					target := score(tr)
					greater, equal := 0, 0
					for r := int32(0); r < int32(sz.Relations); r++ {
						alt := tr
						alt.R = r
						if r == tr.R || filter.Contains(alt) {
							continue
						}
						if d != nil && !d.Consistent(int(alt.S), int(alt.R), int(alt.O)) {
							if s := score(alt); !math.IsInf(s, -1) {
								t.Fatalf("%s: constrained log-score of inconsistent %v = %v", name, alt, s)
							}
							continue
						}
						switch s := score(alt); {
						case math.Abs(s-target) <= 1e-12:
							equal++
						case s > target:
							greater++
						}
					}
					ties += equal
					want := [...]float64{float64(1 + greater + equal), 1 + float64(greater) + float64(equal)/2, float64(1 + greater)}[p]
					if got.Ranks[i] != want {
						t.Errorf("%s constrained=%v %v: rank of %v = %v, want %v (%d greater, %d tied)", name, d != nil, p, tr, got.Ranks[i], want, greater, equal)
					}
					mrr += 1 / want / float64(len(test))
					for _, k := range hits {
						if want <= float64(k) {
							wantHits[k] += 1 / float64(len(test))
						}
					}
				}
				if math.Abs(got.MRR-mrr) > 1e-12 || got.N != len(test) {
					t.Errorf("%s constrained=%v %v: MRR %v over %d, want %v over %d", name, d != nil, p, got.MRR, got.N, mrr, len(test))
				}
				for _, k := range hits {
					if math.Abs(got.Hits[k]-wantHits[k]) > 1e-12 {
						t.Errorf("%s constrained=%v %v: Hits@%d %v, want %v", name, d != nil, p, k, got.Hits[k], wantHits[k])
					}
				}
			}
			if ties == 0 {
				t.Errorf("%s constrained=%v: no tied candidate: the tie policies went untested", name, d != nil)
			}
		}
	}
}
