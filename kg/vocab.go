package kg

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// A Vocab is a bijection between names and dense ids 0..Len()-1.
//
// Vocabularies of the plain text layout hold their names sorted in byte order,
// so the same files give the same ids on every run and machine, whatever the
// order of lines. A Vocab is immutable and safe for concurrent use.
type Vocab struct {
	names []string
	index map[string]int32
}

// NewVocab returns a vocabulary whose ids follow the order of names.
// It returns an error if a name is empty or repeated.
func NewVocab(names []string) (*Vocab, error) {
	if len(names) > math.MaxInt32 {
		return nil, fmt.Errorf("kg: %d names exceed the int32 id space", len(names))
	}
	v := &Vocab{
		names: slices.Clone(names),
		index: make(map[string]int32, len(names)),
	}
	for i, name := range v.names {
		if name == "" {
			return nil, fmt.Errorf("kg: empty name at position %d", i)
		}
		if j, dup := v.index[name]; dup {
			return nil, fmt.Errorf("kg: name %q at positions %d and %d", name, j, i)
		}
		v.index[name] = int32(i)
	}
	return v, nil
}

// SortedVocab returns a vocabulary of names sorted in byte order, with
// repeated names merged. It returns an error if a name is empty.
func SortedVocab(names []string) (*Vocab, error) {
	sorted := slices.Clone(names)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	if len(sorted) > 0 && sorted[0] == "" {
		return nil, errors.New("kg: empty name")
	}
	return NewVocab(sorted)
}

// Len returns the number of names.
func (v *Vocab) Len() int { return len(v.names) }

// Name returns the name of id. It panics if id is out of range, like an
// index expression: an id comes from data that was already validated.
func (v *Vocab) Name(id int32) string { return v.names[id] }

// Index returns the id of name and whether name is in the vocabulary.
func (v *Vocab) Index(name string) (int32, bool) {
	id, ok := v.index[name]
	return id, ok
}

// Names returns a copy of all names in id order.
func (v *Vocab) Names() []string { return slices.Clone(v.names) }
