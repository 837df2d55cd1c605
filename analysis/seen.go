package analysis

import (
	"errors"
	"fmt"
	"io"
	"math"

	"gekc/graph"
	"gekc/kg"
	"gekc/models"
)

// A MeanLL is a mean test log-likelihood over N triples (NaN when N = 0).
type MeanLL struct {
	LL float64
	N  int
}

// SeenSplit is a GeKC's test log-likelihood split by what training gave
// the test triples' entities. An entity that never occurs in training gets
// no gradient from the data terms, only from the normaliser's; with
// role-specific tables (CP, CP+, CP²) the same holds for an entity's
// subject row when it is never a subject in training, and for its object
// row likewise.
type SeenSplit struct {
	All                 MeanLL
	BothSeen, OneUnseen MeanLL // both entities in training, or not
	InRole, OutOfRole   MeanLL // subject trained as a subject and object as an object, or not
	RoleTables          []RowNorms
	ZeroScoreLogP, LogZ float64 // squared models: log p of a triple whose score is 0; NaN otherwise
}

// RowNorms compares a role-specific table's mean row norm over the
// entities trained in its role with the others'.
type RowNorms struct {
	Table                string
	Trained, Untrained   float64
	NTrained, NUntrained int
}

// LLBySeen splits the test log-likelihood of m on ds (lj gives log p of
// triples; logZ the model's log partition function, read for squared
// models only).
func LLBySeen(m *models.Model, ds *kg.Dataset, lj LogJointer, logZ func() (float64, error)) (*SeenSplit, error) {
	if len(ds.Test) == 0 {
		return nil, errors.New("no test triples")
	}
	ts := tripleIDs(ds.Test)
	ll, err := lj.LogJoint(ts)
	if err != nil {
		return nil, err
	}
	asSubject, asObject := ds.TrainRoles()
	seen := func(e int) bool { return asSubject[e] || asObject[e] }
	mean := func(keep func(t [3]int) bool) MeanLL {
		var s MeanLL
		for i, t := range ts {
			if keep(t) {
				s.LL += ll[i]
				s.N++
			}
		}
		s.LL /= float64(s.N) // NaN for none
		return s
	}
	out := &SeenSplit{All: mean(func([3]int) bool { return true }),
		BothSeen:      mean(func(t [3]int) bool { return seen(t[0]) && seen(t[2]) }),
		OneUnseen:     mean(func(t [3]int) bool { return !seen(t[0]) || !seen(t[2]) }),
		InRole:        mean(func(t [3]int) bool { return asSubject[t[0]] && asObject[t[2]] }),
		OutOfRole:     mean(func(t [3]int) bool { return !asSubject[t[0]] || !asObject[t[2]] }),
		ZeroScoreLogP: math.NaN(), LogZ: math.NaN()}
	if l := m.Layout; l.Subject != l.Object {
		out.RoleTables = []RowNorms{rowNorms(m, l.Subject, asSubject), rowNorms(m, l.Object, asObject)}
	}
	if m.Semantics == models.Squared {
		if out.LogZ, err = logZ(); err != nil {
			return nil, err
		}
		sz := m.Sizes
		out.ZeroScoreLogP = math.Log(m.EpsMass/(float64(sz.Entities)*float64(sz.Entities)*float64(sz.Relations))) - out.LogZ
	}
	return out, nil
}

// rowNorms is the mean row norm of table over the entities in and out of
// trained.
func rowNorms(m *models.Model, table string, trained []bool) RowNorms {
	p := m.Param(table)
	cols := p.Shape()[1]
	data := graph.Float64s(p)
	r := RowNorms{Table: table}
	for e, ok := range trained {
		var ss float64
		for _, x := range data[e*cols : (e+1)*cols] {
			ss += x * x
		}
		if ok {
			r.Trained += math.Sqrt(ss)
			r.NTrained++
		} else {
			r.Untrained += math.Sqrt(ss)
			r.NUntrained++
		}
	}
	r.Trained /= float64(max(r.NTrained, 1))
	r.Untrained /= float64(max(r.NUntrained, 1))
	return r
}

// Write prints the split as the diag verb shows it, for run id.
func (s *SeenSplit) Write(w io.Writer, id string) {
	fmt.Fprintf(w, "%s: test LL %.3f over %d triples\n", id, s.All.LL, s.All.N)
	fmt.Fprintf(w, "  both entities in training: %.3f over %d; an entity never in training: %.3f over %d (they lower the mean by %.3f)\n",
		s.BothSeen.LL, s.BothSeen.N, s.OneUnseen.LL, s.OneUnseen.N, s.BothSeen.LL-s.All.LL)
	fmt.Fprintf(w, "  subject trained as a subject and object as an object: %.3f over %d; the others: %.3f over %d\n",
		s.InRole.LL, s.InRole.N, s.OutOfRole.LL, s.OutOfRole.N)
	for _, r := range s.RoleTables {
		fmt.Fprintf(w, "  table %s: mean row norm %.4g over the %d entities in that role in training, %.4g over the %d others\n",
			r.Table, r.Trained, r.NTrained, r.Untrained, r.NUntrained)
	}
	if !math.IsNaN(s.LogZ) {
		fmt.Fprintf(w, "  log Z %.3f: a triple whose score is 0 keeps only the uniform ε mass, log p = %.3f\n", s.LogZ, s.ZeroScoreLogP)
	}
}
