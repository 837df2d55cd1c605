package query

import (
	"math"
	"math/rand/v2"
	"testing"

	"gekc/models"
)

// Samples conditioned on a subject follow p(r, o | s): the relation's
// empirical frequencies over 20,000 draws are within 5 standard errors of
// p(r | s), and a constrained model never draws an inconsistent triple.
func TestSampleGivenFollowsConditional(t *testing.T) {
	sz := models.Sizes{Entities: 5, Relations: 3, Rank: 3}
	dom, err := models.NewDomain([]int32{0, 1, 0, 1, 1}, []int32{0, 1, 0}, []int32{1, 0, 1}, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []*models.Domain{nil, dom} {
		m, err := models.New("cp2", sz, models.Options{Seed: 2, InitScale: 0.5})
		if err != nil {
			t.Fatal(err)
		}
		q, err := New(m, d, 8)
		if err != nil {
			t.Fatal(err)
		}
		pr, err := q.Marginal([3]int{0, -1, -1}, models.Relation)
		if err != nil {
			t.Fatal(err)
		}
		const n = 20000
		ts, err := q.SampleGiven([3]int{0, -1, -1}, n, rand.New(rand.NewPCG(1, 2)))
		if err != nil {
			t.Fatal(err)
		}
		count := make([]float64, sz.Relations)
		for _, tr := range ts {
			if tr[0] != 0 {
				t.Fatalf("sample %v does not keep subject 0", tr)
			}
			if d != nil && !d.Consistent(tr[0], tr[1], tr[2]) {
				t.Fatalf("constrained sample %v is inconsistent", tr)
			}
			count[tr[1]]++
		}
		for r, c := range count {
			p := math.Exp(pr[r])
			if se := math.Sqrt(p * (1 - p) / n); math.Abs(c/n-p) > 5*se+1e-12 {
				t.Errorf("constrained %v: relation %d drawn %.4f of the time, p(r | s) = %.4f", d != nil, r, c/n, p)
			}
		}
	}
}

// With the subject free, SampleGiven draws subjects and objects jointly:
// given only the relation, the (s, o) frequencies follow p(s, o | r), and
// given nothing, p(s, r, o), each cell within 5 standard errors of the
// exact probability (by LogJoint over every triple). A sampler that drew
// every object from the first subject's p(o | s, r) keeps the subjects'
// frequencies right but not the pairs'.
func TestSampleGivenFreeSubjectFollowsJoint(t *testing.T) {
	sz := models.Sizes{Entities: 5, Relations: 3, Rank: 3}
	dom, err := models.NewDomain([]int32{0, 1, 0, 1, 1}, []int32{0, 1, 0}, []int32{1, 0, 1}, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []*models.Domain{nil, dom} {
		m, err := models.New("complex2", sz, models.Options{Seed: 4, InitScale: 0.7})
		if err != nil {
			t.Fatal(err)
		}
		q, err := New(m, d, 8)
		if err != nil {
			t.Fatal(err)
		}
		var all [][3]int
		for s := range 5 {
			for r := range 3 {
				for o := range 5 {
					all = append(all, [3]int{s, r, o})
				}
			}
		}
		lj, err := q.LogJoint(all)
		if err != nil {
			t.Fatal(err)
		}
		for _, given := range [][3]int{{Free, 1, Free}, {Free, Free, Free}} {
			const n = 30000
			ts, err := q.SampleGiven(given, n, rand.New(rand.NewPCG(3, uint64(given[1]+2))))
			if err != nil {
				t.Fatal(err)
			}
			count := map[[3]int]float64{}
			for _, tr := range ts {
				count[tr]++
			}
			var z float64
			for i, tr := range all {
				if given[1] == Free || tr[1] == given[1] {
					z += math.Exp(lj[i])
				}
			}
			for i, tr := range all {
				if given[1] != Free && tr[1] != given[1] {
					if count[tr] > 0 {
						t.Fatalf("given relation %d: drew %v", given[1], tr)
					}
					continue
				}
				p := math.Exp(lj[i]) / z
				if se := math.Sqrt(p * (1 - p) / n); math.Abs(count[tr]/n-p) > 5*se+1e-12 {
					t.Errorf("constrained %v, given %v: %v drawn %.4f of the time, exact %.4f", d != nil, given, tr, count[tr]/n, p)
				}
			}
		}
	}
}
