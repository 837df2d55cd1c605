package synth

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gekc/kg"
	"gekc/models"
)

// A typed planted graph written in OGB's layout loads with the ids, triples
// and entities of the same draw written as text, and with negatives as
// OGB's: k per triple and side, distinct, of the replaced entity's type,
// never the answer nor a triple of any split; writing it again gives the
// same bytes.
func TestWriteOGBOfAPlantedGraph(t *testing.T) {
	root := t.TempDir()
	types, schemaFile := filepath.Join(root, "types.tsv"), filepath.Join(root, "schema.tsv")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(types, []byte("type\tcount\nprotein\t20\ndrug\t10\n"), 0o644))
	must(os.WriteFile(schemaFile, []byte("relation\thead\ttail\ndrug-protein\tdrug\tprotein\nprotein-protein\tprotein\tprotein\n"), 0o644))
	shape, err := ReadShape(types, schemaFile, 1)
	must(err)
	schema, err := shape.Schema()
	must(err)
	dom, err := models.DomainFromSchema(schema)
	must(err)
	m, err := Planted("complex2", models.Sizes{Entities: shape.Entities(), Relations: shape.NumRelations(), Rank: 3}, 4, 0, 0)
	must(err)
	s, err := NewSampler(m, dom)
	must(err)
	d, err := DrawSplits(s, Splits{Train: 60, Valid: 10, Test: 10}, Distinct, Support(m.Sizes, schema), 4)
	must(err)

	text, ogb := filepath.Join(root, "text"), filepath.Join(root, "ogb")
	must(WriteSplits(text, d, shape.Names(), false))
	must(shape.WriteSchema(text, d))
	const k = 3
	o := OGB{Entities: shape.Entities(), Relations: shape.NumRelations(), Names: shape.Names(), Schema: schema, Negatives: k, Seed: 9}
	tooMany := o
	tooMany.Negatives = 9 // a drug's 10 less itself and its known answers
	if _, err := WriteOGB(filepath.Join(root, "no"), d, tooMany); err == nil || !strings.Contains(err.Error(), "candidates for 9 negatives") {
		t.Errorf("9 negatives among 10 drugs: %v", err)
	}
	kept, err := WriteOGB(ogb, d, o)
	must(err)
	if !kept {
		t.Error("WriteOGB says the ids change, though types sort as their entities do")
	}
	want, err := kg.Load(text)
	must(err)
	got, err := kg.Load(ogb)
	must(err)
	if got.Negatives == nil || !got.Synthetic || got.Entities.Len() != 30 {
		t.Fatalf("OGB layout loaded with negatives %v, synthetic %v, %d entities", got.Negatives != nil, got.Synthetic, got.Entities.Len())
	}
	for i, c := range [][2][]kg.Triple{{got.Train, want.Train}, {got.Valid, want.Valid}, {got.Test, want.Test}} {
		if !slices.Equal(c[0], c[1]) {
			t.Errorf("split %d: OGB layout %v, text %v", i, c[0], c[1])
		}
	}
	for e := range int32(30) {
		if got.Schema.EntityType[e] != want.Schema.EntityType[e] {
			t.Errorf("entity %d: type %d in OGB's layout, %d as text", e, got.Schema.EntityType[e], want.Schema.EntityType[e])
		}
	}
	known := kg.NewFilter(got.Train, got.Valid, got.Test)
	for _, c := range []struct {
		ts      []kg.Triple
		rows    [][]int32
		subject bool
	}{{got.Valid, got.Negatives.ValidHead, true}, {got.Valid, got.Negatives.ValidTail, false},
		{got.Test, got.Negatives.TestHead, true}, {got.Test, got.Negatives.TestTail, false}} {
		for i, tr := range c.ts {
			row := slices.Clone(c.rows[i])
			if slices.Sort(row); len(slices.Compact(row)) != k {
				t.Fatalf("%v: negatives %v, want %d distinct", tr, c.rows[i], k)
			}
			for _, e := range row {
				corrupt := kg.Triple{S: tr.S, R: tr.R, O: e}
				if c.subject {
					corrupt = kg.Triple{S: e, R: tr.R, O: tr.O}
				}
				if !got.Schema.Consistent(corrupt) || known.Contains(corrupt) {
					t.Errorf("%v: negative %v breaks the schema or is known", tr, corrupt)
				}
			}
		}
	}
	again := filepath.Join(root, "again")
	_, err = WriteOGB(again, d, o)
	must(err)
	for _, f := range []string{"valid.pt", "test.pt"} {
		a, err := os.ReadFile(filepath.Join(ogb, "split", "random", f))
		must(err)
		b, err := os.ReadFile(filepath.Join(again, "split", "random", f))
		must(err)
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs between two writes of one draw", f)
		}
	}
	// Text written over the OGB layout is what loads next.
	must(WriteSplits(ogb, d, shape.Names(), false))
	must(shape.WriteSchema(ogb, d))
	if back, err := kg.Load(ogb); err != nil || back.Negatives != nil {
		t.Errorf("text over OGB's layout: %v, negatives %v", err, back != nil && back.Negatives != nil)
	}
}
