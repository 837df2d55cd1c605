package models

import (
	"errors"
	"math"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Sizes and types out of range are refused, not built into a model or a
// constraint that indexes past its tables.
func TestConstructorsRejectOutOfRange(t *testing.T) {
	for _, sz := range []Sizes{{Entities: 0, Relations: 1, Rank: 1}, {Entities: 2, Relations: 0, Rank: 1}, {Entities: 2, Relations: 1, Rank: 0}} {
		if _, err := New("cp", sz, Options{}); err == nil {
			t.Errorf("New with sizes %+v accepted", sz)
		}
	}
	for _, c := range []struct {
		ent, subj, obj []int32
	}{
		{[]int32{0, 2}, []int32{0}, []int32{1}},  // an entity of type 2 with 2 types
		{[]int32{0, 1}, []int32{2}, []int32{1}},  // a relation requiring type 2
		{[]int32{0, -1}, []int32{0}, []int32{1}}, // a negative type
		{[]int32{0, 1}, []int32{0}, []int32{}},   // schemas of different lengths
	} {
		if _, err := NewDomain(c.ent, c.subj, c.obj, 2); err == nil {
			t.Errorf("NewDomain(%v, %v, %v, 2) accepted", c.ent, c.subj, c.obj)
		}
	}
}

// Scale in the log semiring is a shift by log c, defined for a finite
// c > 0 only: 0 would shift by −Inf (every score −Inf), a negative or NaN c
// has no logarithm (NaN scores), +Inf shifts by +Inf. Each is refused as
// non-monotone instead of built into a query.
func TestLogScaleRejectsNonPositive(t *testing.T) {
	x := G.NewMatrix(G.NewGraph(), tensor.Float64, G.WithShape(1, 2), G.WithName("x"))
	if _, err := Log.Scale(x, 0.5); err != nil {
		t.Fatalf("Log.Scale(x, 0.5): %v", err)
	}
	for _, c := range []float64{0, -0.5, math.NaN(), math.Inf(1)} {
		if n, err := Log.Scale(x, c); !errors.Is(err, ErrNotMonotone) {
			t.Errorf("Log.Scale(x, %v) = %v, %v; want ErrNotMonotone", c, n, err)
		}
	}
}
