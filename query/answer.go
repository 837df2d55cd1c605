package query

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gekc/kg"
	"gekc/metrics"
	"gekc/models"
)

// An Answerer asks a Querier about the triples of a dataset and answers in
// names: Results whose rows name the entities and relations, with their
// probabilities and whether the triple is known (in the train, valid or
// test split). It is what `go run ./experiments query` prints; like its
// Querier, it is not safe for concurrent use.
type Answerer struct {
	q     *Querier
	ds    *kg.Dataset
	known *kg.Filter
}

// NewAnswerer binds q to ds, whose vocabularies name the model's ids. It
// returns an error if the model's entities or relations are not as many
// as the dataset's.
func NewAnswerer(q *Querier, ds *kg.Dataset) (*Answerer, error) {
	sz := q.Model().Sizes
	if sz.Entities != ds.Entities.Len() || sz.Relations != ds.Relations.Len() {
		return nil, fmt.Errorf("query: model %s has %d entities and %d relations, dataset %s %d and %d",
			q.Model().Name, sz.Entities, sz.Relations, ds.Name, ds.Entities.Len(), ds.Relations.Len())
	}
	return &Answerer{q: q, ds: ds, known: kg.NewFilter(ds.Train, ds.Valid, ds.Test)}, nil
}

// Triple looks up the names of a subject, a relation and an object; an
// empty name leaves its slot Free. An unknown name is a *kg.NameError
// that suggests close names.
func (a *Answerer) Triple(s, r, o string) ([3]int, error) {
	t := [3]int{Free, Free, Free}
	for v, name := range [3]string{s, r, o} {
		if name == "" {
			continue
		}
		vocab, kind := a.ds.Entities, "entity"
		if models.Var(v) == models.Relation {
			vocab, kind = a.ds.Relations, "relation"
		}
		id, err := vocab.Lookup(kind, name)
		if err != nil {
			return t, err
		}
		t[v] = int(id)
	}
	return t, nil
}

// names returns the names of t's slots, "?" for a free one.
func (a *Answerer) names(t [3]int) [3]string {
	out := [3]string{"?", "?", "?"}
	for v, id := range t {
		if id < 0 {
			continue
		}
		if models.Var(v) == models.Relation {
			out[v] = a.ds.Relations.Name(int32(id))
		} else {
			out[v] = a.ds.Entities.Name(int32(id))
		}
	}
	return out
}

func (a *Answerer) describe(t [3]int) string {
	n := a.names(t)
	return fmt.Sprintf("(%s, %s, %s)", n[0], n[1], n[2])
}

func (a *Answerer) isKnown(t [3]int) bool { return a.known.Contains(triple(t)) }

// Completions answers a triple with one Free slot by its k most probable
// completions (k = 0: all), best first, with p and log p: a GeKC's exact
// conditional, or an energy-based model's softmax of its scores (Kind
// says which). filtered leaves out the known triples; the probabilities
// stay the model's and the ranks count the rows listed.
func (a *Answerer) Completions(given [3]int, k int, filtered bool) (*Result, error) {
	free, n := models.Var(-1), 0
	for v, id := range given {
		if id == Free {
			free, n = models.Var(v), n+1
		}
	}
	if n != 1 {
		return nil, fmt.Errorf("query: completions of %s: want exactly one free slot, got %d", a.describe(given), n)
	}
	lp, err := a.q.Conditional(given, free)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", a.describe(given), err)
	}
	kind := KindConditional
	if a.q.Model().Semantics == models.Energy {
		kind = KindSoftmax
	}
	res := a.result(a.describe(given), kind)
	res.Filtered = filtered
	for _, i := range metrics.TopK(lp, 0, nil) {
		t := given
		t[free] = i
		known := a.isKnown(t)
		if known && filtered {
			continue
		}
		nm := a.names(t)
		res.Rows = append(res.Rows, Row{Subject: nm[0], Relation: nm[1], Object: nm[2], Prob: fptr(math.Exp(lp[i])), LogProb: fptr(lp[i]), Known: &known})
		if k > 0 && len(res.Rows) == k {
			break
		}
	}
	rank(res.Rows)
	return res, nil
}

// Score answers full triples by log p(s, r, o) (GeKCs only; p too) and
// their three conditionals log p(s | r, o), log p(r | s, o) and
// log p(o | s, r), one row per triple, in order. For an energy-based model
// the conditionals are softmaxes of its scores and there is no joint.
func (a *Answerer) Score(triples [][3]int) (*Result, error) {
	res := a.result("log p(s, r, o) and log p(s | r, o), log p(r | s, o), log p(o | s, r)", KindJoint)
	var joint []float64
	if a.q.Model().Semantics != models.Energy {
		var err error
		if joint, err = a.q.LogJoint(triples); err != nil {
			return nil, err
		}
	} else {
		res.Query = "softmax of the scores over each slot (energy-based: no joint probability)"
		res.Kind = KindSoftmax
	}
	for i, t := range triples {
		nm := a.names(t)
		known := a.isKnown(t)
		row := Row{Subject: nm[0], Relation: nm[1], Object: nm[2], Known: &known}
		if joint != nil {
			row.LogProb, row.Prob = fptr(joint[i]), fptr(math.Exp(joint[i]))
		}
		lc, err := a.q.SlotConditionals(t)
		if err != nil {
			return nil, err
		}
		row.LogPSubject, row.LogPRelation, row.LogPObject = fptr(lc[0]), fptr(lc[1]), fptr(lc[2])
		res.Rows = append(res.Rows, row)
	}
	return res, nil
}

// Marginal answers the marginal of the target slot given at most one other
// slot of given (GeKCs only; see Querier.Marginal) by its k most probable
// values (k = 0: all), best first, with p and log p.
func (a *Answerer) Marginal(given [3]int, target models.Var, k int) (*Result, error) {
	lp, err := a.q.Marginal(given, target)
	if err != nil {
		return nil, err
	}
	res := a.result(fmt.Sprintf("p(%v)", target), KindMarginal)
	nm := a.names(given)
	for _, v := range models.Vars {
		if given[v] >= 0 {
			res.Query = fmt.Sprintf("p(%v | %v = %s)", target, v, nm[v])
		}
	}
	for _, i := range metrics.TopK(lp, k, nil) {
		row := Row{Prob: fptr(math.Exp(lp[i])), LogProb: fptr(lp[i])}
		switch target {
		case models.Subject:
			row.Subject = a.ds.Entities.Name(int32(i))
		case models.Relation:
			row.Relation = a.ds.Relations.Name(int32(i))
		default:
			row.Object = a.ds.Entities.Name(int32(i))
		}
		res.Rows = append(res.Rows, row)
	}
	rank(res.Rows)
	return res, nil
}

// Sample answers n exact samples (s, r, o) conditioned on the given
// subject and/or relation (GeKCs only; see Querier.SampleGiven), one row
// per sample.
func (a *Answerer) Sample(given [3]int, n int, rng *rand.Rand) (*Result, error) {
	ts, err := a.q.SampleGiven(given, n, rng)
	if err != nil {
		return nil, err
	}
	res := a.result(a.describe(given), KindSample)
	for _, t := range ts {
		nm := a.names(t)
		res.Rows = append(res.Rows, Row{Subject: nm[0], Relation: nm[1], Object: nm[2]})
	}
	return res, nil
}

func (a *Answerer) result(q string, kind Kind) *Result {
	return &Result{Model: a.q.Model().Name, Constrained: a.q.Domain() != nil, Query: q, Kind: kind}
}

// rank numbers rows from 1.
func rank(rows []Row) {
	for i := range rows {
		rows[i].Rank = i + 1
	}
}
