package metrics

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"gekc/kg"
	"gekc/models"

	"gorgonia.org/tensor"
)

func TestTopK(t *testing.T) {
	nan := math.NaN()
	cases := []struct {
		scores []float64
		k      int
		want   []int
	}{
		{[]float64{1, 3, 2}, 2, []int{1, 2}},
		{[]float64{2, 2, 1, 2}, 2, []int{0, 1}}, // ties in index order
		{[]float64{nan, 1, nan, 0}, 3, []int{1, 3, 0}},
		{[]float64{math.Inf(-1), 5, math.Inf(-1)}, 3, []int{1, 0, 2}},
		{[]float64{4}, 1, []int{0}},
		// k ≤ 0 or ≥ len(scores): all of them, by a full sort.
		{[]float64{nan, 1, nan, 0}, 0, []int{1, 3, 0, 2}},
		{[]float64{2, 2, 1, 2}, 4, []int{0, 1, 3, 2}},
		{[]float64{math.Inf(-1), 5, math.Inf(-1)}, -1, []int{1, 0, 2}},
		{[]float64{1, 3, 2}, 9, []int{1, 2, 0}},
		{nil, 0, nil},
	}
	for _, c := range cases {
		if got := TopK(c.scores, c.k, nil); !slices.Equal(got, c.want) {
			t.Errorf("TopK(%v, %d) = %v, want %v", c.scores, c.k, got, c.want)
		}
	}
	// Against a full sort on random scores with many ties.
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 50; trial++ {
		s := make([]float64, 1+rng.IntN(200))
		for i := range s {
			s[i] = float64(rng.IntN(20))
		}
		idx := make([]int, len(s))
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(a, b int) bool { return s[idx[a]] > s[idx[b]] })
		k := 1 + rng.IntN(len(s))
		if got := TopK(s, k, nil); !slices.Equal(got, idx[:k]) {
			t.Fatalf("trial %d: TopK = %v, want %v", trial, got, idx[:k])
		}
		if got := TopK(s, 0, nil); !slices.Equal(got, idx) {
			t.Fatalf("trial %d: TopK of all = %v, want %v", trial, got, idx)
		}
	}
}

// tinySchema types 9 entities with 3 types; relation 0 goes from type 0 to
// type 1, relation 1 from 1 to 2, relation 2 from 2 to 0.
func tinySchema(t *testing.T) *kg.Schema {
	types, err := kg.NewVocab([]string{"a", "b", "c"})
	if err != nil {
		t.Fatal(err)
	}
	return &kg.Schema{
		Types:       types,
		EntityType:  []int32{0, 1, 2, 0, 1, 2, 0, 1, 2},
		SubjectType: []int32{0, 1, 2},
		ObjectType:  []int32{1, 2, 0},
	}
}

// Sem@k from the evaluator, filtered and unfiltered, equals Sem@k
// recomputed from every candidate triple's own log-score; under the domain
// constraint it is exactly 1.
func TestSemMatchesLogScores(t *testing.T) {
	sz := models.Sizes{Entities: 9, Relations: 3, Rank: 4}
	schema := tinySchema(t)
	dom, err := models.DomainFromSchema(schema)
	if err != nil {
		t.Fatal(err)
	}
	test := []kg.Triple{{S: 0, R: 0, O: 1}, {S: 4, R: 1, O: 5}, {S: 8, R: 2, O: 6}}
	ks := []int{1, 2, 3, 5}
	for _, name := range []string{"complex", "cp2", "complex2"} {
		m, err := models.New(name, sz, models.Options{Seed: 3, Dtype: tensor.Float64, InitScale: 0.5})
		if err != nil {
			t.Fatal(err)
		}
		ev, err := NewEvaluator(m, 2)
		if err != nil {
			t.Fatal(err)
		}
		// Other known answers: two consistent and one inconsistent object
		// of (0, 0), one subject of (1, 5).
		filter := kg.NewFilter(test, []kg.Triple{{S: 0, R: 0, O: 4}, {S: 0, R: 0, O: 7}, {S: 0, R: 0, O: 3}, {S: 1, R: 1, O: 5}})
		for _, filt := range []*kg.Filter{nil, filter} {
			got, err := ev.Sem(test, schema, ks, filt)
			if err != nil {
				t.Fatal(err)
			}
			want := map[int]float64{}
			for _, tr := range test {
				for _, side := range []models.Var{models.Subject, models.Object} {
					alt := func(e int) kg.Triple {
						a := tr
						if side == models.Object {
							a.O = int32(e)
						} else {
							a.S = int32(e)
						}
						return a
					}
					scores := make([]float64, sz.Entities)
					var order []int
					for e := range scores {
						if filt != nil && alt(e) != tr && filt.Contains(alt(e)) {
							continue
						}
						if err := ev.LogScores([]kg.Triple{alt(e)}, func(_ int, s float64) { scores[e] = s }); err != nil {
							t.Fatal(err)
						}
						order = append(order, e)
					}
					sort.SliceStable(order, func(a, b int) bool { return scores[order[a]] > scores[order[b]] })
					for _, k := range ks {
						k = min(k, len(order))
						ok := 0
						for _, e := range order[:k] {
							if schema.Consistent(alt(e)) {
								ok++
							}
						}
						want[k] += float64(ok) / float64(k) / float64(2*len(test))
					}
				}
			}
			for _, k := range ks {
				if math.Abs(got[k]-want[k]) > 1e-12 {
					t.Errorf("%s (filtered %v): Sem@%d = %v, want %v", name, filt != nil, k, got[k], want[k])
				}
			}
		}
		if name == "complex" {
			continue
		}
		cev, err := NewConstrainedEvaluator(m, dom, 2)
		if err != nil {
			t.Fatal(err)
		}
		sem, err := cev.Sem(test, schema, ks, nil)
		if err != nil {
			t.Fatal(err)
		}
		// 3 entities per type: the first 3 candidates are all consistent.
		for _, k := range []int{1, 2, 3} {
			if sem[k] != 1 {
				t.Errorf("constrained %s: Sem@%d = %v, want 1", name, k, sem[k])
			}
		}
		if want := (3.0 / 5); math.Abs(sem[5]-want) > 1e-12 {
			t.Errorf("constrained %s: Sem@5 = %v, want %v (only 3 consistent candidates)", name, sem[5], want)
		}
	}
	if _, err := NewConstrainedEvaluator(mustModel(t, "complex", sz), dom, 2); err == nil {
		t.Error("constrained energy-based evaluator accepted")
	}
}

func mustModel(t *testing.T, name string, sz models.Sizes) *models.Model {
	m, err := models.New(name, sz, models.Options{Seed: 3, Dtype: tensor.Float64, InitScale: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// RankAgainst gives OGB's rank: 1 + #negatives scored higher + half the
// ties, here recomputed from log-scores.
func TestRankAgainst(t *testing.T) {
	sz := models.Sizes{Entities: 9, Relations: 3, Rank: 4}
	m := mustModel(t, "cp2", sz)
	ev, err := NewEvaluator(m, 2)
	if err != nil {
		t.Fatal(err)
	}
	test := []kg.Triple{{S: 0, R: 0, O: 1}, {S: 4, R: 1, O: 5}, {S: 8, R: 2, O: 6}}
	heads := [][]int32{{1, 2, 3}, {0, 8}, {4, 4, 5}} // a repeated negative counts twice, as in OGB
	tails := [][]int32{{0, 7}, {1, 2, 3, 6}, {0}}
	got, err := ev.RankAgainst(test, heads, tails, []int{1, 3})
	if err != nil {
		t.Fatal(err)
	}
	score := func(tr kg.Triple) float64 {
		var v float64
		if err := ev.LogScores([]kg.Triple{tr}, func(_ int, s float64) { v = s }); err != nil {
			t.Fatal(err)
		}
		return v
	}
	for i, tr := range test {
		for _, side := range []models.Var{models.Subject, models.Object} {
			negs, gotRank := tails[i], got.ObjectRanks[i]
			if side == models.Subject {
				negs, gotRank = heads[i], got.SubjectRanks[i]
			}
			pos, rank := score(tr), 1.0
			for _, n := range negs {
				alt := tr
				if side == models.Object {
					alt.O = n
				} else {
					alt.S = n
				}
				switch s := score(alt); {
				case s > pos:
					rank++
				case s == pos:
					rank += 0.5
				}
			}
			if gotRank != rank {
				t.Errorf("%v %v: rank %v, want %v", tr, side, gotRank, rank)
			}
		}
	}
	if _, err := ev.RankAgainst(test, heads[:2], tails, nil); err == nil {
		t.Error("mismatched negative lists accepted")
	}
	if _, err := ev.RankAgainst(test, [][]int32{{9}, {0}, {0}}, tails, nil); err == nil {
		t.Error("out-of-range negative accepted")
	}
}

// Filtered Sem@k leaves the known answers other than the true one out of
// the candidates before taking the k best, as the filtered MRR does; on
// this hand-made case that changes Sem@1 and Sem@3.
func TestSemFilteredDiffersFromUnfiltered(t *testing.T) {
	// Rank-1 CP with unit subject and relation embeddings: an object
	// candidate's score is its object embedding, and every subject
	// candidate of (?, 0, o) scores the same (ties go in entity order).
	m := mustModel(t, "cp", models.Sizes{Entities: 4, Relations: 1, Rank: 1})
	copy(m.Param("subject").Data().([]float64), []float64{1, 1, 1, 1})
	copy(m.Param("relation").Data().([]float64), []float64{1})
	copy(m.Param("object").Data().([]float64), []float64{3, 4, 2, 1})
	types, err := kg.NewVocab([]string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	// Relation 0 goes from type a to type b.
	schema := &kg.Schema{Types: types, EntityType: []int32{0, 1, 1, 0}, SubjectType: []int32{0}, ObjectType: []int32{1}}
	test := []kg.Triple{{S: 0, R: 0, O: 2}}
	// Entity 1, the best-scored object, is a known answer of (0, 0, ?).
	filter := kg.NewFilter([]kg.Triple{{S: 0, R: 0, O: 1}}, test)
	ev, err := NewEvaluator(m, 1)
	if err != nil {
		t.Fatal(err)
	}
	ks := []int{1, 2, 3}
	// Subject query, order 0 1 2 3 (types a b b a), a wanted: 1, 1/2, 1/3
	// both ways. Object query, b wanted: unfiltered order 1 0 2 3 gives
	// 1, 1/2, 2/3; filtered order 0 2 3 gives 0, 1/2, 1/3.
	for _, c := range []struct {
		filter *kg.Filter
		want   map[int]float64
	}{
		{nil, map[int]float64{1: 1, 2: 0.5, 3: (1.0/3 + 2.0/3) / 2}},
		{filter, map[int]float64{1: 0.5, 2: 0.5, 3: (1.0/3 + 1.0/3) / 2}},
	} {
		got, err := ev.Sem(test, schema, ks, c.filter)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range ks {
			if math.Abs(got[k]-c.want[k]) > 1e-12 {
				t.Errorf("filtered %v: Sem@%d = %v, want %v", c.filter != nil, k, got[k], c.want[k])
			}
		}
	}
}
