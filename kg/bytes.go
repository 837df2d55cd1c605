package kg

import "unsafe"

// Bytes returns about how much memory the data set holds: its triples,
// vocabularies (names and their index) and OGB's negatives. It is what a
// run's memory report calls data.
func (d *Dataset) Bytes() int64 {
	n := int64(len(d.Train) + len(d.Valid) + len(d.Test))
	b := n * int64(unsafe.Sizeof(Triple{}))
	for _, v := range []*Vocab{d.Entities, d.Relations} {
		if v != nil {
			b += v.Bytes()
		}
	}
	if neg := d.Negatives; neg != nil {
		for _, rows := range [][][]int32{neg.ValidHead, neg.ValidTail, neg.TestHead, neg.TestTail} {
			for _, r := range rows {
				b += 24 + 4*int64(cap(r))
			}
		}
	}
	return b
}

// Bytes returns the memory the vocabulary holds: each name's bytes once,
// its end and, for ids not in byte order, its place in that order.
func (v *Vocab) Bytes() int64 {
	return int64(cap(v.text)) + 4*int64(cap(v.ends)+cap(v.order))
}

// Bytes returns the memory the filter's three indexes hold.
func (f *Filter) Bytes() int64 {
	var b int64
	for _, x := range []*pairIndex{&f.objects, &f.subjects, &f.relations} {
		b += 4 * int64(cap(x.first)+cap(x.second)+cap(x.start)+cap(x.values))
	}
	return b
}

// FilterBytes estimates Filter.Bytes of a filter over n distinct triples
// of a graph with the given numbers of entities and relations, before
// building it: every (pair, value) needs a value, and at worst a pair.
func FilterBytes(n, entities, relations int) int64 {
	return 4 * (3*3*int64(n) + 2*int64(entities+1) + int64(relations+1))
}
