package main

import (
	"errors"
	"math"

	"gekc/graph"
	"gekc/internal/logmath"
	"gekc/models"

	G "gorgonia.org/gorgonia"
)

// querier answers exact queries of one trained model, constrained or not,
// through forward-only programs compiled once for a fixed batch of
// (s, r, o) index triples: the log-scores of every candidate of a slot,
// the circuit's own marginal over a slot, log φ, log Z and the relations'
// marginals. Distributions are normalised by the circuit's marginals, not
// by summing the candidates, so that they sum to one is a check of the
// model's exact marginals.
type querier struct {
	m       *models.Model
	dom     *models.Domain
	batch   int
	s, r, o []int

	cand, marg         [3]*G.Node
	candProg, margProg [3]*graph.Program
	logScore           *G.Node
	scoreProg          *graph.Program
	logZ, relMarg      *G.Node // nil for energy-based models
	zProg, relProg     *graph.Program
}

var errEnergyMarginal = errors.New("an energy-based model has no tractable partition function, so no marginals, joint probabilities or samples; it answers completions and conditionals (softmax of its scores)")

func newQuerier(m *models.Model, dom *models.Domain, batch int) (*querier, error) {
	q := &querier{m: m, dom: dom, batch: batch, s: make([]int, batch), r: make([]int, batch), o: make([]int, batch)}
	g := G.NewGraph()
	c, err := m.BindConstrained(g, dom)
	if err != nil {
		return nil, err
	}
	b, err := c.NewBatch(graph.IndexVector(g, "s", q.s), graph.IndexVector(g, "r", q.r), graph.IndexVector(g, "o", q.o))
	if err != nil {
		return nil, err
	}
	for _, v := range models.Vars {
		if q.cand[v], err = c.Candidates(b, v); err != nil {
			return nil, err
		}
		if q.candProg[v], err = graph.Compile(q.cand[v]); err != nil {
			return nil, err
		}
		if q.marg[v], err = c.LogMarginal(b, v); err != nil {
			return nil, err
		}
		if q.margProg[v], err = graph.Compile(q.marg[v]); err != nil {
			return nil, err
		}
	}
	if q.logScore, err = c.LogScore(b); err != nil {
		return nil, err
	}
	if q.scoreProg, err = graph.Compile(q.logScore); err != nil {
		return nil, err
	}
	if m.Semantics == models.Energy {
		return q, nil
	}
	if q.logZ, err = c.LogPartition(); err != nil {
		return nil, err
	}
	if q.zProg, err = graph.Compile(q.logZ); err != nil {
		return nil, err
	}
	if q.relMarg, err = c.RelationLogMarginals(); err != nil {
		return nil, err
	}
	if q.relProg, err = graph.Compile(q.relMarg); err != nil {
		return nil, err
	}
	return q, nil
}

// size is the number of values slot v takes.
func (q *querier) size(v models.Var) int {
	if v == models.Relation {
		return q.m.Sizes.Relations
	}
	return q.m.Sizes.Entities
}

// each runs prog on the triples in batches and calls fn with each row
// (width columns) of out; the slice is reused.
func (q *querier) each(triples [][3]int, prog *graph.Program, out *G.Node, width int, fn func(i int, row []float64)) error {
	row := make([]float64, width)
	for from := 0; from < len(triples); from += q.batch {
		n := min(q.batch, len(triples)-from)
		for i := 0; i < q.batch; i++ {
			t := triples[from+min(i, n-1)]
			q.s[i], q.r[i], q.o[i] = t[0], t[1], t[2]
		}
		if err := prog.Run(); err != nil {
			return err
		}
		for i := 0; i < n; i++ {
			switch d := out.Value().Data().(type) {
			case []float32:
				for j, x := range d[i*width : (i+1)*width] {
					row[j] = float64(x)
				}
			case []float64:
				copy(row, d[i*width:(i+1)*width])
			}
			fn(from+i, row)
		}
	}
	return nil
}

// admissible reports whether the constraint gives (s, r, o) any mass,
// with −1 for a slot left free.
func (q *querier) admissible(t [3]int) bool {
	d := q.dom
	if d == nil {
		return true
	}
	s, r, o := t[0], t[1], t[2]
	if r < 0 {
		if s < 0 || o < 0 {
			return true
		}
		for rr := range d.SubjectType {
			if d.Consistent(s, rr, o) {
				return true
			}
		}
		return false
	}
	return (s < 0 || d.EntityType[s] == d.SubjectType[r]) && (o < 0 || d.EntityType[o] == d.ObjectType[r])
}

// conditional returns log p(v | the other two slots of t) for every value
// of v (t[v] is ignored): the candidates' log-scores minus the circuit's
// marginal over v. For an energy-based model this is the softmax of its
// scores.
func (q *querier) conditional(t [3]int, v models.Var) ([]float64, error) {
	t[v] = 0
	if !q.admissible(withFree(t, v)) {
		return nil, errors.New("the domain constraint gives the given slots no mass: no relation of the schema admits their types")
	}
	var lm float64
	if err := q.each([][3]int{t}, q.margProg[v], q.marg[v], 1, func(_ int, row []float64) { lm = row[0] }); err != nil {
		return nil, err
	}
	out := make([]float64, q.size(v))
	err := q.each([][3]int{t}, q.candProg[v], q.cand[v], len(out), func(_ int, row []float64) {
		for j, x := range row {
			out[j] = x - lm
		}
	})
	return out, err
}

func withFree(t [3]int, v models.Var) [3]int {
	t[v] = -1
	return t
}

// logJoint returns log p(s, r, o) of each triple.
func (q *querier) logJoint(triples [][3]int) ([]float64, error) {
	lz, err := q.logPartition()
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(triples))
	err = q.each(triples, q.scoreProg, q.logScore, 1, func(i int, row []float64) { out[i] = row[0] - lz })
	return out, err
}

func (q *querier) logPartition() (float64, error) {
	if q.zProg == nil {
		return 0, errEnergyMarginal
	}
	if err := q.zProg.Run(); err != nil {
		return 0, err
	}
	return graph.Scalar(q.logZ.Value()), nil
}

// relationLogMarginals returns log Σ_{s,o} φ_K(s, r, o) for every r.
func (q *querier) relationLogMarginals() ([]float64, error) {
	if q.relProg == nil {
		return nil, errEnergyMarginal
	}
	if err := q.relProg.Run(); err != nil {
		return nil, err
	}
	out := make([]float64, q.m.Sizes.Relations)
	switch d := q.relMarg.Value().Data().(type) {
	case []float32:
		for i, x := range d {
			out[i] = float64(x)
		}
	case []float64:
		copy(out, d)
	}
	return out, nil
}

// pairMarginals returns, for every value x of slot free (Subject or
// Object) paired with the given relation r, log Σ_y φ_K with the remaining
// entity slot y summed out: log Σ_o φ_K(x, r, o) for free = Subject.
// Pairs the constraint rules out get −Inf (the circuit's constrained
// marginal over y checks only y's type).
func (q *querier) pairMarginals(free models.Var, r int) ([]float64, error) {
	summed := models.Object
	if free == models.Object {
		summed = models.Subject
	}
	ts := make([][3]int, q.m.Sizes.Entities)
	for e := range ts {
		ts[e][free], ts[e][models.Relation] = e, r
	}
	out := make([]float64, len(ts))
	err := q.each(ts, q.margProg[summed], q.marg[summed], 1, func(i int, row []float64) {
		out[i] = row[0]
		if !q.admissible(withFree(ts[i], summed)) {
			out[i] = math.Inf(-1)
		}
	})
	return out, err
}

// marginal returns log p(target | given) for every value of target, where
// given fixes at most one slot (−1: free) and target is another one; the
// third slot is summed out. GeKCs only.
//
// Every case sums the circuit's exact quantities over at most one
// enumerated slot: p(r) from the relation marginals, p(s) and p(o) from
// the pair marginals of every relation, p(· | r) from the pair marginals
// of r, p(r | s) from those of s, p(o | s) from the object candidates of
// (s, r) for every r; the normaliser always comes from marginals.
func (q *querier) marginal(given [3]int, target models.Var) ([]float64, error) {
	if q.relProg == nil {
		return nil, errEnergyMarginal
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
	rel, err := q.relationLogMarginals()
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
	// w[r] = log Σ_y φ_K(e, r, y): the pair marginals of e with each r.
	w := make([]float64, nr)
	ts := make([][3]int, nr)
	for r := range ts {
		ts[r] = [3]int{-1, r, -1}
		ts[r][ev] = e
	}
	other := models.Object
	if ev == models.Object {
		other = models.Subject
	}
	run := make([][3]int, nr)
	for r := range run {
		run[r] = ts[r]
		run[r][other] = 0
	}
	if err := q.each(run, q.margProg[other], q.marg[other], 1, func(i int, row []float64) {
		w[i] = row[0]
		if !q.admissible(ts[i]) {
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
	if err := q.each(run, q.candProg[other], q.cand[other], len(out), func(i int, row []float64) {
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
