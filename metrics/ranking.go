package metrics

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// TiePolicy decides the rank of a true answer whose score ties with others.
type TiePolicy int

const (
	// Pessimistic ranks the answer after every tie (the paper's code and
	// kbc: rank = 1 + #{score ≥ target}); a model that scores everything
	// equally gets the worst rank.
	Pessimistic TiePolicy = iota
	// Realistic takes the mean of the optimistic and pessimistic ranks
	// (the expected rank under random tie-breaking, as in PyKEEN).
	Realistic
	// Optimistic ranks the answer before every tie.
	Optimistic
)

var tieNames = [...]string{"pessimistic", "realistic", "optimistic"}

func (p TiePolicy) String() string { return tieNames[p] }

// ParseTiePolicy reads a policy name.
func ParseTiePolicy(s string) (TiePolicy, error) {
	for i, n := range tieNames {
		if strings.EqualFold(s, n) {
			return TiePolicy(i), nil
		}
	}
	return 0, fmt.Errorf("unknown tie policy %q (known: %s)", s, strings.Join(tieNames[:], ", "))
}

// rankOf returns the filtered rank of scores[target] among scores, ignoring
// the candidates in filtered (sorted; may contain target). A NaN target
// score ranks last; NaN candidates never outrank anything.
func rankOf[T float32 | float64](scores []T, target int, filtered []int32, policy TiePolicy) float64 {
	t := scores[target]
	if t != t {
		return float64(len(scores) - (len(filtered) - countIn(filtered, target)))
	}
	greater, equal := 0, 0
	for _, s := range scores {
		if s > t {
			greater++
		} else if s == t {
			equal++
		}
	}
	for _, f := range filtered {
		if int(f) == target {
			continue
		}
		if s := scores[f]; s > t {
			greater--
		} else if s == t {
			equal--
		}
	}
	equal-- // the target itself
	switch policy {
	case Optimistic:
		return float64(1 + greater)
	case Realistic:
		return 1 + float64(greater) + float64(equal)/2
	}
	return float64(1 + greater + equal)
}

func countIn(sorted []int32, x int) int {
	i := sort.Search(len(sorted), func(i int) bool { return int(sorted[i]) >= x })
	if i < len(sorted) && int(sorted[i]) == x {
		return 1
	}
	return 0
}

// Ranking summarises filtered ranks over subject and object queries.
type Ranking struct {
	N            int             // number of queries (2 per triple)
	MRR          float64         // mean reciprocal rank over both sides
	Hits         map[int]float64 // fraction of queries with rank ≤ k
	MRRSubject   float64
	MRRObject    float64
	NonFinite    int // queries whose true answer had a NaN or ±Inf score
	SubjectRanks []float64
	ObjectRanks  []float64
}

// NewRanking summarises the ranks of subject and object queries (nonFinite
// of whose true answers scored NaN or ±Inf): for evaluators that rank
// elsewhere, as a sharded model's does.
func NewRanking(subj, obj []float64, hits []int, nonFinite int) Ranking {
	return summarise(subj, obj, hits, nonFinite)
}

// Counts compare a target's score with a set of candidates': how many of
// them, the target and filtered candidates left out, score above it and
// how many equal. Counts of disjoint candidate sets add up, and a NaN
// target counts every candidate as above it.
type Counts struct{ Greater, Equal int64 }

// Rank is the target's rank among the counted candidates under policy.
func (c Counts) Rank(policy TiePolicy) float64 {
	switch policy {
	case Optimistic:
		return float64(1 + c.Greater)
	case Realistic:
		return 1 + float64(c.Greater) + float64(c.Equal)/2
	}
	return float64(1 + c.Greater + c.Equal)
}

func summarise(subj, obj []float64, hits []int, nonFinite int) Ranking {
	r := Ranking{N: len(subj) + len(obj), NonFinite: nonFinite, SubjectRanks: subj, ObjectRanks: obj}
	r.MRRSubject, r.MRRObject = meanReciprocal(subj), meanReciprocal(obj)
	all := append(append([]float64(nil), subj...), obj...)
	r.MRR = meanReciprocal(all)
	r.Hits = hitsAt(all, hits)
	return r
}

// RelationRanking summarises filtered ranks of relation queries (s, ?, o).
type RelationRanking struct {
	N         int             // number of queries (1 per triple)
	MRR       float64         // mean reciprocal rank
	Hits      map[int]float64 // fraction of queries with rank ≤ k
	NonFinite int             // queries whose true relation had a NaN or ±Inf score
	Ranks     []float64
}

func summariseRelations(ranks []float64, hits []int, nonFinite int) RelationRanking {
	return RelationRanking{N: len(ranks), MRR: meanReciprocal(ranks), Hits: hitsAt(ranks, hits), NonFinite: nonFinite, Ranks: ranks}
}

func meanReciprocal(ranks []float64) float64 {
	if len(ranks) == 0 {
		return math.NaN()
	}
	var s float64
	for _, v := range ranks {
		s += 1 / v
	}
	return s / float64(len(ranks))
}

func hitsAt(ranks []float64, ks []int) map[int]float64 {
	out := make(map[int]float64, len(ks))
	for _, k := range ks {
		c := 0
		for _, v := range ranks {
			if v <= float64(k) {
				c++
			}
		}
		out[k] = float64(c) / float64(len(ranks))
	}
	return out
}
