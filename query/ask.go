package query

import (
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"

	"gekc/models"
	"gekc/resultsdir"
)

// A Question is what the experiments command asks a run's model, by
// names, as its flags state it.
type Question struct {
	S, R, O  string // the given slots' names; "" leaves a slot free
	Target   string // the slot whose marginal is asked: subject, relation or object (s, r, o)
	Triples  string // a file of subject<TAB>relation<TAB>object lines to score
	K        int    // completions and marginal values listed; 0: all
	Sample   int    // samples drawn, conditioned on S and/or R
	Seed     uint64 // of the samples
	Filtered bool   // leave known triples (train, valid, test) out of completions
}

// Flags defines the query verb's flags of a question on fs, each setting a
// field of q.
func (q *Question) Flags(fs *flag.FlagSet) {
	fs.StringVar(&q.S, "s", "", "subject `name`")
	fs.StringVar(&q.R, "r", "", "relation `name`")
	fs.StringVar(&q.O, "o", "", "object `name`")
	fs.StringVar(&q.Target, "target", "", "marginal of `slot` subject, relation or object (with at most one of -s -r -o)")
	fs.StringVar(&q.Triples, "triples", "", "`file` of subject<TAB>relation<TAB>object lines to score")
	fs.IntVar(&q.K, "k", 10, "completions listed (0: all)")
	fs.IntVar(&q.Sample, "sample", 0, "draw `N` samples conditioned on -s and/or -r")
	fs.Uint64Var(&q.Seed, "seed", 1, "seed of -sample")
	fs.BoolVar(&q.Filtered, "filtered", false, "leave known triples (train, valid, test) out of completions")
}

// Check refuses counts below zero, naming their flags.
func (q Question) Check() error {
	switch {
	case q.K < 0:
		return fmt.Errorf("-k %d: want 0 (all) or more", q.K)
	case q.Sample < 0:
		return fmt.Errorf("-sample %d: want a positive count", q.Sample)
	}
	return nil
}

// OpenRun opens the finished run in dir (resultsdir.LoadFinished, its data
// set under dataRoot) to answer questions about its model, under the
// run's domain constraint if it had one, batch candidates at a time.
func OpenRun(dir, dataRoot string, batch int) (*Answerer, *resultsdir.Finished, error) {
	fr, err := resultsdir.LoadFinished(dir, dataRoot)
	if err != nil {
		return nil, nil, err
	}
	dom, err := fr.Constraint()
	if err != nil {
		return nil, nil, err
	}
	q, err := New(fr.Model, dom, batch)
	if err != nil {
		return nil, nil, err
	}
	a, err := NewAnswerer(q, fr.Data)
	return a, fr, err
}

// Ask answers q: with two slots given, the completions of the third
// (Completions); with three, or Triples, their scores (Score); with
// Sample, samples given S and/or R (Sample); else the marginal of Target
// given at most one slot (Marginal). A combination that means none of
// these is an error naming the flags.
func (a *Answerer) Ask(q Question) (*Result, error) {
	given, err := a.Triple(q.S, q.R, q.O)
	if err != nil {
		return nil, err
	}
	n := 0
	for _, x := range given {
		if x >= 0 {
			n++
		}
	}
	if q.Filtered && (q.Triples != "" || q.Target != "" || q.Sample > 0 || n != 2) {
		return nil, errors.New("-filtered applies to completions (two of -s -r -o)")
	}
	switch {
	case q.Triples != "" || (n == 3 && q.Target == "" && q.Sample == 0):
		if q.Target != "" || q.Sample > 0 {
			return nil, errors.New("-triples and a full triple are scored; -target and -sample do not apply")
		}
		ts := [][3]int{given}
		if q.Triples != "" {
			if n > 0 {
				return nil, errors.New("-triples and -s/-r/-o: give one or the other")
			}
			if ts, err = a.ReadTriples(q.Triples); err != nil {
				return nil, err
			}
		}
		return a.Score(ts)
	case q.Sample > 0:
		if given[models.Object] >= 0 || q.Target != "" {
			return nil, errors.New("-sample conditions on -s and/or -r only")
		}
		return a.Sample(given, q.Sample, rand.New(rand.NewPCG(q.Seed, 0x9e1)))
	case n == 2:
		if q.Target != "" {
			t, err := ParseTarget(q.Target)
			if err != nil {
				return nil, err
			}
			for _, v := range models.Vars {
				if given[v] < 0 && v != t {
					return nil, fmt.Errorf("-target %s: the query's free slot is the %v", q.Target, v)
				}
			}
		}
		return a.Completions(given, q.K, q.Filtered)
	}
	if q.Target == "" {
		return nil, fmt.Errorf("%d of -s -r -o given: give two for completions, three (or -triples) to score, or -target for a marginal, or -sample", n)
	}
	target, err := ParseTarget(q.Target)
	if err != nil {
		return nil, err
	}
	return a.Marginal(given, target, q.K)
}

// ParseTarget reads -target: subject, relation or object, or s, r, o.
func ParseTarget(name string) (models.Var, error) {
	switch name {
	case "subject", "s":
		return models.Subject, nil
	case "relation", "r":
		return models.Relation, nil
	case "object", "o":
		return models.Object, nil
	}
	return 0, fmt.Errorf("-target %q: want subject, relation or object", name)
}
