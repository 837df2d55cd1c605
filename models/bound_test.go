package models

import (
	"slices"
	"testing"

	"gekc/kg"
)

func TestBoundBatchLoad(t *testing.T) {
	m, err := New("cp", Sizes{Entities: 5, Relations: 2, Rank: 2}, Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	bb, err := m.BindBatch(nil, 3)
	if err != nil {
		t.Fatal(err)
	}
	if got := bb.Batch.Size(); got != 3 {
		t.Fatalf("batch size %d, want 3", got)
	}
	pad := kg.Triple{S: 4, R: 1, O: 2}
	for _, tc := range []struct {
		name    string
		ts      []kg.Triple
		n       int
		s, r, o []int
	}{
		{"short", []kg.Triple{{S: 1, R: 0, O: 3}}, 1, []int{1, 4, 4}, []int{0, 1, 1}, []int{3, 2, 2}},
		{"full", []kg.Triple{{S: 1, R: 0, O: 3}, {S: 2, R: 1, O: 0}, {S: 0, R: 0, O: 1}}, 3, []int{1, 2, 0}, []int{0, 1, 0}, []int{3, 0, 1}},
		{"longer", []kg.Triple{{S: 3, R: 1, O: 3}, {S: 2, R: 1, O: 0}, {S: 0, R: 0, O: 1}, {S: 4, R: 0, O: 4}}, 3, []int{3, 2, 0}, []int{1, 1, 0}, []int{3, 0, 1}},
		{"empty", nil, 0, []int{4, 4, 4}, []int{1, 1, 1}, []int{2, 2, 2}},
	} {
		if n := bb.Load(tc.ts, pad); n != tc.n || !slices.Equal(bb.S, tc.s) || !slices.Equal(bb.R, tc.r) || !slices.Equal(bb.O, tc.o) {
			t.Errorf("%s: Load = %d with s %v r %v o %v, want %d with %v %v %v", tc.name, n, bb.S, bb.R, bb.O, tc.n, tc.s, tc.r, tc.o)
		}
	}
}
