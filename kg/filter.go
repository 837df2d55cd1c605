package kg

import (
	"math"
	"slices"
)

// A Filter knows the true triples of some splits, for the filtered ranking
// protocol (Bordes et al. 2013): when the true object of (s, r, ?) is ranked,
// every other known object of (s, r) is left out of the candidates.
//
// Each of the three lookups is a compressed sparse index: triples grouped
// by a first id, then sorted by a second id, holding sorted third ids. That
// costs at most 12 bytes per distinct triple per lookup, 36 in all, so
// ogbl-biokg's five million triples take at most 180 MB, several times less
// than maps of slices would. A lookup is one binary search.
//
// A Filter is immutable and safe for concurrent use.
type Filter struct {
	objects   pairIndex // (s, r) -> o
	subjects  pairIndex // (r, o) -> s
	relations pairIndex // (s, o) -> r
	n         int
}

// NewFilter returns a Filter of the triples of all given splits. Repeated
// triples count once. Ids must be non-negative, as in any Dataset.
func NewFilter(splits ...[]Triple) *Filter {
	var all []Triple
	if len(splits) == 1 {
		all = splits[0]
	} else {
		all = slices.Concat(splits...)
	}
	f := &Filter{
		objects:   newPairIndex(all, func(t Triple) (int32, int32, int32) { return t.S, t.R, t.O }),
		subjects:  newPairIndex(all, func(t Triple) (int32, int32, int32) { return t.R, t.O, t.S }),
		relations: newPairIndex(all, func(t Triple) (int32, int32, int32) { return t.S, t.O, t.R }),
	}
	f.n = len(f.objects.values)
	return f
}

// Len returns the number of distinct triples.
func (f *Filter) Len() int { return f.n }

// Objects returns, in increasing order, every o with (s, r, o) known.
// The slice is shared: do not modify it.
func (f *Filter) Objects(s, r int32) []int32 { return f.objects.get(s, r) }

// Subjects returns, in increasing order, every s with (s, r, o) known.
// The slice is shared: do not modify it.
func (f *Filter) Subjects(r, o int32) []int32 { return f.subjects.get(r, o) }

// Relations returns, in increasing order, every r with (s, r, o) known.
// The slice is shared: do not modify it.
func (f *Filter) Relations(s, o int32) []int32 { return f.relations.get(s, o) }

// Contains reports whether t is known.
func (f *Filter) Contains(t Triple) bool {
	_, found := slices.BinarySearch(f.objects.get(t.S, t.R), t.O)
	return found
}

// A pairIndex maps a pair of ids (a, b) to a sorted set of third ids.
type pairIndex struct {
	first  []int32 // pairs with first id a are first[a]:first[a+1]
	second []int32 // the b of each pair, increasing within an a
	start  []int32 // values of pair p are values[start[p]:start[p+1]]
	values []int32 // increasing within a pair, without repeats
}

func newPairIndex(ts []Triple, key func(Triple) (a, b, c int32)) pairIndex {
	if len(ts) >= math.MaxInt32 {
		// 2^31 triples would need 25 GB as []Triple alone.
		panic("kg: NewFilter: too many triples for int32 offsets")
	}
	numA := 0
	for _, t := range ts {
		a, _, _ := key(t)
		numA = max(numA, int(a)+1)
	}
	// Bucket by a (a counting sort), then sort each bucket by (b, c)
	// packed into one uint64: cheaper than sorting triples with a
	// comparison function, and the buckets are small.
	bucket := make([]int32, numA+1)
	for _, t := range ts {
		a, _, _ := key(t)
		bucket[a+1]++
	}
	for a := range numA {
		bucket[a+1] += bucket[a]
	}
	packed := make([]uint64, len(ts))
	next := slices.Clone(bucket[:numA])
	for _, t := range ts {
		a, b, c := key(t)
		packed[next[a]] = uint64(uint32(b))<<32 | uint64(uint32(c))
		next[a]++
	}

	// Sort and deduplicate each bucket in place, counting pairs and values
	// so that the index is allocated once, at its final size.
	size := make([]int32, numA) // distinct (b, c) per a
	var pairs, values int
	for a := range numA {
		block := packed[bucket[a]:bucket[a+1]]
		slices.Sort(block)
		block = slices.Compact(block)
		size[a] = int32(len(block))
		values += len(block)
		for i, p := range block {
			if i == 0 || p>>32 != block[i-1]>>32 {
				pairs++
			}
		}
	}

	x := pairIndex{
		first:  make([]int32, numA+1),
		second: make([]int32, 0, pairs),
		start:  make([]int32, 0, pairs+1),
		values: make([]int32, 0, values),
	}
	for a := range numA {
		x.first[a] = int32(len(x.second))
		block := packed[bucket[a] : bucket[a]+size[a]]
		for i, p := range block {
			if i == 0 || p>>32 != block[i-1]>>32 {
				x.second = append(x.second, int32(p>>32))
				x.start = append(x.start, int32(len(x.values)))
			}
			x.values = append(x.values, int32(uint32(p)))
		}
	}
	x.first[numA] = int32(len(x.second))
	x.start = append(x.start, int32(len(x.values)))
	return x
}

func (x *pairIndex) get(a, b int32) []int32 {
	if a < 0 || int(a)+1 >= len(x.first) {
		return nil
	}
	lo, hi := x.first[a], x.first[a+1]
	j, found := slices.BinarySearch(x.second[lo:hi], b)
	if !found {
		return nil
	}
	p := int(lo) + j
	// The full slice expression keeps an append by the caller from
	// overwriting the next pair's values.
	return x.values[x.start[p]:x.start[p+1]:x.start[p+1]]
}
