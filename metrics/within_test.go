package metrics

import (
	"math/rand/v2"
	"testing"

	"gekc/kg"
	"gekc/models"

	"gorgonia.org/tensor"
)

// Cutting the evaluation batch to a buffer budget changes how many queries
// a program run answers, never an answer: ranks, Sem@k's inputs and
// log-likelihoods are those of the uncut batch, for each semantics.
func TestEvaluatorWithinCutsBatchNotResults(t *testing.T) {
	const ne, nr = 40, 5
	rng := rand.New(rand.NewPCG(3, 4))
	var ts []kg.Triple
	for range 150 {
		ts = append(ts, kg.Triple{S: int32(rng.IntN(ne)), R: int32(rng.IntN(nr)), O: int32(rng.IntN(ne))})
	}
	filter := kg.NewFilter(ts)
	for _, name := range []string{"complex", "cp+", "complex2", "rescal2"} {
		m, err := models.New(name, models.Sizes{Entities: ne, Relations: nr, Rank: 4}, models.Options{Seed: 5, Dtype: tensor.Float64})
		if err != nil {
			t.Fatal(err)
		}
		whole, err := NewEvaluatorWithin(m, nil, 64, BufferLimit{})
		if err != nil {
			t.Fatal(err)
		}
		one, err := NewEvaluatorWithin(m, nil, 1, BufferLimit{})
		if err != nil {
			t.Fatal(err)
		}
		budget := one.BufferBytes() + (whole.BufferBytes()-one.BufferBytes())/10
		cut, err := NewEvaluatorWithin(m, nil, 64, BufferLimit{Total: budget})
		if err != nil {
			t.Fatal(err)
		}
		if cut.BatchSize() >= 64 || cut.BatchSize() < 2 || cut.BufferBytes() > budget {
			t.Fatalf("%s: budget %d bytes (64 queries take %d): batch %d taking %d", name, budget, whole.BufferBytes(), cut.BatchSize(), cut.BufferBytes())
		}
		perQuery := (whole.BufferBytes() - one.BufferBytes()) / 63
		if byBatch, err := NewEvaluatorWithin(m, nil, 64, BufferLimit{Batch: 5 * perQuery}); err != nil || byBatch.BatchSize() != 5 {
			t.Errorf("%s: batch buffers of 5 queries: batch %d, %v", name, byBatch.BatchSize(), err)
		}
		if tiny, err := NewEvaluatorWithin(m, nil, 64, BufferLimit{Total: 1}); err != nil || tiny.BatchSize() != 1 {
			t.Errorf("%s: a budget below one query: batch %d, %v (want 1)", name, tiny.BatchSize(), err)
		}
		want, err := whole.Rank(ts, filter, Realistic, []int{1, 10})
		if err != nil {
			t.Fatal(err)
		}
		got, err := cut.Rank(ts, filter, Realistic, []int{1, 10})
		if err != nil {
			t.Fatal(err)
		}
		if got.MRR != want.MRR || got.MRRSubject != want.MRRSubject || got.Hits[10] != want.Hits[10] {
			t.Errorf("%s: batch %d ranks MRR %v (subject %v), batch 64 %v (%v)", name, cut.BatchSize(), got.MRR, got.MRRSubject, want.MRR, want.MRRSubject)
		}
		if m.Semantics == models.Energy {
			continue
		}
		llWant, err := whole.LogLikelihood(ts)
		if err != nil {
			t.Fatal(err)
		}
		llGot, err := cut.LogLikelihood(ts)
		if err != nil {
			t.Fatal(err)
		}
		if llGot != llWant {
			t.Errorf("%s: log-likelihood %v with batch %d, %v with 64", name, llGot, cut.BatchSize(), llWant)
		}
	}
	if _, err := NewEvaluatorWithin(nil, nil, 64, BufferLimit{Batch: -1}); err == nil {
		t.Error("a negative budget was accepted")
	}
}

func TestBufferLimitRows(t *testing.T) {
	for _, c := range []struct {
		limit           BufferLimit
		fixed, perQuery int64
		max, want       int
	}{
		{BufferLimit{}, 100, 10, 64, 64},
		{BufferLimit{Batch: 100}, 1000, 10, 64, 10},
		{BufferLimit{Batch: 1000}, 0, 10, 64, 64},
		{BufferLimit{Total: 1100}, 1000, 10, 64, 10},
		{BufferLimit{Total: 900}, 1000, 10, 64, 1},
		{BufferLimit{Batch: 50, Total: 1100}, 1000, 10, 64, 5},
		{BufferLimit{Batch: 5}, 0, 10, 64, 1},
	} {
		if got := c.limit.Rows(c.fixed, c.perQuery, c.max); got != c.want {
			t.Errorf("%+v.Rows(%d, %d, %d) = %d, want %d", c.limit, c.fixed, c.perQuery, c.max, got, c.want)
		}
	}
}
