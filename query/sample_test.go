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
