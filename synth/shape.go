package synth

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"gekc/kg"
)

// Shape is the typed layout of a planted graph: its entity types with
// their counts, and each relation's subject and object type (the schema a
// constrained GeKC puts all its mass within). Entity i of type t is named
// "t/<i, zero-padded>"; entity and relation ids follow the byte order of
// the names, as the loader numbers them, so a planted model's ids are the
// loaded data set's.
type Shape struct {
	Types     []TypeCount // in name order
	Relations []RelationTypes
	entity    []string // entity names in id order
}

// TypeCount is an entity type and how many entities have it.
type TypeCount struct {
	Name  string
	Count int
}

// RelationTypes is a relation and the types of its subjects and objects.
type RelationTypes struct {
	Name, Subject, Object string
}

// ReadShape reads entity type counts ("type<TAB>count" lines, such as
// ../shared/data/ogbl-biokg/entity_type_counts.tsv) and a relation schema
// ("relation<TAB>subject_type<TAB>object_type", further columns ignored,
// as relation_schema.tsv), each with an optional header line, and scales
// every count by scale (at least one entity per type). Errors name the file
// and line.
func ReadShape(typesPath, schemaPath string, scale float64) (*Shape, error) {
	if !(scale > 0) || math.IsInf(scale, 0) {
		return nil, fmt.Errorf("synth: type count scale %g: want a finite positive factor", scale)
	}
	types, err := os.Open(typesPath)
	if err != nil {
		return nil, fmt.Errorf("synth: %w", err)
	}
	defer types.Close()
	schema, err := os.Open(schemaPath)
	if err != nil {
		return nil, fmt.Errorf("synth: %w", err)
	}
	defer schema.Close()
	s, err := parseShape(types, typesPath, schema, schemaPath, scale)
	if err != nil {
		return nil, err
	}
	s.nameEntities()
	return s, nil
}

// maxEntities is the most entities a planted graph may have: kg numbers
// them with int32.
const maxEntities = math.MaxInt32

// parseShape reads and checks the two files' contents; the entities are
// named afterwards (nameEntities), once their number is known to fit.
func parseShape(types io.Reader, typesPath string, schema io.Reader, schemaPath string, scale float64) (*Shape, error) {
	s := &Shape{}
	total := 0
	err := scanTSV(types, typesPath, 2, func(line int, f []string) error {
		n, err := strconv.Atoi(f[1])
		if err != nil || n <= 0 {
			return fmt.Errorf("%s:%d: count %q: want a positive integer", typesPath, line, f[1])
		}
		if f[0] == "" || strings.Contains(f[0], "/") {
			return fmt.Errorf("%s:%d: type name %q: want a non-empty name without '/' (entity names are type/number)", typesPath, line, f[0])
		}
		if slices.ContainsFunc(s.Types, func(t TypeCount) bool { return t.Name == f[0] }) {
			return fmt.Errorf("%s:%d: type %q is listed twice", typesPath, line, f[0])
		}
		scaled := math.Max(1, math.Round(float64(n)*scale))
		if scaled > float64(maxEntities-total) {
			return fmt.Errorf("%s:%d: %.0f entities of type %q bring the total past %d, the most a data set can number", typesPath, line, scaled, f[0], maxEntities)
		}
		total += int(scaled)
		s.Types = append(s.Types, TypeCount{Name: f[0], Count: int(scaled)})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(s.Types) == 0 {
		return nil, fmt.Errorf("%s: no entity types", typesPath)
	}
	known := func(t string) bool {
		return slices.ContainsFunc(s.Types, func(x TypeCount) bool { return x.Name == t })
	}
	err = scanTSV(schema, schemaPath, 3, func(line int, f []string) error {
		if strings.TrimSpace(f[0]) == "" {
			return fmt.Errorf("%s:%d: a relation without a name", schemaPath, line)
		}
		for _, t := range f[1:3] {
			if !known(t) {
				return fmt.Errorf("%s:%d: relation %s names type %q, which %s does not list", schemaPath, line, f[0], t, typesPath)
			}
		}
		if slices.ContainsFunc(s.Relations, func(r RelationTypes) bool { return r.Name == f[0] }) {
			return fmt.Errorf("%s:%d: relation %q is listed twice", schemaPath, line, f[0])
		}
		s.Relations = append(s.Relations, RelationTypes{Name: f[0], Subject: f[1], Object: f[2]})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(s.Relations) == 0 {
		return nil, fmt.Errorf("%s: no relations", schemaPath)
	}
	slices.SortFunc(s.Types, func(a, b TypeCount) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(s.Relations, func(a, b RelationTypes) int { return strings.Compare(a.Name, b.Name) })
	return s, nil
}

// nameEntities names entity i of type t "t/<i, zero-padded>", in byte
// order.
func (s *Shape) nameEntities() {
	s.entity = s.entity[:0]
	for _, t := range s.Types {
		w := len(strconv.Itoa(t.Count - 1))
		for i := range t.Count {
			s.entity = append(s.entity, fmt.Sprintf("%s/%0*d", t.Name, w, i))
		}
	}
	slices.Sort(s.entity)
}

// scanTSV calls row with the first n fields of each line of r (read from
// path), skipping a header whose first field is not data (it names the
// column: "type", "entity_type", "relation") and blank lines.
func scanTSV(r io.Reader, path string, n int, row func(line int, fields []string) error) error {
	sc := bufio.NewScanner(r)
	line := 1 // after the loop: the line Scan failed on
	for ; sc.Scan(); line++ {
		text := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(text) == "" {
			continue
		}
		f := strings.Split(text, "\t")
		if len(f) < n {
			return fmt.Errorf("%s:%d: %d tab-separated fields, want at least %d", path, line, len(f), n)
		}
		if line == 1 && (f[0] == "type" || f[0] == "entity_type" || f[0] == "relation") {
			continue
		}
		if err := row(line, f[:n]); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s:%d: %w", path, line, err)
	}
	return nil
}

// Entities and NumRelations are the planted graph's sizes.
func (s *Shape) Entities() int     { return len(s.entity) }
func (s *Shape) NumRelations() int { return len(s.Relations) }

// Names names the shape's ids ("protein/00017", the schema's relation names).
func (s *Shape) Names() Names {
	return Names{Entity: func(id int32) string { return s.entity[id] }, Relation: func(id int32) string { return s.Relations[id].Name }}
}

// Schema is the shape's domain constraint in its ids.
func (s *Shape) Schema() (*kg.Schema, error) {
	names := make([]string, len(s.Types))
	for i, t := range s.Types {
		names[i] = t.Name
	}
	types, err := kg.NewVocab(names)
	if err != nil {
		return nil, err
	}
	id := func(name string) int32 { i, _ := types.Index(name); return i }
	sc := &kg.Schema{Types: types}
	for _, e := range s.entity {
		t, _, _ := strings.Cut(e, "/")
		sc.EntityType = append(sc.EntityType, id(t))
	}
	for _, r := range s.Relations {
		sc.SubjectType = append(sc.SubjectType, id(r.Subject))
		sc.ObjectType = append(sc.ObjectType, id(r.Object))
	}
	return sc, nil
}

// WriteSchema writes the shape's entity_types.tsv.gz and relation_schema.tsv
// into dir, as WriteVocabulary does for an untyped planted graph.
func (s *Shape) WriteSchema(dir string, d *Sampled) error {
	return writeSchemaFiles(dir, len(s.entity), s.Names(), func(e int32) string { t, _, _ := strings.Cut(s.entity[e], "/"); return t },
		d.RelationsUsed(len(s.Relations)), func(r int) (string, string) { return s.Relations[r].Subject, s.Relations[r].Object })
}
