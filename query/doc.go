// Package query asks a trained model exact questions about triples: the
// conditionals p(o | s, r), p(s | r, o) and p(r | s, o), the joint
// log p(s, r, o), the partition function, the marginals of one slot given
// at most one other (p(r), p(o | s), p(s | r), ...) and samples
// conditioned on the subject and/or the relation.
//
// A Querier binds one model, optionally under a domain constraint, to the
// forward programs of a metrics.Evaluator — the same circuit queries that
// training and evaluation compile — and adds the plain-Go sums over at
// most one enumerated slot that marginals need. Every distribution is
// normalised by the circuit's own marginals, never by summing the
// candidates it lists, so that it sums to one checks the model's exact
// marginals; the package's tests compare every answer with enumeration
// of all |E|·|R|·|E| triples of tiny graphs.
//
// Triples are [3]int indexed by models.Var (subject, relation, object);
// Free (−1) marks a slot that is not given. An energy-based model (cp,
// complex, ...) answers conditionals, as the softmax of its scores over
// the free slot; everything that needs a partition function returns an
// error that matches ErrEnergy and models.ErrIntractable. Ids outside the
// model are errors that name the slot, not panics.
//
// Answers are log-probabilities indexed by id; metrics.TopK orders them.
//
// An Answerer binds a Querier to the kg.Dataset whose vocabularies name
// its ids, to ask and answer in names: it looks names up (suggesting close
// ones for a misspelt name) and turns completions, scored triples,
// marginals and samples into a Result, rows of names and probabilities
// marked known when a split holds the triple, that Write prints as text,
// TSV or JSON.
//
// The command `go run ./experiments query` is an Answerer behind flags
// that look the run up: OpenRun opens a finished run of a results
// directory (package resultsdir) and Ask answers a Question as the flags
// state it (Question.Flags).
package query
