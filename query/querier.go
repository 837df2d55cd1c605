package query

import (
	"errors"
	"fmt"
	"math"

	"gekc/kg"
	"gekc/metrics"
	"gekc/models"
)

// Free marks a slot of a triple that is not given.
const Free = -1

// ErrEnergy is returned for every query that needs a partition function
// when the model is energy-based. errors.Is also matches it with
// models.ErrIntractable.
var ErrEnergy error = energyError{}

type energyError struct{}

func (energyError) Error() string {
	return "an energy-based model has no tractable partition function, so no marginals, joint probabilities or samples; it answers completions and conditionals (softmax of its scores)"
}

func (energyError) Is(target error) bool { return target == models.ErrIntractable }

// Querier answers exact queries of one model, constrained or not. It reads
// the model's parameters at every call, so it follows further training;
// it is not safe for concurrent use (its programs share input buffers).
type Querier struct {
	m   *models.Model
	dom *models.Domain
	ev  *metrics.Evaluator
}

// New binds m, under the domain constraint dom (nil: none), to forward
// programs that evaluate up to batch triples per run, fewer when a batch's
// scores of every candidate would pass metrics.DefaultBatchBuffers. The
// batch trades memory for the number of runs a query over many triples
// takes; answers do not depend on it.
func New(m *models.Model, dom *models.Domain, batch int) (*Querier, error) {
	ev, err := metrics.NewEvaluatorWithin(m, dom, batch, metrics.DefaultBufferLimit)
	if err != nil {
		return nil, err
	}
	return &Querier{m: m, dom: dom, ev: ev}, nil
}

// Model returns the queried model.
func (q *Querier) Model() *models.Model { return q.m }

// Domain returns the domain constraint the answers are under (nil: none).
func (q *Querier) Domain() *models.Domain { return q.dom }

// size is the number of values slot v takes.
func (q *Querier) size(v models.Var) int {
	if v == models.Relation {
		return q.m.Sizes.Relations
	}
	return q.m.Sizes.Entities
}

func triple(t [3]int) kg.Triple { return kg.Triple{S: int32(t[0]), R: int32(t[1]), O: int32(t[2])} }

// Admissible reports whether the domain constraint leaves any mass to the
// triples matching t, whose slots may be Free. Without a constraint every
// triple is admissible.
func (q *Querier) Admissible(t [3]int) bool {
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

// checkIDs returns an error naming the first slot of t that holds no id
// of the model; Free is accepted where free is true.
func (q *Querier) checkIDs(t [3]int, free bool) error {
	for _, v := range models.Vars {
		if (free && t[v] == Free) || (t[v] >= 0 && t[v] < q.size(v)) {
			continue
		}
		return fmt.Errorf("%v %d: the model has ids 0 to %d", v, t[v], q.size(v)-1)
	}
	return nil
}

func withFree(t [3]int, v models.Var) [3]int {
	t[v] = Free
	return t
}

// Conditional returns log p(v | the other two slots of t) for every value
// of slot v (t[v] is ignored): the candidates' log-scores minus the
// circuit's marginal over v. For an energy-based model this is the
// log-softmax of its scores. It is an error if the constraint gives the
// two given slots no mass.
func (q *Querier) Conditional(t [3]int, v models.Var) ([]float64, error) {
	t[v] = 0
	if err := q.checkIDs(t, false); err != nil {
		return nil, err
	}
	if !q.Admissible(withFree(t, v)) {
		return nil, errors.New("the domain constraint gives the given slots no mass: no relation of the schema admits their types")
	}
	ts := []kg.Triple{triple(t)}
	var lm float64
	if err := q.ev.LogMarginals(ts, v, func(_ int, x float64) { lm = x }); err != nil {
		return nil, err
	}
	out := make([]float64, q.size(v))
	err := q.ev.Candidates(ts, v, func(_ int, row []float64) {
		for j, x := range row {
			out[j] = x - lm
		}
	})
	return out, err
}

// SlotConditionals returns the three conditionals of the triple t (no
// slot Free), log p(s | r, o), log p(r | s, o) and log p(o | s, r), indexed
// by models.Var; a slot whose two others the constraint gives no mass
// gets −Inf. For an energy-based model they are log-softmaxes of its
// scores.
func (q *Querier) SlotConditionals(t [3]int) ([3]float64, error) {
	var out [3]float64
	if err := q.checkIDs(t, false); err != nil {
		return out, err
	}
	for _, v := range models.Vars {
		out[v] = math.Inf(-1)
		if q.Admissible(withFree(t, v)) {
			lp, err := q.Conditional(t, v)
			if err != nil {
				return out, err
			}
			out[v] = lp[t[v]]
		}
	}
	return out, nil
}

// LogJoint returns log p(s, r, o) of each triple (none Free). GeKCs only.
func (q *Querier) LogJoint(triples [][3]int) ([]float64, error) {
	lz, err := q.LogPartition()
	if err != nil {
		return nil, err
	}
	ts := make([]kg.Triple, len(triples))
	for i, t := range triples {
		if err := q.checkIDs(t, false); err != nil {
			return nil, fmt.Errorf("triple %d: %w", i, err)
		}
		ts[i] = triple(t)
	}
	out := make([]float64, len(triples))
	err = q.ev.LogScores(ts, func(i int, ls float64) { out[i] = ls - lz })
	return out, err
}

// LogPartition returns log Z, the log of the model's (constrained) scores
// summed over every triple. GeKCs only.
func (q *Querier) LogPartition() (float64, error) {
	if q.m.Semantics == models.Energy {
		return 0, ErrEnergy
	}
	return q.ev.LogPartition()
}

// RelationLogMarginals returns log Σ_{s,o} φ(s, r, o) for every relation
// r: unnormalised; p(r) is their log-softmax. GeKCs only.
func (q *Querier) RelationLogMarginals() ([]float64, error) {
	if q.m.Semantics == models.Energy {
		return nil, ErrEnergy
	}
	return q.ev.RelationLogMarginals()
}

// PairLogMarginals returns, for every entity x in slot free (Subject or
// Object) with the relation r, log Σ_y φ with the other entity slot y
// summed out: log Σ_o φ(x, r, o) for free = Subject. Pairs the constraint
// rules out get −Inf. Unnormalised; GeKCs only.
func (q *Querier) PairLogMarginals(free models.Var, r int) ([]float64, error) {
	if q.m.Semantics == models.Energy {
		return nil, ErrEnergy
	}
	if free == models.Relation {
		return nil, errors.New("PairLogMarginals: the free slot is an entity slot, subject or object")
	}
	if err := q.checkIDs([3]int{Free, r, Free}, true); err != nil {
		return nil, err
	}
	return q.pairMarginals(free, r)
}

func (q *Querier) pairMarginals(free models.Var, r int) ([]float64, error) {
	summed := models.Object
	if free == models.Object {
		summed = models.Subject
	}
	ts := make([][3]int, q.m.Sizes.Entities)
	kts := make([]kg.Triple, len(ts))
	for e := range ts {
		ts[e][free], ts[e][models.Relation] = e, r
		kts[e] = triple(ts[e])
	}
	out := make([]float64, len(ts))
	// The circuit's constrained marginal over y checks only the type of
	// the given entity, so pairs that the relation's schema rules out
	// are set to −Inf here.
	err := q.ev.LogMarginals(kts, summed, func(i int, lm float64) {
		out[i] = lm
		if !q.Admissible(withFree(ts[i], summed)) {
			out[i] = math.Inf(-1)
		}
	})
	return out, err
}
