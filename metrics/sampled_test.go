package metrics

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"gekc/kg"
	"gekc/models"

	"gorgonia.org/tensor"
)

// Negatives are distinct, never the true entity, never a known triple,
// of the replaced entity's type, and the same whatever the triple's
// position or the sampler instance; a small type gives all it has.
func TestNegativeSampler(t *testing.T) {
	const ne, nr = 60, 3
	rng := rand.New(rand.NewPCG(1, 2))
	known := randomTriples(rng, 400, ne, nr)
	filter := kg.NewFilter(known)
	types, err := kg.NewVocab([]string{"big", "small"})
	if err != nil {
		t.Fatal(err)
	}
	schema := &kg.Schema{Types: types, EntityType: make([]int32, ne), SubjectType: make([]int32, nr), ObjectType: make([]int32, nr)}
	for e := 50; e < ne; e++ {
		schema.EntityType[e] = 1 // ten entities of type "small"
	}
	for _, c := range []struct {
		name   string
		n      int
		schema *kg.Schema
	}{{"untyped", 20, nil}, {"typed", 20, schema}, {"more than a type has", 30, schema}} {
		ns, err := NewNegativeSampler(c.n, 7, ne, c.schema, filter)
		if err != nil {
			t.Fatal(err)
		}
		other, _ := NewNegativeSampler(c.n, 7, ne, c.schema, filter)
		reseeded, _ := NewNegativeSampler(c.n, 8, ne, c.schema, filter)
		differs := false
		for _, tr := range known[:100] {
			for _, side := range []models.Var{models.Subject, models.Object} {
				negs := ns.Draw(nil, tr, side)
				trueE, knownE := tr.O, filter.Objects(tr.S, tr.R)
				if side == models.Subject {
					trueE, knownE = tr.S, filter.Subjects(tr.R, tr.O)
				}
				admissible := 0
				for e := range int32(ne) {
					if (c.schema == nil || c.schema.EntityType[e] == c.schema.EntityType[trueE]) && e != trueE && !slices.Contains(knownE, e) {
						admissible++
					}
				}
				if want := min(c.n, admissible); len(negs) != want {
					t.Fatalf("%s: %v side %v: %d negatives, want %d", c.name, tr, side, len(negs), want)
				}
				seen := map[int32]bool{}
				for _, e := range negs {
					if seen[e] || e == trueE || slices.Contains(knownE, e) || e < 0 || e >= ne ||
						(c.schema != nil && c.schema.EntityType[e] != c.schema.EntityType[trueE]) {
						t.Fatalf("%s: %v side %v: bad negative %d in %v", c.name, tr, side, e, negs)
					}
					seen[e] = true
				}
				if again := other.Draw([]int32{-1}, tr, side); !slices.Equal(again[1:], negs) {
					t.Fatalf("%s: %v: another sampler with the seed drew %v, not %v", c.name, tr, again[1:], negs)
				}
				differs = differs || !slices.Equal(reseeded.Draw(nil, tr, side), negs)
			}
		}
		if !differs {
			t.Errorf("%s: another seed drew the same negatives", c.name)
		}
	}
	if _, err := NewNegativeSampler(0, 1, ne, nil, nil); err == nil {
		t.Error("zero negatives accepted")
	}
}

// RankSampled's ranks are those computed by hand from log-scores of the
// true triple and of each negative: 1 + #greater + #equal/2.
func TestRankSampledMatchesHandRanks(t *testing.T) {
	const ne, nr = 30, 4
	rng := rand.New(rand.NewPCG(5, 6))
	ts := randomTriples(rng, 80, ne, nr)
	filter := kg.NewFilter(ts)
	for _, name := range []string{"complex", "cp+", "complex2"} {
		m, err := models.New(name, models.Sizes{Entities: ne, Relations: nr, Rank: 3}, models.Options{Seed: 2, Dtype: tensor.Float32})
		if err != nil {
			t.Fatal(err)
		}
		ev, err := NewEvaluator(m, 7)
		if err != nil {
			t.Fatal(err)
		}
		ns, _ := NewNegativeSampler(10, 3, ne, nil, filter)
		got, err := ev.RankSampled(ts, ns, []int{1, 3})
		if err != nil {
			t.Fatal(err)
		}
		var subj, obj []float64
		for _, tr := range ts {
			for _, side := range []models.Var{models.Subject, models.Object} {
				cands := []kg.Triple{tr}
				for _, n := range ns.Draw(nil, tr, side) {
					c := tr
					if side == models.Subject {
						c.S = n
					} else {
						c.O = n
					}
					cands = append(cands, c)
				}
				scores := make([]float64, len(cands))
				if err := ev.LogScores(cands, func(i int, s float64) { scores[i] = s }); err != nil {
					t.Fatal(err)
				}
				rank := 1.0
				for _, s := range scores[1:] {
					switch {
					case s > scores[0]:
						rank++
					case s == scores[0]:
						rank += 0.5
					}
				}
				if side == models.Subject {
					subj = append(subj, rank)
				} else {
					obj = append(obj, rank)
				}
			}
		}
		want := summarise(subj, obj, []int{1, 3}, 0)
		if math.Abs(got.MRR-want.MRR) > 1e-12 || got.Hits[3] != want.Hits[3] || got.MRRSubject != want.MRRSubject {
			t.Errorf("%s: RankSampled MRR %v (subject %v, hits@3 %v), by hand %v (%v, %v)", name, got.MRR, got.MRRSubject, got.Hits[3], want.MRR, want.MRRSubject, want.Hits[3])
		}
		if got.MRR == 1 || got.MRR < 1.0/11 {
			t.Errorf("%s: MRR %v out of the range an untrained model gives", name, got.MRR)
		}
	}
}

// A model whose every score is equal ties each true triple with all its
// negatives: every rank is 1 + n/2 (ties count half), as OGB's evaluator
// ranks them.
func TestRankSampledTiesCountHalf(t *testing.T) {
	const ne, nr, n = 30, 2, 10
	m, err := models.New("complex2", models.Sizes{Entities: ne, Relations: nr, Rank: 2}, models.Options{Seed: 1, Dtype: tensor.Float64})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range m.ParamNames() {
		clear(m.Param(name).Data().([]float64)) // φ = 0: every log-score is log ε
	}
	ev, err := NewEvaluator(m, 4)
	if err != nil {
		t.Fatal(err)
	}
	ts := []kg.Triple{{S: 0, R: 0, O: 1}, {S: 2, R: 1, O: 3}, {S: 4, R: 0, O: 5}}
	ns, _ := NewNegativeSampler(n, 1, ne, nil, kg.NewFilter(ts))
	r, err := ev.RankSampled(ts, ns, []int{1, 6})
	if err != nil {
		t.Fatal(err)
	}
	if want := 1.0 / (1 + n/2.0); math.Abs(r.MRR-want) > 1e-12 || r.Hits[6] != 1 || r.Hits[1] != 0 {
		t.Errorf("all tied: MRR %v (want %v), hits@1 %v, hits@6 %v", r.MRR, want, r.Hits[1], r.Hits[6])
	}
}

// Without a filter only the true answer is excluded, on both of Draw's
// paths: rejection among many entities and taking all of a few (returned
// in increasing order), or shuffling a few.
func TestNegativeSamplerWithoutFilter(t *testing.T) {
	tr := kg.Triple{S: 3, R: 0, O: 4}
	for _, c := range []struct {
		entities, n, want int
	}{{1000, 5, 5}, {6, 5, 5}, {6, 9, 5}, {11, 5, 5}, {12, 5, 5}} {
		ns, err := NewNegativeSampler(c.n, 1, c.entities, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, side := range []models.Var{models.Subject, models.Object} {
			answer := tr.O
			if side == models.Subject {
				answer = tr.S
			}
			negs := ns.Draw(nil, tr, side)
			seen := map[int32]bool{}
			for _, e := range negs {
				if e == answer || seen[e] || e < 0 || int(e) >= c.entities {
					t.Errorf("%d entities, %d asked: bad negative %d in %v", c.entities, c.n, e, negs)
				}
				seen[e] = true
			}
			if len(negs) != c.want {
				t.Errorf("%d entities, %d asked, side %v: %d negatives, want %d", c.entities, c.n, side, len(negs), c.want)
			}
			if c.entities-1 <= c.n && !slices.IsSorted(negs) {
				t.Errorf("%d entities, %d asked: all the candidates, not in increasing order: %v", c.entities, c.n, negs)
			}
		}
	}
}

// A triple's subject and object sides draw from streams of their own: on
// an untyped graph without a filter the two lists differ.
func TestNegativeSamplerSidesDiffer(t *testing.T) {
	ns, err := NewNegativeSampler(5, 1, 1000, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range []kg.Triple{{S: 5, R: 0, O: 7}, {S: 1, R: 2, O: 1}} {
		subj, obj := ns.Draw(nil, tr, models.Subject), ns.Draw(nil, tr, models.Object)
		if slices.Equal(subj, obj) {
			t.Errorf("%v: subject and object negatives are the same list %v", tr, subj)
		}
	}
}

// When known answers leave fewer candidates than asked, Draw returns those
// left (not a rejection loop that never ends): 10 entities, 8 known
// objects besides the answer, 3 asked.
func TestNegativeSamplerFewLeftByTheFilter(t *testing.T) {
	var known []kg.Triple
	for o := int32(1); o <= 8; o++ {
		known = append(known, kg.Triple{S: 0, R: 0, O: o})
	}
	ns, err := NewNegativeSampler(3, 1, 10, nil, kg.NewFilter(known))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan []int32, 1)
	go func() { done <- ns.Draw(nil, kg.Triple{S: 0, R: 0, O: 4}, models.Object) }()
	select {
	case got := <-done:
		if !slices.Equal(got, []int32{0, 9}) {
			t.Errorf("negatives %v, want [0 9]", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Draw does not return when the filter leaves fewer candidates than asked")
	}
}
