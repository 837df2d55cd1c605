package models

import (
	"slices"
	"testing"

	"gorgonia.org/tensor"
)

// TestNewPartMatchesNew: every registered model's parts, for any split of
// the entities, hold New's values, including squared models' entity tables
// drawn in chunks (more rows than a chunk here).
func TestNewPartMatchesNew(t *testing.T) {
	sz := Sizes{Entities: partChunk + 37, Relations: 3, Rank: 2}
	opt := Options{Seed: 4, Dtype: tensor.Float64}
	for _, name := range Names() {
		m, err := New(name, sz, opt)
		if err != nil {
			t.Fatal(err)
		}
		for _, cut := range [][2]int{{0, sz.Entities}, {0, 5}, {partChunk - 1, partChunk + 2}, {sz.Entities - 1, sz.Entities}} {
			_, part, err := NewPart(name, sz, opt, cut[0], cut[1])
			if err != nil {
				t.Fatal(err)
			}
			for _, tb := range m.Layout.Tables {
				want := m.Param(tb.Name).Data().([]float64)
				if slices.Contains(m.Layout.EntityTables(), tb.Name) {
					want = want[cut[0]*tb.Cols : cut[1]*tb.Cols]
				}
				if got := part[tb.Name].Data().([]float64); !slices.Equal(got, want) {
					t.Errorf("%s rows %v: table %s differs from New's", name, cut, tb.Name)
				}
			}
		}
	}
}
