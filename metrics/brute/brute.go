// Package brute computes by enumeration what a run reports, for the tests
// that check the reported numbers (train's and sweep's): the score of every
// triple of a tiny graph, each scored alone; filtered ranks of each test
// triple against every entity; MRR, Hits@k and the mean log-likelihood from
// them; and the tiny typed graph those tests train on. It is test support,
// written apart from the evaluator it checks: nothing of it is in the
// shipped command.
package brute

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gekc/internal/logmath"
	"gekc/kg"
	"gekc/metrics"
	"gekc/models"
)

// Scores returns log φ(s, r, o) of every triple of m, indexed
// [(s·|R| + r)·|E| + o], each scored alone by the plain log-score query in
// batches of batch; triples that consistent (when not nil) rules out get
// −Inf, as the constrained model gives them.
func Scores(m *models.Model, batch int, consistent func(kg.Triple) bool) ([]float64, error) {
	ne, nr := m.Sizes.Entities, m.Sizes.Relations
	all := make([]kg.Triple, 0, ne*nr*ne)
	for s := range ne {
		for r := range nr {
			for o := range ne {
				all = append(all, kg.Triple{S: int32(s), R: int32(r), O: int32(o)})
			}
		}
	}
	ev, err := metrics.NewEvaluator(m, batch)
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(all))
	if err := ev.LogScores(all, func(i int, ls float64) { out[i] = ls }); err != nil {
		return nil, err
	}
	for i, tr := range all {
		if consistent != nil && !consistent(tr) {
			out[i] = math.Inf(-1)
		}
	}
	return out, nil
}

// Known is the set of the triples of all three splits of ds.
func Known(ds *kg.Dataset) map[kg.Triple]bool {
	known := map[kg.Triple]bool{}
	for _, split := range [][]kg.Triple{ds.Train, ds.Valid, ds.Test} {
		for _, tr := range split {
			known[tr] = true
		}
	}
	return known
}

// RankMetrics ranks each triple's subject and object against every entity
// by scores (as Scores indexes them), leaving out the other known triples
// of any split and counting ties by policy, and reports MRR and Hits@k over
// both sides, MRR per side and, when withLL, the mean log p under the
// distribution the scores normalise to.
func RankMetrics(ds *kg.Dataset, scores []float64, triples []kg.Triple, hits []int, policy metrics.TiePolicy, withLL bool) map[string]float64 {
	ne, nr := ds.Entities.Len(), ds.Relations.Len()
	score := func(tr kg.Triple) float64 { return scores[(int(tr.S)*nr+int(tr.R))*ne+int(tr.O)] }
	known := Known(ds)
	rank := func(target kg.Triple, candidates []kg.Triple) float64 {
		above, tied := 0.0, 0.0
		for _, c := range candidates {
			if c == target || known[c] {
				continue
			}
			switch {
			case score(c) > score(target):
				above++
			case score(c) == score(target):
				tied++
			}
		}
		switch policy {
		case metrics.Optimistic:
			return 1 + above
		case metrics.Realistic:
			return 1 + above + tied/2
		}
		return 1 + above + tied
	}
	var subj, obj []float64
	for _, tr := range triples {
		var heads, tails []kg.Triple
		for e := int32(0); e < int32(ne); e++ {
			heads = append(heads, kg.Triple{S: e, R: tr.R, O: tr.O})
			tails = append(tails, kg.Triple{S: tr.S, R: tr.R, O: e})
		}
		subj, obj = append(subj, rank(tr, heads)), append(obj, rank(tr, tails))
	}
	mean := func(ranks []float64) float64 {
		var s float64
		for _, r := range ranks {
			s += 1 / r
		}
		return s / float64(len(ranks))
	}
	both := append(slices.Clone(subj), obj...)
	out := map[string]float64{"mrr": mean(both), "mrr_subject": mean(subj), "mrr_object": mean(obj)}
	for _, k := range hits {
		n := 0
		for _, r := range both {
			if r <= float64(k) {
				n++
			}
		}
		out[fmt.Sprintf("hits@%d", k)] = float64(n) / float64(len(both))
	}
	if withLL {
		logZ := logmath.LogSumExp(scores)
		var sum float64
		for _, tr := range triples {
			sum += score(tr) - logZ
		}
		out["ll"] = sum / float64(len(triples))
	}
	return out
}

// WriteTypedTiny writes into dir a typed graph of 8 entities, a0..a3 of
// type A and b0..b3 of type B, and 3 relations: aa (A→A), ab (A→B), ba
// (B→A). Three quarters of the 48 schema-consistent triples are known, so
// most test queries have other known answers in every split: ranks differ
// when a split is missing from the filter.
func WriteTypedTiny(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var all []string
	for _, rel := range []string{"aa", "ab", "ba"} {
		for i := range 4 {
			for j := range 4 {
				all = append(all, fmt.Sprintf("%c%d\t%s\t%c%d\n", rel[0], i, rel, rel[1], j))
			}
		}
	}
	rng := rand.New(rand.NewPCG(7, 7))
	rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	types := ""
	for i := range 4 {
		types += fmt.Sprintf("a%d\tA\nb%d\tB\n", i, i)
	}
	files := map[string]string{
		"train.txt": strings.Join(all[:22], ""), "valid.txt": strings.Join(all[22:29], ""), "test.txt": strings.Join(all[29:36], ""),
		"entity_types.tsv":    types,
		"relation_schema.tsv": "relation\tsubject_type\tobject_type\naa\tA\tA\nab\tA\tB\nba\tB\tA\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// TypedTinyConsistent says whether a triple of WriteTypedTiny's graph fits
// its schema, from the names alone (not from the loaded Schema, the input
// of the code under test).
func TypedTinyConsistent(ds *kg.Dataset, tr kg.Triple) bool {
	rel := ds.Relations.Name(tr.R)
	return ds.Entities.Name(tr.S)[0] == rel[0] && ds.Entities.Name(tr.O)[0] == rel[1]
}
