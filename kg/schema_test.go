package kg

import (
	"reflect"
	"strings"
	"testing"
)

// typedFiles is a small typed data set; tests change one file at a time.
func typedFiles() map[string]string {
	return map[string]string{
		"train.txt": "Compound::aspirin\ttreats\tDisease::head ache\n" +
			"Compound::aspirin\tbinds\tGene::PTGS1\n" +
			"Compound::ibuprofen\ttreats\tDisease::fever\n",
		"valid.txt": "Compound::ibuprofen\tbinds\tGene::PTGS2\n",
		"test.txt":  "Compound::ibuprofen\ttreats\tDisease::head ache\n",
		"entity_types.tsv.gz": "Compound::aspirin\tCompound\nCompound::ibuprofen\tCompound\n" +
			"Disease::head ache\tDisease\nDisease::fever\tDisease\n" +
			"Gene::PTGS1\tGene\nGene::PTGS2\tGene\nGene::PTGS1\tGene\n" + // repeated with the same type: fine
			"Anatomy::liver\tAnatomy\n", // typed but in no triple: still an entity
		"relation_schema.tsv": "relation\tsubject_type\tobject_type\tn_train\r\n" +
			"treats\tCompound\tDisease\t2\r\nbinds\tCompound\tGene\t1\r\n",
	}
}

func TestLoadSchema(t *testing.T) {
	d, err := Load(writeDataset(t, typedFiles()))
	if err != nil {
		t.Fatal(err)
	}
	s := d.Schema
	if s == nil {
		t.Fatal("no schema")
	}
	if got, want := s.Types.Names(), []string{"Anatomy", "Compound", "Disease", "Gene"}; !reflect.DeepEqual(got, want) {
		t.Errorf("types %q, want %q", got, want)
	}
	if got, want := d.Entities.Names(), []string{"Anatomy::liver", "Compound::aspirin", "Compound::ibuprofen",
		"Disease::fever", "Disease::head ache", "Gene::PTGS1", "Gene::PTGS2"}; !reflect.DeepEqual(got, want) {
		t.Errorf("entities %q, want %q", got, want)
	}
	for e, typ := range s.EntityType {
		name := d.Entities.Name(int32(e))
		if want := name[:strings.Index(name, "::")]; s.Types.Name(typ) != want {
			t.Errorf("entity %s has type %s", name, s.Types.Name(typ))
		}
	}
	for r, want := range map[string][2]string{"binds": {"Compound", "Gene"}, "treats": {"Compound", "Disease"}} {
		id, _ := d.Relations.Index(r)
		if got := [2]string{s.Types.Name(s.SubjectType[id]), s.Types.Name(s.ObjectType[id])}; got != want {
			t.Errorf("relation %s: types %v, want %v", r, got, want)
		}
	}
	for _, split := range [][]Triple{d.Train, d.Valid, d.Test} {
		for _, tr := range split {
			if !s.Consistent(tr) {
				t.Errorf("triple %v of the data is not consistent", tr)
			}
		}
	}
	gene, _ := s.Types.Index("Gene")
	if got, want := s.EntitiesOfType(gene), []int32{5, 6}; !reflect.DeepEqual(got, want) {
		t.Errorf("genes %v, want %v", got, want)
	}
	treats, _ := d.Relations.Index("treats")
	if s.Consistent(Triple{5, treats, 3}) {
		t.Error("gene treats disease is consistent")
	}
	if s.Consistent(Triple{-1, treats, 3}) || s.Consistent(Triple{1, 99, 3}) || s.EntitiesOfType(99) != nil {
		t.Error("out-of-range ids accepted")
	}
}

func TestLoadSchemaErrors(t *testing.T) {
	for _, tc := range []struct {
		name, file, content string
		want                string // a substring of the error, after replacing DIR
	}{
		{"types: one field", "entity_types.tsv.gz", "Compound::aspirin\n",
			"DIR/entity_types.tsv.gz:1: expected 2 tab-separated fields (entity, type), got 1"},
		{"types: three fields", "entity_types.tsv.gz", "Compound::aspirin\tCompound\tx\n",
			"DIR/entity_types.tsv.gz:1: expected 2 tab-separated fields (entity, type), got 3"},
		{"types: empty type", "entity_types.tsv.gz", "Compound::aspirin\t\n",
			"DIR/entity_types.tsv.gz:1: empty type (field 2)"},
		{"types: empty entity", "entity_types.tsv.gz", "\tCompound\n",
			"DIR/entity_types.tsv.gz:1: empty entity (field 1)"},
		{"types: typed twice", "entity_types.tsv.gz", "Gene::PTGS1\tGene\nCompound::aspirin\tCompound\nGene::PTGS1\tProtein\n",
			`DIR/entity_types.tsv.gz:3: entity "Gene::PTGS1" has type "Protein", but line 1 gave it type "Gene"`},
		{"types: entity untyped", "entity_types.tsv.gz", "Compound::aspirin\tCompound\nCompound::ibuprofen\tCompound\nDisease::head ache\tDisease\nDisease::fever\tDisease\nGene::PTGS1\tGene\n",
			`DIR/valid.txt:1: entity "Gene::PTGS2" has no type in DIR/entity_types.tsv.gz`},
		{"schema: two fields", "relation_schema.tsv", "h\ntreats\tCompound\n",
			"DIR/relation_schema.tsv:2: expected at least 3 tab-separated fields (relation, subject type, object type), got 2"},
		{"schema: empty object type", "relation_schema.tsv", "h\ntreats\tCompound\t\n",
			"DIR/relation_schema.tsv:2: empty object type (field 3)"},
		{"schema: unknown relation", "relation_schema.tsv", "h\ntreats\tCompound\tDisease\nbinds\tCompound\tGene\ncures\tCompound\tDisease\n",
			`DIR/relation_schema.tsv:4: relation "cures" occurs in no split`},
		{"schema: relation twice", "relation_schema.tsv", "h\ntreats\tCompound\tDisease\ntreats\tCompound\tDisease\n",
			`DIR/relation_schema.tsv:3: relation "treats" is already listed on line 2`},
		{"schema: type of no entity", "relation_schema.tsv", "h\ntreats\tCompound\tSymptom\n",
			`DIR/relation_schema.tsv:2: type "Symptom" is the type of no entity in DIR/entity_types.tsv.gz`},
		{"schema: relation missing", "relation_schema.tsv", "h\ntreats\tCompound\tDisease\n",
			`DIR/train.txt:2: relation "binds" is not in DIR/relation_schema.tsv`},
		{"train violates subject type", "relation_schema.tsv", "h\ntreats\tGene\tDisease\nbinds\tCompound\tGene\n",
			`DIR/train.txt:1: relation "treats" expects subject type "Gene" (DIR/relation_schema.tsv:2), found "Compound" for entity "Compound::aspirin"`},
		{"train violates object type", "train.txt", "Compound::aspirin\ttreats\tDisease::fever\nCompound::aspirin\tbinds\tGene::PTGS1\nCompound::aspirin\tbinds\tDisease::fever\n",
			`DIR/train.txt:3: relation "binds" expects object type "Gene" (DIR/relation_schema.tsv:3), found "Disease" for entity "Disease::fever"`},
		{"test violates", "test.txt", "Compound::ibuprofen\ttreats\tDisease::fever\nGene::PTGS1\ttreats\tDisease::fever\n",
			`DIR/test.txt:2: relation "treats" expects subject type "Compound" (DIR/relation_schema.tsv:2), found "Gene" for entity "Gene::PTGS1"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := typedFiles()
			files[tc.file] = tc.content
			dir := writeDataset(t, files)
			_, err := Load(dir)
			want := strings.ReplaceAll(tc.want, "DIR", dir)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("got error\n\t%v\nwant one containing\n\t%s", err, want)
			}
		})
	}
}
