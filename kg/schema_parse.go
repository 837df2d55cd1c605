package kg

import (
	"fmt"
	"io"
)

// typeTable collects entity types and a relation schema by interned ids,
// before the vocabularies are sorted.
type typeTable struct {
	types      interner
	entityType []int32 // per interned entity id; -1 if untyped
	entityLine []int32 // the line of the types file that typed the entity
	subject    []int32 // per interned relation id; -1 if not in the schema
	object     []int32
	schemaLine []int32
	typesFile  string
	schemaFile string
}

// parseEntityTypes reads lines entity<TAB>type without a header. Entities
// new to ents are added, so that the vocabulary covers every typed entity.
func (tt *typeTable) parseEntityTypes(r io.Reader, file string, ents *interner) error {
	tt.typesFile = file
	s := newLineScanner(r, file)
	fields := make([][]byte, 0, 3)
	for s.scan() {
		fields = s.fields(fields)
		if len(fields) != 2 {
			return s.errorf("expected 2 tab-separated fields (entity, type), got %d", len(fields))
		}
		if len(fields[0]) == 0 {
			return s.errorf("empty entity (field 1)")
		}
		if len(fields[1]) == 0 {
			return s.errorf("empty type (field 2)")
		}
		e, err := ents.intern(fields[0])
		if err != nil {
			return s.errorf("%v", err)
		}
		t, err := tt.types.intern(fields[1])
		if err != nil {
			return s.errorf("%v", err)
		}
		for int(e) >= len(tt.entityType) {
			tt.entityType = append(tt.entityType, -1)
			tt.entityLine = append(tt.entityLine, 0)
		}
		switch old := tt.entityType[e]; {
		case old == -1:
			tt.entityType[e] = t
			tt.entityLine[e] = int32(s.line)
		case old != t:
			return s.errorf("entity %q has type %q, but line %d gave it type %q",
				ents.names[e], tt.types.names[t], tt.entityLine[e], tt.types.names[old])
		}
	}
	if s.err != nil {
		return s.err
	}
	// Entities interned from the triples but absent from the file stay -1.
	for len(tt.entityType) < len(ents.names) {
		tt.entityType = append(tt.entityType, -1)
		tt.entityLine = append(tt.entityLine, 0)
	}
	return nil
}

// parseRelationSchema reads a header line, then lines
// relation<TAB>subject_type<TAB>object_type, ignoring further columns such
// as Hetionet's n_train. Every relation must occur in rels and every type
// must be the type of some entity, so parse the triples and the entity types
// first. A schema naming what the data lacks is most likely for another
// version of the data, so both are errors.
func (tt *typeTable) parseRelationSchema(r io.Reader, file string, rels *interner) error {
	tt.schemaFile = file
	tt.subject = filled(len(rels.names), -1)
	tt.object = filled(len(rels.names), -1)
	tt.schemaLine = make([]int32, len(rels.names))
	s := newLineScanner(r, file)
	fields := make([][]byte, 0, 5)
	header := true
	for s.scan() {
		if header {
			header = false
			continue
		}
		fields = s.fields(fields)
		if len(fields) < 3 {
			return s.errorf("expected at least 3 tab-separated fields (relation, subject type, object type), got %d", len(fields))
		}
		for i, what := range [3]string{"relation", "subject type", "object type"} {
			if len(fields[i]) == 0 {
				return s.errorf("empty %s (field %d)", what, i+1)
			}
		}
		rel := rels.lookup(string(fields[0]))
		if rel < 0 {
			return s.errorf("relation %q occurs in no split", fields[0])
		}
		if prev := tt.schemaLine[rel]; prev != 0 {
			return s.errorf("relation %q is already listed on line %d", fields[0], prev)
		}
		var st [2]int32
		for i, f := range fields[1:3] {
			if st[i] = tt.types.lookup(string(f)); st[i] < 0 {
				return s.errorf("type %q is the type of no entity in %s", f, tt.typesFile)
			}
		}
		tt.subject[rel], tt.object[rel] = st[0], st[1]
		tt.schemaLine[rel] = int32(s.line)
	}
	return s.err
}

// checkTriples returns an error naming the first triple of ts, read from
// file, that the table does not allow.
func (tt *typeTable) checkTriples(ts []Triple, file string, ents, rels *interner) error {
	for i, t := range ts {
		line := i + 1
		if tt.subject[t.R] < 0 {
			return lineErrorf(file, line, "relation %q is not in %s", rels.names[t.R], tt.schemaFile)
		}
		for _, e := range [2]int32{t.S, t.O} {
			if tt.entityType[e] < 0 {
				return lineErrorf(file, line, "entity %q has no type in %s", ents.names[e], tt.typesFile)
			}
		}
		for _, c := range [2]struct {
			role   string
			entity int32
			want   int32
		}{{"subject", t.S, tt.subject[t.R]}, {"object", t.O, tt.object[t.R]}} {
			if got := tt.entityType[c.entity]; got != c.want {
				return lineErrorf(file, line, "relation %q expects %s type %q (%s:%d), found %q for entity %q",
					rels.names[t.R], c.role, tt.types.names[c.want], tt.schemaFile, tt.schemaLine[t.R],
					tt.types.names[got], ents.names[c.entity])
			}
		}
	}
	return nil
}

// schema returns the table as a Schema in the ids of the sorted
// vocabularies: eperm and rperm map interned ids to those.
func (tt *typeTable) schema(eperm, rperm []int32) (*Schema, error) {
	types, tperm, err := tt.types.sorted()
	if err != nil {
		return nil, err
	}
	s := &Schema{
		Types:       types,
		EntityType:  make([]int32, len(eperm)),
		SubjectType: make([]int32, len(rperm)),
		ObjectType:  make([]int32, len(rperm)),
	}
	for old, t := range tt.entityType {
		s.EntityType[eperm[old]] = tperm[t]
	}
	for old := range rperm {
		s.SubjectType[rperm[old]] = tperm[tt.subject[old]]
		s.ObjectType[rperm[old]] = tperm[tt.object[old]]
	}
	return s, nil
}

func filled(n int, v int32) []int32 {
	s := make([]int32, n)
	for i := range s {
		s[i] = v
	}
	return s
}

// errMissingSchemaFile explains a data set with only half the type files.
func errMissingSchemaFile(dir, have, missing string) error {
	return fmt.Errorf("kg: %s has %s but no %s[.gz]; type information needs both", dir, have, missing)
}
