package metrics

import (
	"fmt"
	"math"
	"slices"

	"gekc/kg"
	"gekc/models"
)

// Sem returns Sem@k for each k, as the paper's appendix (Metrics) defines
// it: for every subject and every object query of the triples, the share
// of the k best candidates that the schema allows in that slot, averaged
// over all queries of both sides. Candidates are ranked "in the same way as
// for computing the MRR": filtered, every known answer in filter other than
// the true one left out. A nil filter ranks all entities (the unfiltered
// variant, which gekc reported as Sem@k before). A model that never
// predicts an inconsistent entity scores 1 at every k that does not exceed
// the consistent candidates.
//
// Candidates tied at the k-th score are taken in entity order; NaN scores
// rank last. When filtering leaves fewer than k candidates, the share is of
// those left.
func (e *Evaluator) Sem(triples []kg.Triple, schema *kg.Schema, ks []int, filter *kg.Filter) (map[int]float64, error) {
	if schema == nil {
		return nil, fmt.Errorf("metrics.Sem: the dataset has no schema (entity_types.tsv and relation_schema.tsv)")
	}
	if len(triples) == 0 || len(ks) == 0 {
		return nil, fmt.Errorf("metrics.Sem: %d triples, %d cut-offs", len(triples), len(ks))
	}
	kmax := slices.Max(ks)
	if kmin := slices.Min(ks); kmin <= 0 || kmax > e.m.Sizes.Entities {
		return nil, fmt.Errorf("metrics.Sem: cut-offs %v outside [1, %d entities]", ks, e.m.Sizes.Entities)
	}
	consistent := make([]float64, len(ks)) // summed shares
	top := make([]int, 0, kmax)
	for _, side := range []models.Var{models.Subject, models.Object} {
		err := e.Candidates(triples, side, func(i int, scores []float64) {
			t := triples[i]
			want, target := schema.ObjectType[t.R], int(t.O)
			if side == models.Subject {
				want, target = schema.SubjectType[t.R], int(t.S)
			}
			var skip []int32
			if filter != nil {
				if side == models.Subject {
					skip = filter.Subjects(t.R, t.O)
				} else {
					skip = filter.Objects(t.S, t.R)
				}
			}
			top = topKExcept(scores, kmax, top[:0], skip, target)
			for j, k := range ks {
				k = min(k, len(top))
				c := 0
				for _, ent := range top[:k] {
					if schema.EntityType[ent] == want {
						c++
					}
				}
				consistent[j] += float64(c) / float64(k)
			}
		})
		if err != nil {
			return nil, err
		}
	}
	out := make(map[int]float64, len(ks))
	for j, k := range ks {
		out[k] = consistent[j] / float64(2*len(triples))
	}
	return out, nil
}

// TopK appends to dst (which may be nil) the indices of the k largest
// scores, best first, ties in index order, NaN last; k ≤ 0 or k ≥
// len(scores) orders them all.
func TopK(scores []float64, k int, dst []int) []int {
	if k > 0 && k < len(scores) {
		return topKExcept(scores, k, dst, nil, -1)
	}
	dst = dst[:0]
	for i := range scores {
		dst = append(dst, i)
	}
	slices.SortStableFunc(dst, func(a, b int) int {
		switch {
		case ranksBefore(scores, a, b):
			return -1
		case ranksBefore(scores, b, a):
			return 1
		}
		return 0 // two NaNs: stable, so in index order
	})
	return dst
}

// ranksBefore reports whether candidate a ranks before b: a higher score,
// NaN last, ties in index order.
func ranksBefore(scores []float64, a, b int) bool {
	x, y := scores[a], scores[b]
	switch {
	case math.IsNaN(x):
		return false
	case math.IsNaN(y):
		return true
	case x != y:
		return x > y
	}
	return a < b
}

// topKExcept is topK over the candidates not in skip (sorted), keep
// excepted. It keeps a sorted window of k candidates, which for
// k ≪ len(scores) costs about one comparison per score.
func topKExcept(scores []float64, k int, dst []int, skip []int32, keep int) []int {
	better := func(a, b int) bool { return ranksBefore(scores, a, b) }
	dst = dst[:0]
	for i := range scores {
		for len(skip) > 0 && int(skip[0]) < i {
			skip = skip[1:]
		}
		if len(skip) > 0 && int(skip[0]) == i && i != keep {
			continue
		}
		if len(dst) == k && !better(i, dst[k-1]) {
			continue
		}
		if len(dst) < k {
			dst = append(dst, i)
		} else {
			dst[k-1] = i
		}
		for j := len(dst) - 1; j > 0 && better(dst[j], dst[j-1]); j-- {
			dst[j], dst[j-1] = dst[j-1], dst[j]
		}
	}
	return dst
}

// RankAgainst ranks each triple's true subject and object against supplied
// candidate lists instead of all entities: OGB's protocol for ogbl-biokg,
// where heads[i] and tails[i] hold the (type-consistent) negative subjects
// and objects of triples[i]. Ties count half, as OGB's evaluator does
// (rank = 1 + #greater + #equal/2), whatever the evaluator's tie policy.
func (e *Evaluator) RankAgainst(triples []kg.Triple, heads, tails [][]int32, hits []int) (Ranking, error) {
	if len(heads) != len(triples) || len(tails) != len(triples) {
		return Ranking{}, fmt.Errorf("metrics.RankAgainst: %d triples but %d head and %d tail candidate lists", len(triples), len(heads), len(tails))
	}
	subj := make([]float64, len(triples))
	obj := make([]float64, len(triples))
	nonFinite := 0
	var fail error
	for _, side := range []models.Var{models.Subject, models.Object} {
		err := e.Candidates(triples, side, func(i int, scores []float64) {
			t := triples[i]
			negs, target, ranks := tails[i], int(t.O), obj
			if side == models.Subject {
				negs, target, ranks = heads[i], int(t.S), subj
			}
			pos := scores[target]
			if math.IsNaN(pos) || math.IsInf(pos, 0) {
				nonFinite++
			}
			for _, n := range negs {
				if n < 0 || int(n) >= len(scores) {
					fail = fmt.Errorf("metrics.RankAgainst: triple %d: candidate %d outside %d entities", i, n, len(scores))
					return
				}
			}
			ranks[i] = ogbRank(pos, len(negs), func(j int) float64 { return scores[negs[j]] })
		})
		if err != nil {
			return Ranking{}, err
		}
		if fail != nil {
			return Ranking{}, fail
		}
	}
	return summarise(subj, obj, hits, nonFinite), nil
}

// ogbRank is OGB's rank of a true score among n candidates' scores (score(j)
// for j < n): 1 + #greater + #equal/2; a NaN true score ranks last.
func ogbRank(pos float64, n int, score func(j int) float64) float64 {
	greater, equal := 0, 0
	for j := range n {
		switch s := score(j); {
		case s > pos || math.IsNaN(pos):
			greater++
		case s == pos:
			equal++
		}
	}
	return 1 + float64(greater) + float64(equal)/2
}
