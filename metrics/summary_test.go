package metrics

import (
	"slices"
	"testing"
)

// Every field of a Ranking against ranks worked out by hand: MRR per side
// over that side's ranks, MRR and Hits@k over both sides together.
func TestSummariseEveryField(t *testing.T) {
	subj, obj := []float64{1, 2, 4}, []float64{4, 8, 1.5}
	r := summarise(subj, obj, []int{1, 2, 4}, 2)
	want := Ranking{
		N:          6,
		MRR:        (1 + 0.5 + 0.25 + 0.25 + 0.125 + 1/1.5) / 6,
		MRRSubject: (1 + 0.5 + 0.25) / 3,
		MRRObject:  (0.25 + 0.125 + 1/1.5) / 3,
		Hits:       map[int]float64{1: 1.0 / 6, 2: 3.0 / 6, 4: 5.0 / 6},
		NonFinite:  2,
	}
	near := func(a, b float64) bool { return a-b < 1e-15 && b-a < 1e-15 }
	if r.N != want.N || r.NonFinite != want.NonFinite || !near(r.MRR, want.MRR) ||
		!near(r.MRRSubject, want.MRRSubject) || !near(r.MRRObject, want.MRRObject) {
		t.Errorf("summarise: N %d, non-finite %d, MRR %v (subject %v, object %v); want %d, %d, %v (%v, %v)",
			r.N, r.NonFinite, r.MRR, r.MRRSubject, r.MRRObject, want.N, want.NonFinite, want.MRR, want.MRRSubject, want.MRRObject)
	}
	for k, h := range want.Hits {
		if !near(r.Hits[k], h) {
			t.Errorf("Hits@%d = %v, want %v", k, r.Hits[k], h)
		}
	}
	if !slices.Equal(r.SubjectRanks, subj) || !slices.Equal(r.ObjectRanks, obj) {
		t.Errorf("ranks %v / %v, want %v / %v", r.SubjectRanks, r.ObjectRanks, subj, obj)
	}
}
