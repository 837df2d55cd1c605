package kg

import (
	"fmt"
	"io"
	"math"
	"slices"
)

// A TripleFile is the content of one triple file on its own, with
// vocabularies of just the names it uses.
type TripleFile struct {
	Name                string // the name given for error messages
	Entities, Relations *Vocab // sorted in byte order
	Triples             []Triple
}

// ParseTriples reads lines of the form subject<TAB>relation<TAB>object from
// r. name labels errors, which have the form "name:line: message".
//
// Only tabs separate fields, so names may contain spaces. A UTF-8 byte-order
// mark at the start, one '\r' before each '\n' and empty lines at the end are
// ignored; any other line that does not hold exactly three non-empty fields is
// an error. Repeated triples are kept.
func ParseTriples(r io.Reader, name string) (*TripleFile, error) {
	var ents, rels interner
	ts, err := parseTriples(r, name, &ents, &rels)
	if err != nil {
		return nil, err
	}
	ev, eperm, err := ents.sorted()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	rv, rperm, err := rels.sorted()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	remap(ts, eperm, rperm)
	return &TripleFile{Name: name, Entities: ev, Relations: rv, Triples: ts}, nil
}

// ReadTriplesFile is like ParseTriples for the file at path, which is
// decompressed if its name ends in ".gz".
func ReadTriplesFile(path string) (*TripleFile, error) {
	var tf *TripleFile
	err := readInput(path, func(r io.Reader) (err error) {
		tf, err = ParseTriples(r, path)
		return err
	})
	return tf, err
}

var fieldNames = [3]string{"subject", "relation", "object"}

// parseTriples parses triples from r, interning names into ents and rels,
// so that several files can share one numbering. Since empty lines are
// allowed only at the end, triple i always comes from line i+1; later checks
// rely on that to name the line of a triple without storing it.
func parseTriples(r io.Reader, file string, ents, rels *interner) ([]Triple, error) {
	s := newLineScanner(r, file)
	var (
		ts     []Triple
		fields = make([][]byte, 0, 4)
	)
	for s.scan() {
		fields = s.fields(fields)
		if len(fields) != 3 {
			return nil, s.errorf("expected 3 tab-separated fields, got %d", len(fields))
		}
		for i, f := range fields {
			if len(f) == 0 {
				return nil, s.errorf("empty %s (field %d)", fieldNames[i], i+1)
			}
		}
		sub, err := ents.intern(fields[0])
		if err != nil {
			return nil, s.errorf("%v", err)
		}
		rel, err := rels.intern(fields[1])
		if err != nil {
			return nil, s.errorf("%v", err)
		}
		obj, err := ents.intern(fields[2])
		if err != nil {
			return nil, s.errorf("%v", err)
		}
		ts = append(ts, Triple{sub, rel, obj})
	}
	return ts, s.err
}

// An interner numbers names in order of first appearance. Looking up a
// []byte converted to string in a map does not allocate, so a name costs
// one allocation however often it occurs.
type interner struct {
	ids   map[string]int32
	names []string
}

func (in *interner) intern(b []byte) (int32, error) {
	if id, ok := in.ids[string(b)]; ok {
		return id, nil
	}
	return in.add(string(b))
}

func (in *interner) add(name string) (int32, error) {
	if len(in.names) == math.MaxInt32 {
		return 0, fmt.Errorf("more than %d distinct names", math.MaxInt32)
	}
	if in.ids == nil {
		in.ids = make(map[string]int32)
	}
	id := int32(len(in.names))
	in.ids[name] = id
	in.names = append(in.names, name)
	return id, nil
}

// lookup returns the id of name, or -1.
func (in *interner) lookup(name string) int32 {
	if id, ok := in.ids[name]; ok {
		return id
	}
	return -1
}

// sorted returns the vocabulary of the interned names in byte order and the
// permutation that maps an interned id to its id in that vocabulary.
func (in *interner) sorted() (*Vocab, []int32, error) {
	order := make([]int32, len(in.names))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		switch x, y := in.names[a], in.names[b]; {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	})
	names := make([]string, len(order))
	perm := make([]int32, len(order))
	for newID, oldID := range order {
		names[newID] = in.names[oldID]
		perm[oldID] = int32(newID)
	}
	// Distinct (interned) and sorted: a vocabulary without an order array.
	v, err := packNames(names)
	return v, perm, err
}

// remap rewrites interned ids to vocabulary ids.
func remap(ts []Triple, eperm, rperm []int32) {
	for i, t := range ts {
		ts[i] = Triple{eperm[t.S], rperm[t.R], eperm[t.O]}
	}
}
