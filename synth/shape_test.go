package synth

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gekc/kg"
	"gekc/models"
)

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A typed shape read from files plants a constrained graph whose files the
// loader reads back with the planted ids and types: every triple drawn
// under the shape's schema is type-consistent, the loaded schema is the
// planted one, and the counts are scaled as asked.
func TestTypedShapeRoundTrip(t *testing.T) {
	dir := t.TempDir()
	types := writeFile(t, dir, "types.tsv", "entity_type\tcount\nprotein\t40\ndrug\t20\ndisease-x\t10\n")
	schema := writeFile(t, dir, "schema.tsv", "relation\thead_type\ttail_type\ttrain_edges\n"+
		"drug-protein\tdrug\tprotein\t7\nprotein-protein\tprotein\tprotein\t9\ndrug-disease-x\tdrug\tdisease-x\t3\n")
	s, err := ReadShape(types, schema, 0.1) // 4 proteins, 2 drugs, 1 disease-x
	if err != nil {
		t.Fatal(err)
	}
	if s.Entities() != 7 || s.NumRelations() != 3 {
		t.Fatalf("%d entities, %d relations; want 7 and 3", s.Entities(), s.NumRelations())
	}
	sc, err := s.Schema()
	if err != nil {
		t.Fatal(err)
	}
	dom, err := models.DomainFromSchema(sc)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Planted("complex2", models.Sizes{Entities: 7, Relations: 3, Rank: 3}, 2, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	sampler, err := NewSampler(m, dom)
	if err != nil {
		t.Fatal(err)
	}
	support := Support(m.Sizes, sc) // drug-protein 2·4 + protein-protein 4·4 + drug-disease 2·1
	if support != 26 {
		t.Fatalf("support %v, want 26", support)
	}
	d, err := DrawSplits(sampler, Splits{Train: 20, Valid: 3, Test: 3}, Distinct, support, 1)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if err := WriteSplits(out, d, s.Names(), false); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteSchema(out, d); err != nil {
		t.Fatal(err)
	}
	ds, err := kg.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if ds.Schema == nil || ds.Entities.Len() != 7 || ds.Relations.Len() != 3 {
		t.Fatalf("loaded %d entities, %d relations, schema %v", ds.Entities.Len(), ds.Relations.Len(), ds.Schema != nil)
	}
	for i, tr := range append(append(d.Train, d.Valid...), d.Test...) {
		got := append(append(ds.Train, ds.Valid...), ds.Test...)[i]
		if got != tr {
			t.Fatalf("triple %d loads as %v, drawn as %v: ids differ", i, got, tr)
		}
		if !sc.Consistent(tr) || !ds.Schema.Consistent(got) {
			t.Fatalf("triple %v breaks the schema", tr)
		}
	}
	for e := range int32(7) {
		if want, got := sc.Types.Name(sc.EntityType[e]), ds.Schema.Types.Name(ds.Schema.EntityType[e]); want != got {
			t.Errorf("entity %d (%s) loads with type %s, planted %s", e, ds.Entities.Name(e), got, want)
		}
	}
}

func TestReadShapeErrors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name, types, schema, want string
	}{
		{"unknown type", "a\t3\n", "r\ta\tc\n", `schema.tsv:1: relation r names type "c", which`},
		{"bad count", "a\tmany\n", "r\ta\ta\n", `types.tsv:1: count "many"`},
		{"type twice", "a\t1\na\t2\n", "r\ta\ta\n", `types.tsv:2: type "a" is listed twice`},
		{"slash in a type", "a/b\t1\n", "r\ta/b\ta/b\n", `type name "a/b"`},
		{"short line", "a\t1\n", "r\ta\n", "schema.tsv:1: 2 tab-separated fields, want at least 3"},
		{"no relations", "a\t1\n", "relation\tsubject_type\tobject_type\n", "schema.tsv: no relations"},
		{"unnamed relation", "a\t1\n", "\ta\ta\n", "schema.tsv:1: a relation without a name"},
		{"too many entities", "a\t2000000000\nb\t2000000000\n", "r\ta\tb\n", `types.tsv:2: 2000000000 entities of type "b" bring the total past 2147483647`},
		{"a line past the scanner's limit", "a\t1\n" + strings.Repeat("x", 70000) + "\t1\n", "r\ta\ta\n", "types.tsv:2: bufio.Scanner: token too long"},
	} {
		types := writeFile(t, dir, "types.tsv", c.types)
		schema := writeFile(t, dir, "schema.tsv", c.schema)
		_, err := ReadShape(types, schema, 1)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want %q", c.name, err, c.want)
		}
	}
	if _, err := ReadShape(writeFile(t, dir, "good.tsv", "a\t3\nb\t2\n"), writeFile(t, dir, "s.tsv", "r\ta\tb\n"), 0); err == nil {
		t.Error("a zero scale is accepted")
	}
}

// Whatever the two files hold, reading them returns a shape or an error,
// never a panic; a shape read has every relation's types among its types
// and, named, as many distinct entities as its counts say.
func FuzzReadShape(f *testing.F) {
	f.Add("type\tcount\nprotein\t3\ndrug\t2\n", "relation\tsubject_type\tobject_type\nbinds\tdrug\tprotein\n")
	f.Add("a\t1\n", "r\ta\ta\textra\n")
	f.Add("a\t0\n", "r\ta\tb\n")
	f.Fuzz(func(t *testing.T, types, schema string) {
		s, err := parseShape(strings.NewReader(types), "types.tsv", strings.NewReader(schema), "schema.tsv", 1)
		if err != nil {
			return
		}
		total := 0
		for _, tc := range s.Types {
			total += tc.Count
		}
		if total > 100_000 {
			return // valid, and too many names to make on every input
		}
		s.nameEntities()
		if s.Entities() != total || len(s.Relations) == 0 {
			t.Fatalf("%d entities named for counts summing to %d; %d relations", s.Entities(), total, len(s.Relations))
		}
		for i := 1; i < len(s.entity); i++ {
			if s.entity[i-1] >= s.entity[i] {
				t.Fatalf("entity names not strictly increasing: %q, %q", s.entity[i-1], s.entity[i])
			}
		}
		if _, err := s.Schema(); err != nil {
			t.Fatalf("a shape read has no schema: %v", err)
		}
	})
}
