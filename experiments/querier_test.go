package main

import (
	"fmt"
	"math"
	"testing"

	"gekc/internal/logmath"
	"gekc/models"

	"gorgonia.org/tensor"
)

// enumerateJoint returns log p(s, r, o) of every triple, indexed
// [s][r][o], by enumeration: the model's log-scores normalised by their
// log-sum-exp over all |E|²|R| triples.
func enumerateJoint(t *testing.T, q *querier) [][][]float64 {
	t.Helper()
	sz := q.m.Sizes
	var ts [][3]int
	for s := 0; s < sz.Entities; s++ {
		for r := 0; r < sz.Relations; r++ {
			for o := 0; o < sz.Entities; o++ {
				ts = append(ts, [3]int{s, r, o})
			}
		}
	}
	ls := make([]float64, len(ts))
	if err := q.each(ts, q.scoreProg, q.logScore, 1, func(i int, row []float64) { ls[i] = row[0] }); err != nil {
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
	lz := logmath.LogSumExp(out)
	for i := range out {
		out[i] -= lz
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
			q, err := newQuerier(m, d, 4)
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
					got, err := q.conditional(tr, v)
					admissible := q.admissible(withFree(tr, v))
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
			if m.Semantics == models.Energy {
				if _, err := q.marginal([3]int{-1, -1, -1}, models.Relation); err == nil {
					t.Errorf("%s: energy-based marginal answered", label)
				}
				if _, err := q.logJoint([][3]int{{0, 0, 0}}); err == nil {
					t.Errorf("%s: energy-based joint answered", label)
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
					got, err := q.marginal(g, target)
					if err != nil {
						t.Fatalf("%s: marginal of %v given %v: %v", label, target, g, err)
					}
					check(fmt.Sprintf("marginal of %v given %v", target, g), got, bruteMarginal(joint, g, target))
				}
			}
			ts := [][3]int{{0, 0, 1}, {3, 1, 2}, {2, 1, 4}}
			lj, err := q.logJoint(ts)
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
