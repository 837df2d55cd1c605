package kg

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// FuzzParseTriples checks that the triple parser never panics, that its
// errors carry a plausible file:line, and that what it accepts survives a
// round trip through the text format. `make fuzz` runs it.
func FuzzParseTriples(f *testing.F) {
	for _, seed := range []string{
		"",
		"a\tr\tb\n",
		"a\tr\tb",
		"a\tr\tb\r\nc\tr\td\r\n",
		"\ufeffa\tr\tb\n",
		"Side Effect::C1\tcauses\tBiological Process::GO:1\n",
		"a\tr\tb\n\n\n",
		"a\tr\tb\n\nc\tr\td\n",
		"a\t\tb\n",
		"\tr\tb\n",
		"a\tr\t\n",
		"a\tr\tb\tc\n",
		"a\tr\n",
		"a\tr\tb\r\r\n",
		"\r\n\r\n",
		"a\tGr>G\tb\n",
		"\xff\xfe\tr\tb\n",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		tf, err := ParseTriples(strings.NewReader(in), "in.txt")
		lines := strings.Count(in, "\n") + 1
		if err != nil {
			var le *LineError
			if !errors.As(err, &le) || le.File != "in.txt" || le.Line < 1 || le.Line > lines {
				t.Fatalf("error %q lacks a line within 1..%d", err, lines)
			}
			if !strings.HasPrefix(err.Error(), "in.txt:") {
				t.Fatalf("error %q does not start with the file name", err)
			}
			return
		}
		var b bytes.Buffer
		roundTrip := true
		for i, tr := range tf.Triples {
			names := [3]string{tf.Entities.Name(tr.S), tf.Relations.Name(tr.R), tf.Entities.Name(tr.O)}
			for _, n := range names {
				if n == "" || strings.ContainsAny(n, "\t\n") {
					t.Fatalf("triple %d has name %q", i, n)
				}
			}
			// A name may end in '\r' (from "\r\r\n") or, after the first
			// line, start with a byte-order mark; written back, those would
			// read differently, as intended.
			if strings.HasSuffix(names[2], "\r") || (i == 0 && strings.HasPrefix(names[0], byteOrderMark)) {
				roundTrip = false
			}
			b.WriteString(names[0] + "\t" + names[1] + "\t" + names[2] + "\n")
		}
		if !roundTrip {
			return
		}
		again, err := ParseTriples(&b, "again.txt")
		if err != nil {
			t.Fatalf("written back, the triples do not parse: %v", err)
		}
		if len(again.Triples) != len(tf.Triples) {
			t.Fatalf("round trip: %d triples, want %d", len(again.Triples), len(tf.Triples))
		}
		for i := range again.Triples {
			a, b := again.Triples[i], tf.Triples[i]
			if again.Entities.Name(a.S) != tf.Entities.Name(b.S) || again.Relations.Name(a.R) != tf.Relations.Name(b.R) ||
				again.Entities.Name(a.O) != tf.Entities.Name(b.O) {
				t.Fatalf("round trip changed triple %d", i)
			}
		}
	})
}

// FuzzParseSchema feeds a train split, entity types and a relation schema
// through the plain loader. Whatever it accepts must be a consistent,
// typed data set; whatever it rejects must be rejected with file:line or a
// file name.
func FuzzParseSchema(f *testing.F) {
	typed := typedFiles()
	f.Add(typed["train.txt"], "Compound::aspirin\tCompound\nCompound::ibuprofen\tCompound\n"+
		"Disease::head ache\tDisease\nDisease::fever\tDisease\nGene::PTGS1\tGene\n", typed["relation_schema.tsv"])
	f.Add("a\tr\tb\n", "a\tA\nb\tB\n", "relation\tsubject_type\tobject_type\nr\tA\tB\n")
	f.Add("a\tr\tb\r\n", "\ufeffa\tA\r\nb\tB\r\n\r\n", "h\r\nr\tA\tB\textra\r\n")
	f.Add("a\tr\tb\n", "a\tA\nb\tA\n", "h\nr\tA\tB\n")
	f.Add("a\tr\tb\n", "a\tA\na\tB\n", "h\nr\tA\tA\n")
	f.Add("a\tr\tb\n", "a\tA\n", "h\nr\tA\tA\n")
	f.Add("a\tr\tb\n", "a\tA\nb\tA\n", "h\nr\tA\tA\nr\tA\tA\n")
	f.Add("a\tr\tb\n", "a\tA\nb\tA\n", "h\nq\tA\tA\n")
	f.Add("a\tr\tb\n", "a\t\n", "")
	f.Add("a\tr\tb\n", "a\tA\nb\tA\n", "r\tA\tA\n")
	f.Fuzz(func(t *testing.T, train, types, schema string) {
		var b plainBuilder
		if err := b.addSplit(0, strings.NewReader(train), "train.txt"); err != nil {
			checkFileError(t, err, "train.txt")
			return
		}
		b.addSplit(1, strings.NewReader(""), "valid.txt")
		b.addSplit(2, strings.NewReader(""), "test.txt")
		if err := b.addEntityTypes(strings.NewReader(types), "entity_types.tsv"); err != nil {
			checkFileError(t, err, "entity_types.tsv")
			return
		}
		if err := b.addRelationSchema(strings.NewReader(schema), "relation_schema.tsv"); err != nil {
			checkFileError(t, err, "relation_schema.tsv")
			return
		}
		d, err := b.build()
		if err != nil {
			if !strings.Contains(err.Error(), "train.txt") {
				t.Fatalf("error %q names no file", err)
			}
			return
		}
		s := d.Schema
		if len(s.EntityType) != d.Entities.Len() || len(s.SubjectType) != d.Relations.Len() {
			t.Fatalf("schema sizes %d, %d for %d entities, %d relations",
				len(s.EntityType), len(s.SubjectType), d.Entities.Len(), d.Relations.Len())
		}
		for _, tr := range d.Train {
			if !s.Consistent(tr) {
				t.Fatalf("accepted triple %v breaks the schema", tr)
			}
		}
		seen := 0
		for typ := range s.Types.Len() {
			seen += len(s.EntitiesOfType(int32(typ)))
		}
		if seen != d.Entities.Len() {
			t.Fatalf("%d typed entities of %d", seen, d.Entities.Len())
		}
	})
}

func checkFileError(t *testing.T, err error, file string) {
	t.Helper()
	var le *LineError
	if !errors.As(err, &le) || le.File != file || le.Line < 1 {
		t.Fatalf("error %q is not a LineError in %s", err, file)
	}
}
