package query

import (
	"errors"
	"math"

	"gekc/internal/logmath"
	"gekc/kg"
	"gekc/models"
)

// Marginal returns log p(target | given) for every value of slot target,
// where given fixes at most one slot (the others Free) and target is
// another one; the third slot is summed out. GeKCs only.
//
// Every case sums the circuit's exact quantities over at most one
// enumerated slot: p(r) from the relation marginals, p(s) and p(o) from
// the pair marginals of every relation, p(· | r) from the pair marginals
// of r, p(r | s) from those of s, p(o | s) from the object candidates of
// (s, r) for every r; the normaliser always comes from marginals.
func (q *Querier) Marginal(given [3]int, target models.Var) ([]float64, error) {
	if q.m.Semantics == models.Energy {
		return nil, ErrEnergy
	}
	fixed := -1
	for _, v := range models.Vars {
		if given[v] >= 0 {
			if fixed >= 0 {
				return nil, errors.New("marginal: at most one slot may be given")
			}
			fixed = int(v)
		}
	}
	if fixed == int(target) {
		return nil, errors.New("marginal: the target slot is given")
	}
	if err := q.checkIDs(given, true); err != nil {
		return nil, err
	}
	rel, err := q.ev.RelationLogMarginals()
	if err != nil {
		return nil, err
	}
	nr := q.m.Sizes.Relations
	normalise := func(x []float64, lz float64) ([]float64, error) {
		if math.IsInf(lz, -1) {
			return nil, errors.New("the given value has no mass under the model (the domain constraint rules it out)")
		}
		for i := range x {
			x[i] -= lz
		}
		return x, nil
	}
	switch {
	case fixed < 0 && target == models.Relation:
		return normalise(rel, logmath.LogSumExp(rel))
	case fixed < 0:
		out := make([]float64, q.m.Sizes.Entities)
		for i := range out {
			out[i] = math.Inf(-1)
		}
		for r := 0; r < nr; r++ {
			pm, err := q.pairMarginals(target, r)
			if err != nil {
				return nil, err
			}
			for i, x := range pm {
				out[i] = logmath.LogAddExp(out[i], x)
			}
		}
		return normalise(out, logmath.LogSumExp(rel))
	case fixed == int(models.Relation):
		r := given[models.Relation]
		pm, err := q.pairMarginals(target, r)
		if err != nil {
			return nil, err
		}
		return normalise(pm, rel[r])
	}
	// One entity slot given: e of slot ev.
	ev := models.Var(fixed)
	e := given[ev]
	other := models.Object
	if ev == models.Object {
		other = models.Subject
	}
	// w[r] = log Σ_y φ(e, r, y): the pair marginals of e with each r,
	// evaluated on run[r], ts[r] with the summed slot at 0.
	w := make([]float64, nr)
	ts := make([][3]int, nr)
	run := make([]kg.Triple, nr)
	for r := range ts {
		ts[r] = [3]int{Free, r, Free}
		ts[r][ev] = e
		t := ts[r]
		t[other] = 0
		run[r] = triple(t)
	}
	if err := q.ev.LogMarginals(run, other, func(i int, lm float64) {
		w[i] = lm
		if !q.Admissible(ts[i]) {
			w[i] = math.Inf(-1)
		}
	}); err != nil {
		return nil, err
	}
	lz := logmath.LogSumExp(w)
	if target == models.Relation {
		return normalise(w, lz)
	}
	out := make([]float64, q.m.Sizes.Entities)
	for i := range out {
		out[i] = math.Inf(-1)
	}
	if err := q.ev.Candidates(run, other, func(i int, row []float64) {
		if math.IsInf(w[i], -1) {
			return
		}
		for j, x := range row {
			out[j] = logmath.LogAddExp(out[j], x)
		}
	}); err != nil {
		return nil, err
	}
	return normalise(out, lz)
}
