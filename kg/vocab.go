package kg

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"unsafe"
)

// A Vocab is a bijection between names and dense ids 0..Len()-1.
//
// Vocabularies of the plain text layout hold their names sorted in byte order,
// so the same files give the same ids on every run and machine, whatever the
// order of lines. A Vocab is immutable and safe for concurrent use.
//
// It is three arrays, not a map: every name's bytes once, each name's end,
// and, only when ids are not already in byte order (OGB's), the ids in that
// order; Index is a binary search. That is 4 bytes of bookkeeping per name
// (8 in OGB's layout) where a map of strings costs ~50: 120 MB less at
// wikikg2's 2.5M entities.
type Vocab struct {
	text  []byte   // the names, concatenated in id order; never written after construction
	ends  []uint32 // name id ends at ends[id] in text, and starts where id-1 ends
	order []int32  // ids in byte order of their names; nil when that is id order
}

// NewVocab returns a vocabulary whose ids follow the order of names.
// It returns an error if a name is empty or repeated.
func NewVocab(names []string) (*Vocab, error) {
	if len(names) > math.MaxInt32 {
		return nil, fmt.Errorf("kg: %d names exceed the int32 id space", len(names))
	}
	for i, name := range names {
		if name == "" {
			return nil, fmt.Errorf("kg: empty name at position %d", i)
		}
	}
	v, err := packNames(names)
	if err != nil {
		return nil, err
	}
	if slices.IsSorted(names) {
		// Sorted and, being without repeats below, strictly: no order
		// needed.
		for i := 1; i < len(names); i++ {
			if names[i] == names[i-1] {
				return nil, fmt.Errorf("kg: name %q at positions %d and %d", names[i], i-1, i)
			}
		}
		return v, nil
	}
	v.order = make([]int32, len(names))
	for i := range v.order {
		v.order[i] = int32(i)
	}
	slices.SortFunc(v.order, func(a, b int32) int {
		if c := strings.Compare(names[a], names[b]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	// Of the repeated names, report the one whose second use comes first,
	// as reading the names in order finds it.
	first, second := -1, -1
	for k := 1; k < len(v.order); k++ {
		a, b := v.order[k-1], v.order[k]
		if names[a] == names[b] && (second < 0 || int(b) < second) {
			first, second = int(a), int(b)
		}
	}
	if second >= 0 {
		return nil, fmt.Errorf("kg: name %q at positions %d and %d", names[second], first, second)
	}
	return v, nil
}

// packNames lays names out as a Vocab's text and ends, in the given order.
func packNames(names []string) (*Vocab, error) {
	total := 0
	for _, n := range names {
		total += len(n)
	}
	if total > math.MaxUint32 {
		return nil, fmt.Errorf("kg: names of %d bytes in all exceed a vocabulary's 4 GiB", total)
	}
	v := &Vocab{text: make([]byte, 0, total), ends: make([]uint32, len(names))}
	for i, n := range names {
		v.text = append(v.text, n...)
		v.ends[i] = uint32(len(v.text))
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
func (v *Vocab) Len() int { return len(v.ends) }

// Name returns the name of id. It panics if id is out of range, like an
// index expression: an id comes from data that was already validated.
func (v *Vocab) Name(id int32) string {
	start := uint32(0)
	if id > 0 {
		start = v.ends[id-1]
	}
	end := v.ends[id]
	// The string aliases text, which is never written again: no copy,
	// whatever the number of names printed.
	return unsafe.String(&v.text[start], end-start)
}

// Index returns the id of name and whether name is in the vocabulary.
func (v *Vocab) Index(name string) (int32, bool) {
	n := len(v.ends)
	k := sort.Search(n, func(k int) bool { return v.Name(v.sortedID(k)) >= name })
	if k < n {
		if id := v.sortedID(k); v.Name(id) == name {
			return id, true
		}
	}
	return -1, false
}

// sortedID is the id of the k-th name in byte order.
func (v *Vocab) sortedID(k int) int32 {
	if v.order == nil {
		return int32(k)
	}
	return v.order[k]
}

// Names returns all names in id order (a new slice; the strings share the
// vocabulary's immutable storage).
func (v *Vocab) Names() []string {
	out := make([]string, v.Len())
	for i := range out {
		out[i] = v.Name(int32(i))
	}
	return out
}
