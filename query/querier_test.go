package query

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"gekc/internal/logmath"
	"gekc/kg"
	"gekc/metrics"
	"gekc/models"

	"gorgonia.org/tensor"
)

// enumerateJoint returns log p(s, r, o) of every triple, indexed
// [s][r][o], by enumeration: the model's log-scores normalised by their
// log-sum-exp over all |E|²|R| triples.
func enumerateJoint(t *testing.T, q *Querier) [][][]float64 {
	t.Helper()
	sz := q.m.Sizes
	var ts [][3]int
	var kts []kg.Triple
	for s := 0; s < sz.Entities; s++ {
		for r := 0; r < sz.Relations; r++ {
			for o := 0; o < sz.Entities; o++ {
				ts = append(ts, [3]int{s, r, o})
				kts = append(kts, triple([3]int{s, r, o}))
			}
		}
	}
	ls := make([]float64, len(ts))
	if err := q.ev.LogScores(kts, func(i int, x float64) { ls[i] = x }); err != nil {
		t.Fatal(err)
	}
	lz := logmath.LogSumExp(ls)
	out := make([][][]float64, sz.Entities)
	for i, tr := range ts {
		if out[tr[0]] == nil {
			out[tr[0]] = make([][]float64, sz.Relations)
		}
		if out[tr[0]][tr[1]] == nil {
			out[tr[0]][tr[1]] = make([]float64, sz.Entities)
		}
		out[tr[0]][tr[1]][tr[2]] = ls[i] - lz
	}
	return out
}

// bruteMarginal sums the enumerated joint over every slot but target,
// restricted to the triples matching the given slots (−1: free), and
// normalises over target.
func bruteMarginal(joint [][][]float64, given [3]int, target models.Var) []float64 {
	out := bruteJoint(joint, given, target)
	lz := logmath.LogSumExp(out)
	for i := range out {
		out[i] -= lz
	}
	return out
}

// bruteJoint is bruteMarginal without the normalisation over target:
// log p(target = x, given) for every x.
func bruteJoint(joint [][][]float64, given [3]int, target models.Var) []float64 {
	n := [3]int{len(joint), len(joint[0]), len(joint)}
	out := make([]float64, n[target])
	for i := range out {
		out[i] = math.Inf(-1)
	}
	for s := 0; s < n[0]; s++ {
		for r := 0; r < n[1]; r++ {
			for o := 0; o < n[2]; o++ {
				tr := [3]int{s, r, o}
				if (given[0] >= 0 && given[0] != s) || (given[1] >= 0 && given[1] != r) || (given[2] >= 0 && given[2] != o) {
					continue
				}
				out[tr[target]] = logmath.LogAddExp(out[tr[target]], joint[s][r][o])
			}
		}
	}
	return out
}

func closeLog(a, b float64) bool {
	if math.IsInf(a, -1) || math.IsInf(b, -1) {
		return a == b
	}
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b))
}

// Every answer of the querier — conditionals of each slot, marginals with
// nothing or one slot given, joint log-probabilities — equals the same
// quantity computed by enumerating the model's joint distribution, for
// every registered model, unconstrained and under a domain constraint.
func TestQuerierMatchesEnumeration(t *testing.T) {
	sz := models.Sizes{Entities: 5, Relations: 3, Rank: 3}
	// Types 0 1 0 1 1; relation 0 goes 0 → 1, relation 1 1 → 0, relation 2 0 → 1.
	dom, err := models.NewDomain([]int32{0, 1, 0, 1, 1}, []int32{0, 1, 0}, []int32{1, 0, 1}, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range models.Names() {
		m, err := models.New(name, sz, models.Options{Seed: 5, Dtype: tensor.Float64, InitScale: 0.5})
		if err != nil {
			t.Fatal(err)
		}
		doms := []*models.Domain{nil}
		if m.Semantics != models.Energy {
			doms = append(doms, dom)
		}
		for _, d := range doms {
			q, err := New(m, d, 4)
			if err != nil {
				t.Fatal(err)
			}
			joint := enumerateJoint(t, q)
			label := name
			if d != nil {
				label = "d-" + name
			}
			check := func(what string, got, want []float64) {
				t.Helper()
				for i := range want {
					if !closeLog(got[i], want[i]) {
						t.Errorf("%s %s: value %d: %v, want %v", label, what, i, got[i], want[i])
						return
					}
				}
			}
			// Conditionals of every slot for a few triples.
			for _, tr := range [][3]int{{0, 0, 1}, {3, 1, 2}, {2, 2, 4}, {1, 0, 3}} {
				for _, v := range models.Vars {
					got, err := q.Conditional(tr, v)
					admissible := q.Admissible(withFree(tr, v))
					if !admissible {
						if err == nil {
							t.Errorf("%s: conditional of %v for %v with no mass: no error", label, v, tr)
						}
						continue
					}
					if err != nil {
						t.Fatal(err)
					}
					check(fmt.Sprintf("conditional of %v given %v", v, withFree(tr, v)), got, bruteMarginal(joint, withFree(tr, v), v))
				}
			}
			// The three conditionals of full triples, admissible or not.
			for _, tr := range [][3]int{{0, 0, 1}, {3, 1, 2}, {0, 0, 2}, {1, 2, 3}} {
				got, err := q.SlotConditionals(tr)
				if err != nil {
					t.Fatal(err)
				}
				for _, v := range models.Vars {
					want := math.Inf(-1)
					if q.Admissible(withFree(tr, v)) {
						want = bruteMarginal(joint, withFree(tr, v), v)[tr[v]]
					}
					if !closeLog(got[v], want) {
						t.Errorf("%s: log p(%v | the rest of %v) = %v, want %v", label, v, tr, got[v], want)
					}
				}
			}
			if m.Semantics == models.Energy {
				if _, err := q.Marginal([3]int{-1, -1, -1}, models.Relation); !errors.Is(err, ErrEnergy) || !errors.Is(err, models.ErrIntractable) {
					t.Errorf("%s: energy-based marginal: %v", label, err)
				}
				if _, err := q.LogJoint([][3]int{{0, 0, 0}}); !errors.Is(err, ErrEnergy) {
					t.Errorf("%s: energy-based joint: %v", label, err)
				}
				continue
			}
			// Marginals: nothing given, or one slot given, any other target.
			givens := [][3]int{{-1, -1, -1}, {1, -1, -1}, {2, -1, -1}, {-1, 1, -1}, {-1, -1, 0}, {-1, -1, 3}}
			for _, g := range givens {
				for _, target := range models.Vars {
					if g[target] >= 0 {
						continue
					}
					got, err := q.Marginal(g, target)
					if err != nil {
						t.Fatalf("%s: marginal of %v given %v: %v", label, target, g, err)
					}
					check(fmt.Sprintf("marginal of %v given %v", target, g), got, bruteMarginal(joint, g, target))
				}
			}
			// The unnormalised quantities: log Z, the relations' and the
			// pairs' marginals, normalised by log Z.
			lz, err := q.LogPartition()
			if err != nil {
				t.Fatal(err)
			}
			rel, err := q.RelationLogMarginals()
			if err != nil {
				t.Fatal(err)
			}
			for i := range rel {
				rel[i] -= lz
			}
			check("relation marginals / Z", rel, bruteJoint(joint, [3]int{-1, -1, -1}, models.Relation))
			for r := 0; r < sz.Relations; r++ {
				for _, free := range []models.Var{models.Subject, models.Object} {
					pm, err := q.PairLogMarginals(free, r)
					if err != nil {
						t.Fatal(err)
					}
					for i := range pm {
						pm[i] -= lz
					}
					check(fmt.Sprintf("pair marginals of %v with relation %d / Z", free, r), pm, bruteJoint(joint, [3]int{-1, r, -1}, free))
				}
			}
			ts := [][3]int{{0, 0, 1}, {3, 1, 2}, {2, 1, 4}}
			lj, err := q.LogJoint(ts)
			if err != nil {
				t.Fatal(err)
			}
			for i, tr := range ts {
				if !closeLog(lj[i], joint[tr[0]][tr[1]][tr[2]]) {
					t.Errorf("%s: log p%v = %v, enumeration %v", label, tr, lj[i], joint[tr[0]][tr[1]][tr[2]])
				}
			}
		}
	}
}

// Ids outside the model and misplaced free slots are errors naming the
// slot, not panics.
func TestQuerierRejectsBadIDs(t *testing.T) {
	m, err := models.New("cp2", models.Sizes{Entities: 5, Relations: 3, Rank: 2}, models.Options{Seed: 1, Dtype: tensor.Float64})
	if err != nil {
		t.Fatal(err)
	}
	dom, err := models.NewDomain([]int32{0, 1, 0, 1, 1}, []int32{0, 1, 0}, []int32{1, 0, 1}, 2)
	if err != nil {
		t.Fatal(err)
	}
	q, err := New(m, dom, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		run  func() error
		want string
	}{
		{"conditional, subject 5", func() error { _, err := q.Conditional([3]int{5, 0, 0}, models.Object); return err }, "subject 5"},
		{"conditional, free relation", func() error { _, err := q.Conditional([3]int{1, Free, 0}, models.Object); return err }, "relation -1"},
		{"joint, object -2", func() error { _, err := q.LogJoint([][3]int{{0, 0, 0}, {0, 0, -2}}); return err }, "triple 1: object -2"},
		{"marginal, relation 3", func() error { _, err := q.Marginal([3]int{Free, 3, Free}, models.Subject); return err }, "relation 3"},
		{"marginal, two given", func() error { _, err := q.Marginal([3]int{0, 0, Free}, models.Object); return err }, "at most one"},
		{"marginal, target given", func() error { _, err := q.Marginal([3]int{0, Free, Free}, models.Subject); return err }, "target slot is given"},
		{"pairs, relation 3", func() error { _, err := q.PairLogMarginals(models.Subject, 3); return err }, "relation 3"},
		{"pairs, free relation", func() error { _, err := q.PairLogMarginals(models.Relation, 0); return err }, "entity slot"},
		{"sample, subject 7", func() error { _, err := q.SampleGiven([3]int{7, Free, Free}, 1, nil); return err }, "subject 7"},
		{"sample, object given", func() error { _, err := q.SampleGiven([3]int{Free, Free, 0}, 1, nil); return err }, "subject and/or the relation"},
		// Entities 0 and 2 have type 0; no relation goes from type 0 to type 0.
		{"conditional, no mass", func() error { _, err := q.Conditional([3]int{0, 0, 2}, models.Relation); return err }, "no mass"},
	} {
		err := c.run()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

// A querier asked for a batch whose candidate scores would pass
// metrics.DefaultBatchBuffers gets the largest batch within it; a small
// one keeps its batch.
func TestQuerierCapsItsBuffers(t *testing.T) {
	m, err := models.New("complex2", models.Sizes{Entities: 70_000, Relations: 3, Rank: 2}, models.Options{Seed: 1, Dtype: tensor.Float32})
	if err != nil {
		t.Fatal(err)
	}
	q, err := New(m, nil, 4096)
	if err != nil {
		t.Fatal(err)
	}
	one, err := New(m, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	b := q.ev.BatchSize()
	grown := q.ev.BufferBytes() - one.ev.BufferBytes()
	perQuery := grown / int64(b-1)
	if b >= 4096 || grown > metrics.DefaultBatchBuffers || grown+2*perQuery <= metrics.DefaultBatchBuffers {
		t.Errorf("batch %d of 4096 asked: %d bytes grow with it (%d a query); want the most within %d",
			b, grown, perQuery, int64(metrics.DefaultBatchBuffers))
	}
	small, err := New(m, nil, 16)
	if err != nil || small.ev.BatchSize() != 16 {
		t.Errorf("a batch of 16 within the cap: %v, %v", small.ev.BatchSize(), err)
	}
}
