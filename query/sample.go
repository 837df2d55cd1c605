package query

import (
	"errors"
	"math"
	"math/rand/v2"

	"gekc/models"
)

// SampleGiven draws n triples exactly from p(· | given), given fixing the
// subject and/or the relation (the other slots Free): r from p(r | s) or
// p(r), then s from p(s | r) unless given, then o from p(o | s, r), each
// by inverse transform with one uniform of rng. Distributions are cached
// per call, so many samples cost few model evaluations. Under a domain
// constraint no sample violates it. GeKCs only.
//
// models.Sampler draws unconditioned samples faster, in batches.
func (q *Querier) SampleGiven(given [3]int, n int, rng *rand.Rand) ([][3]int, error) {
	if q.m.Semantics == models.Energy {
		return nil, ErrEnergy
	}
	if given[models.Object] >= 0 {
		return nil, errors.New("sampling conditions on the subject and/or the relation only")
	}
	if err := q.checkIDs(given, true); err != nil {
		return nil, err
	}
	draw := func(lp []float64) int {
		u := rng.Float64()
		acc := 0.0
		last := -1
		for i, x := range lp {
			if math.IsInf(x, -1) {
				continue
			}
			acc += math.Exp(x)
			last = i
			if u < acc {
				return i
			}
		}
		return last // rounding: the mass summed to just under u
	}
	var relDist []float64
	if given[models.Relation] < 0 {
		var err error
		if relDist, err = q.Marginal([3]int{given[0], Free, Free}, models.Relation); err != nil {
			return nil, err
		}
	}
	subjDist := map[int][]float64{}
	objDist := map[[2]int][]float64{}
	out := make([][3]int, 0, n)
	for len(out) < n {
		t := given
		if t[1] < 0 {
			t[1] = draw(relDist)
		}
		if t[0] < 0 {
			d, ok := subjDist[t[1]]
			if !ok {
				var err error
				if d, err = q.Marginal([3]int{Free, t[1], Free}, models.Subject); err != nil {
					return nil, err
				}
				subjDist[t[1]] = d
			}
			t[0] = draw(d)
		}
		key := [2]int{t[0], t[1]}
		d, ok := objDist[key]
		if !ok {
			var err error
			if d, err = q.Conditional(t, models.Object); err != nil {
				return nil, err
			}
			objDist[key] = d
		}
		t[2] = draw(d)
		if t[0] < 0 || t[1] < 0 || t[2] < 0 {
			return nil, errors.New("sampling: a distribution has no mass")
		}
		out = append(out, t)
	}
	return out, nil
}
