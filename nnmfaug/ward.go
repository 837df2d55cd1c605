package nnmfaug

import (
	"math"
	"slices"
	"sync"
)

// merge is one step of the agglomeration: the clusters held in slots a and
// b joined (into slot min(a, b)) at Ward's cost Δ, the rise of the
// within-cluster sum of squares.
type merge struct {
	a, b  int
	delta float64
}

// wardClusters partitions the n rows of x (row-major, d columns) into k
// clusters by Ward's minimum-variance agglomerative clustering, returning
// each row's cluster in [0, k), numbered by first appearance.
//
// Ward's linkage is reducible, so the nearest-neighbour chain finds the
// same hierarchy as merging the cheapest pair each time, while keeping
// only the clusters' centroids and sizes (O(n·d) memory, O(n²·d) time; the
// cost of joining A and B is |A||B|/(|A|+|B|)·‖c_A − c_B‖²). The chain
// makes its merges out of order, so the partition into k clusters is the
// one the n − k cheapest merges make. The nearest-neighbour searches are
// split among workers goroutines; the result does not depend on how many.
func wardClusters(x []float64, n, d, k, workers int) []int32 {
	cent := slices.Clone(x)
	size := make([]float64, n)
	for i := range size {
		size[i] = 1
	}
	active := make([]int, n) // slots of the current clusters
	for i := range active {
		active[i] = i
	}
	pos := make([]int, n) // a slot's index in active
	for i := range pos {
		pos[i] = i
	}
	weight := func(a, b int) float64 { return size[a] * size[b] / (size[a] + size[b]) }
	cost := func(a, b int) float64 {
		return weight(a, b) * sqDist(cent[a*d:(a+1)*d], cent[b*d:(b+1)*d])
	}
	workers = max(1, workers)
	type nearest struct {
		slot int
		cost float64
	}
	found := make([]nearest, workers)
	// nearestTo returns the cluster closest to a, other than a; on ties the
	// first in active order, or prev when prev is among the closest (the
	// chain's rule that makes it end in a reciprocal pair).
	nearestTo := func(a, prev int) (int, float64) {
		var wg sync.WaitGroup
		chunk := (len(active) + workers - 1) / workers
		for w := 0; w < workers; w++ {
			// Late in the agglomeration fewer clusters are left than
			// workers: the last chunks are empty.
			lo, hi := min(w*chunk, len(active)), min((w+1)*chunk, len(active))
			wg.Add(1)
			go func(w, lo, hi int) {
				defer wg.Done()
				best := nearest{-1, math.Inf(1)}
				for _, c := range active[lo:hi] {
					if c == a || c == prev {
						continue
					}
					wc := weight(a, c) // cost(a, c), stopped early where it cannot win
					if s, ok := sqDistBelow(cent[a*d:(a+1)*d], cent[c*d:(c+1)*d], wc, best.cost); ok && wc*s < best.cost {
						best = nearest{c, wc * s}
					}
				}
				found[w] = best
			}(w, lo, hi)
		}
		wg.Wait()
		best := nearest{-1, math.Inf(1)}
		if prev >= 0 {
			best = nearest{prev, cost(a, prev)}
		}
		for _, f := range found {
			if f.slot >= 0 && f.cost < best.cost {
				best = f
			}
		}
		return best.slot, best.cost
	}

	merges := make([]merge, 0, n-1)
	formed := make([]float64, n) // the cost of the merge that formed a slot's cluster
	var chain []int
	for len(active) > 1 {
		if len(chain) == 0 {
			chain = append(chain, active[0])
		}
		a, prev := chain[len(chain)-1], -1
		if len(chain) >= 2 {
			prev = chain[len(chain)-2]
		}
		b, delta := nearestTo(a, prev)
		if b != prev {
			chain = append(chain, b)
			continue
		}
		chain = chain[:len(chain)-2]
		lo, hi := min(a, b), max(a, b)
		// Ward's costs never fall below those of the merges that formed
		// the two clusters; in floating point they can, by an ulp, at exact
		// ties, and the cut below must not apply a merge before its parts.
		delta = max(delta, formed[lo], formed[hi])
		formed[lo] = delta
		merges = append(merges, merge{lo, hi, delta})
		cl, ch := cent[lo*d:(lo+1)*d], cent[hi*d:(hi+1)*d]
		total := size[lo] + size[hi]
		for j := range cl {
			cl[j] = (size[lo]*cl[j] + size[hi]*ch[j]) / total
		}
		size[lo] = total
		// hi leaves active: the last slot takes its place.
		i, last := pos[hi], active[len(active)-1]
		active[i], pos[last] = last, i
		active = active[:len(active)-1]
	}

	// The n − k cheapest merges, in the order the chain made equal ones
	// (which respects their dependencies: a merge's clusters were formed
	// earlier, at no higher cost).
	order := make([]int, len(merges))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(i, j int) int {
		switch {
		case merges[i].delta < merges[j].delta:
			return -1
		case merges[i].delta > merges[j].delta:
			return 1
		}
		return 0
	})
	parent := make([]int, n)
	for i := range parent {
		parent[i] = i
	}
	root := func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	for _, m := range order[:n-k] {
		parent[root(merges[m].b)] = root(merges[m].a)
	}
	return labelsByFirstAppearance(n, root)
}

// sqDist is ‖a − b‖², a and b of one length.
func sqDist(a, b []float64) float64 {
	s, _ := sqDistBelow(a, b, 1, math.Inf(1))
	return s
}

// sqDistBelow is sqDist(a, b), or false once w times a partial sum of it
// reaches bound: the partial sums only grow, and rounding is monotone, so
// w·sqDist would reach it too. Most candidates of a nearest-neighbour
// search are far and stop early; and it sums in four lanes, where one
// running sum would wait on each add in turn (BenchmarkWard: both together
// make the search about 4 times as fast).
func sqDistBelow(a, b []float64, w, bound float64) (float64, bool) {
	b = b[:len(a)]
	var s0, s1, s2, s3 float64
	j := 0
	for ; j+4 <= len(a); j += 4 {
		d0, d1, d2, d3 := a[j]-b[j], a[j+1]-b[j+1], a[j+2]-b[j+2], a[j+3]-b[j+3]
		s0 += d0 * d0
		s1 += d1 * d1
		s2 += d2 * d2
		s3 += d3 * d3
		if j&28 == 28 && w*((s0+s1)+(s2+s3)) >= bound { // every 32 entries
			return 0, false
		}
	}
	for ; j < len(a); j++ {
		d := a[j] - b[j]
		s0 += d * d
	}
	return (s0 + s1) + (s2 + s3), true
}

// labelsByFirstAppearance numbers the groups of n items, item i in group
// group(i), 0, 1, … in the order their first items come.
func labelsByFirstAppearance(n int, group func(int) int) []int32 {
	label := map[int]int32{}
	out := make([]int32, n)
	for i := range out {
		g := group(i)
		l, ok := label[g]
		if !ok {
			l = int32(len(label))
			label[g] = l
		}
		out[i] = l
	}
	return out
}
