package dist_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"gekc/dist"
	"gekc/graph"
	"gekc/kg"
	"gekc/metrics"
	"gekc/models"
	"gekc/objectives"

	"gorgonia.org/tensor"
)

// TestEvaluatorMatchesOneProcess evaluates a model trained for two
// sharded steps with the sharded evaluator on 1, 2 and 3 processes and
// with metrics.Evaluator on the whole model: filtered ranks under each
// tie policy (the true answers filtered out or not), ranks against
// sampled and supplied negatives and the mean log-likelihood agree
// (ranks exactly, LL to 1e-10, in float64); energy-based models (trained
// by PLL) rank alike and have no LL on either.
func TestEvaluatorMatchesOneProcess(t *testing.T) {
	const entities, relations, batch = 11, 3, 8
	data := tinyTriples(2*batch, entities, relations, 3)
	test := tinyTriples(9, entities, relations, 4)
	filter := kg.NewFilter(data, test)
	trainOnly := kg.NewFilter(data) // the true answers are not filtered out
	sz := models.Sizes{Entities: entities, Relations: relations, Rank: 3}
	opt := models.Options{Seed: 9, Dtype: tensor.Float64}
	rng := rand.New(rand.NewPCG(1, 2))
	heads, tails := make([][]int32, len(test)), make([][]int32, len(test))
	for i := range test {
		for range 4 {
			heads[i] = append(heads[i], int32(rng.IntN(entities)))
			tails[i] = append(tails[i], int32(rng.IntN(entities)))
		}
	}
	for _, model := range []string{"complex2", "cp+", "tucker2", "rescal+", "complex", "cp"} {
		obj := objectives.Objective(objectives.MLE{})
		if _, sem, _ := models.Lookup(model); sem == models.Energy {
			obj = objectives.PLL{Weights: objectives.Uniform}
		}
		for _, np := range []int{1, 2, 3} {
			name := fmt.Sprintf("%s/P=%d", model, np)
			sts := newLocalSteppers(t, np, model, sz, opt, obj, batch, func() graph.Optimizer { return graph.NewAdam(0.05) })
			for lo := 0; lo < len(data); lo += batch {
				stepAll(t, sts, data[lo:lo+batch])
			}
			ref, err := models.New(model, sz, opt)
			if err != nil {
				t.Fatal(err)
			}
			for _, table := range ref.ParamNames() {
				copy(ref.Param(table).Data().([]float64), whole(sts, table))
			}
			want, err := metrics.NewEvaluator(ref, 4)
			if err != nil {
				t.Fatal(err)
			}
			ns, err := metrics.NewNegativeSampler(5, 7, entities, nil, filter)
			if err != nil {
				t.Fatal(err)
			}
			queries := []evalQuery{{"ll", func() (any, error) { return intractable(want.LogLikelihood(test)) },
				func(e *dist.Evaluator) (any, error) { return intractable(e.LogLikelihood(test)) }},
				{"sampled", func() (any, error) { return want.RankSampled(test, ns, []int{1, 3}) },
					func(e *dist.Evaluator) (any, error) { return e.RankSampled(test, ns, []int{1, 3}) }},
				{"against", func() (any, error) { return want.RankAgainst(test, heads, tails, []int{1, 3}) },
					func(e *dist.Evaluator) (any, error) { return e.RankAgainst(test, heads, tails, []int{1, 3}) }}}
			for _, p := range []metrics.TiePolicy{metrics.Pessimistic, metrics.Realistic, metrics.Optimistic} {
				for fname, f := range map[string]*kg.Filter{"all": filter, "train": trainOnly} {
					queries = append(queries, evalQuery{"rank/" + p.String() + "/" + fname,
						func() (any, error) { return want.Rank(test, f, p, []int{1, 3}) },
						func(e *dist.Evaluator) (any, error) { return e.Rank(test, f, p, []int{1, 3}) }})
				}
			}
			evs := make([]*dist.Evaluator, np)
			for p, st := range sts {
				if evs[p], err = st.Evaluator(0); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
			}
			// Then with one row NaN: its queries' true scores are not
			// finite, and both count them alike.
			poisoned := false
			for pass := 0; pass < 2; pass++ {
				if pass == 1 {
					poison(ref, sts, int(test[0].S))
					poisoned, queries = true, queries[1:] // the LL is NaN
				}
				checkQueries(t, name, poisoned, queries, evs)
			}
		}
	}
}

type evalQuery struct {
	what string
	one  func() (any, error)
	part func(e *dist.Evaluator) (any, error)
}

func checkQueries(t *testing.T, name string, poisoned bool, queries []evalQuery, evs []*dist.Evaluator) {
	t.Helper()
	np := len(evs)
	for _, q := range queries {
		w, err := q.one()
		if err != nil {
			t.Fatalf("%s: %s: %v", name, q.what, err)
		}
		got := make([]any, np)
		errs := make([]error, np)
		var wg sync.WaitGroup
		for p, e := range evs {
			wg.Go(func() { got[p], errs[p] = q.part(e) })
		}
		wg.Wait()
		for p := range got {
			if errs[p] != nil {
				t.Fatalf("%s: %s: process %d: %v", name, q.what, p, errs[p])
			}
			if !sameAnswer(got[p], w) {
				t.Errorf("%s: %s (NaN row %v): process %d has %v, one process %v", name, q.what, poisoned, p, got[p], w)
			}
		}
		if r, ok := w.(metrics.Ranking); ok && poisoned && r.NonFinite == 0 {
			t.Errorf("%s: %s: no non-finite true score with a NaN row", name, q.what)
		}
	}
}

// poison sets entity e's rows to NaN in the whole model and its owner's part.
func poison(ref *models.Model, sts []*dist.Stepper, e int) {
	for _, table := range ref.Layout.EntityTables() {
		w := ref.Param(table).Data().([]float64)
		cols := ref.Param(table).Shape()[1]
		for j := range cols {
			w[e*cols+j] = math.NaN()
		}
		for p, st := range sts {
			if lo, hi := st.Rows().Lo(p), st.Rows().Hi(p); e >= lo && e < hi {
				own := st.Param(table).Data().([]float64)
				for j := range cols {
					own[(e-lo)*cols+j] = math.NaN()
				}
			}
		}
	}
}

// intractable turns models.ErrIntractable (an energy-based model's LL)
// into an answer to compare.
func intractable(ll float64, err error) (any, error) {
	if errors.Is(err, models.ErrIntractable) {
		return "intractable", nil
	}
	return ll, err
}

func sameAnswer(got, want any) bool {
	switch w := want.(type) {
	case string:
		return got == w
	case float64:
		return close(got.(float64), w, 1e-10)
	case metrics.Ranking:
		g := got.(metrics.Ranking)
		return slices.Equal(g.SubjectRanks, w.SubjectRanks) && slices.Equal(g.ObjectRanks, w.ObjectRanks) && g.NonFinite == w.NonFinite
	}
	return false
}
