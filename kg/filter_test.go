package kg

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

func TestFilter(t *testing.T) {
	train := []Triple{{0, 0, 1}, {0, 0, 2}, {0, 1, 2}, {3, 0, 1}, {0, 0, 1}}
	test := []Triple{{0, 0, 5}, {4, 2, 0}}
	f := NewFilter(train, test)
	for _, tc := range []struct {
		name      string
		got, want []int32
	}{
		{"objects of (0, 0)", f.Objects(0, 0), []int32{1, 2, 5}},
		{"objects of (0, 1)", f.Objects(0, 1), []int32{2}},
		{"objects of (1, 0)", f.Objects(1, 0), nil},
		{"objects of unknown subject", f.Objects(99, 0), nil},
		{"objects of negative subject", f.Objects(-1, 0), nil},
		{"subjects of (0, 1)", f.Subjects(0, 1), []int32{0, 3}},
		{"subjects of (2, 0)", f.Subjects(2, 0), []int32{4}},
		{"subjects of unknown relation", f.Subjects(7, 0), nil},
		{"relations of (0, 2)", f.Relations(0, 2), []int32{0, 1}},
		{"relations of (4, 0)", f.Relations(4, 0), []int32{2}},
		{"relations of (2, 0)", f.Relations(2, 0), nil},
	} {
		if !reflect.DeepEqual(tc.got, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, tc.got, tc.want)
		}
	}
	for _, tr := range slices.Concat(train, test) {
		if !f.Contains(tr) {
			t.Errorf("does not contain %v", tr)
		}
	}
	for _, tr := range []Triple{{0, 0, 3}, {1, 0, 1}, {0, 3, 1}, {-1, 0, 1}, {0, -1, 1}} {
		if f.Contains(tr) {
			t.Errorf("contains %v", tr)
		}
	}
	if f.Len() != 6 {
		t.Errorf("Len %d, want 6 distinct triples", f.Len())
	}

	// Appending to a result must not change the filter.
	objs := f.Objects(0, 0)
	_ = append(objs, 42)
	if got := f.Objects(0, 1); !reflect.DeepEqual(got, []int32{2}) {
		t.Errorf("append to a result changed the next pair: %v", got)
	}
}

func TestFilterEmpty(t *testing.T) {
	f := NewFilter()
	if f.Objects(0, 0) != nil || f.Contains(Triple{}) || f.Len() != 0 {
		t.Error("empty filter knows something")
	}
}

// TestFilterMatchesBruteForce compares every lookup with a scan of the
// triples, on random graphs dense enough to have many repeats.
func TestFilterMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 20 {
		ne, nr := 1+rng.IntN(12), 1+rng.IntN(4)
		ts := make([]Triple, rng.IntN(200))
		for i := range ts {
			ts[i] = Triple{rng.Int32N(int32(ne)), rng.Int32N(int32(nr)), rng.Int32N(int32(ne))}
		}
		f := NewFilter(ts[:len(ts)/2], ts[len(ts)/2:])
		scan := func(keep func(Triple) bool, pick func(Triple) int32) []int32 {
			var out []int32
			for _, t := range ts {
				if keep(t) {
					out = append(out, pick(t))
				}
			}
			slices.Sort(out)
			return slices.Compact(out)
		}
		for a := int32(-1); a <= int32(ne); a++ {
			for b := int32(-1); b <= int32(max(ne, nr)); b++ {
				want := scan(func(t Triple) bool { return t.S == a && t.R == b }, func(t Triple) int32 { return t.O })
				if got := f.Objects(a, b); !equalIDs(got, want) {
					t.Fatalf("trial %d: Objects(%d, %d) = %v, want %v", trial, a, b, got, want)
				}
				want = scan(func(t Triple) bool { return t.R == a && t.O == b }, func(t Triple) int32 { return t.S })
				if got := f.Subjects(a, b); !equalIDs(got, want) {
					t.Fatalf("trial %d: Subjects(%d, %d) = %v, want %v", trial, a, b, got, want)
				}
				want = scan(func(t Triple) bool { return t.S == a && t.O == b }, func(t Triple) int32 { return t.R })
				if got := f.Relations(a, b); !equalIDs(got, want) {
					t.Fatalf("trial %d: Relations(%d, %d) = %v, want %v", trial, a, b, got, want)
				}
			}
		}
	}
}

func equalIDs(a, b []int32) bool { return len(a) == len(b) && (len(a) == 0 || slices.Equal(a, b)) }

// syntheticTriples returns n random triples shaped like ogbl-biokg.
func syntheticTriples(n int) []Triple {
	rng := rand.New(rand.NewPCG(3, 4))
	ts := make([]Triple, n)
	for i := range ts {
		ts[i] = Triple{rng.Int32N(93773), rng.Int32N(51), rng.Int32N(93773)}
	}
	return ts
}

// BenchmarkNewFilterBioKGSize builds a filter of ogbl-biokg's size, five
// million triples; the reported B/op is its footprint plus the transient
// sort buffers.
func BenchmarkNewFilterBioKGSize(b *testing.B) {
	ts := syntheticTriples(5_088_434)
	b.ReportAllocs()
	for b.Loop() {
		NewFilter(ts)
	}
}

func BenchmarkFilterObjects(b *testing.B) {
	ts := syntheticTriples(1_000_000)
	f := NewFilter(ts)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		t := ts[i%len(ts)]
		f.Objects(t.S, t.R)
	}
}
