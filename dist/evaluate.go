package dist

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"gekc/graph"
	"gekc/kg"
	"gekc/metrics"
	"gekc/models"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Evaluator answers the evaluation queries of a sharded model: filtered
// ranks against every entity, ranks against sampled or supplied
// negatives, and the mean log-likelihood; each answer is the one-process
// evaluator's (metrics.Evaluator) up to the order of floating-point sums.
// Each process scores a query against its own rows only, with the query's
// rows gathered from their owners, and the counts of candidates above and
// tied with the true answer are summed over the processes; log Z comes
// from the summed statistics. Its methods are collectives: every process
// calls them with the same arguments and gets the same results.
type Evaluator struct {
	st      *Stepper
	queries int // ranking queries per program run
	rank    *rankPart
	score   *scorePart
}

// maxEvalQueries bounds the queries of a ranking run, and so the spare
// rows each entity table's backing keeps after its own rows, where the
// queries' gathered rows go: 2 per query (subject and object).
const maxEvalQueries = 128

// spareRows is the number of rows kept after the own rows of each entity
// table for the evaluator.
const spareRows = 2 * maxEvalQueries

// scorerTriples is the number of triples a scoring run takes per process:
// each run is a few collectives, so a large one (OGB's 500 negatives a side
// put about 30 queries in one of 2^15 on each of 4 processes).
const scorerTriples = 1 << 15

// Evaluator returns the evaluator of the stepper's model; its buffers
// for the candidates' scores stay under limit bytes (at one query a run
// at least; metrics.DefaultBatchBuffers when limit ≤ 0).
func (st *Stepper) Evaluator(limit int64) (*Evaluator, error) {
	if limit <= 0 {
		limit = metrics.DefaultBatchBuffers
	}
	e := &Evaluator{st: st}
	var err error
	if e.rank, err = st.newRankPart(limit); err != nil {
		return nil, err
	}
	if e.score, err = st.newScorePart(scorerTriples); err != nil {
		return nil, err
	}
	e.queries = e.rank.queries
	return e, nil
}

// Queries returns the number of queries a ranking run answers.
func (e *Evaluator) Queries() int { return e.queries }

// BufferBytes returns the bytes of the evaluator's programs' outputs once
// they have run: the candidates' scores of both sides and the scorer's.
func (e *Evaluator) BufferBytes() int64 {
	return graph.Bytes(e.rank.cand[0]) + graph.Bytes(e.rank.cand[1]) + graph.Bytes(e.score.out)
}

// Rank returns the filtered ranks of every triple's subject and object
// among all entities (metrics.Evaluator.Rank).
func (e *Evaluator) Rank(triples []kg.Triple, filter *kg.Filter, policy metrics.TiePolicy, hits []int) (metrics.Ranking, error) {
	n := len(triples)
	ranks := [2][]float64{make([]float64, n), make([]float64, n)}
	var nonFinite int64
	for from := 0; from < n; from += e.queries {
		batch := triples[from:min(from+e.queries, n)]
		counts, bad, err := e.rank.count(e.st, batch, filter)
		if err != nil {
			return metrics.Ranking{}, err
		}
		nonFinite += bad
		for i := range batch {
			for side := range 2 {
				ranks[side][from+i] = counts[side][i].Rank(policy)
			}
		}
	}
	if err := e.st.comm.MaxInt64([]int64{nonFinite}); err != nil {
		return metrics.Ranking{}, err
	}
	return metrics.NewRanking(ranks[0], ranks[1], hits, int(nonFinite)), nil
}

// RankSampled ranks each triple's subject and object against the
// sampler's negatives (metrics.Evaluator.RankSampled: OGB's ties).
func (e *Evaluator) RankSampled(triples []kg.Triple, ns *metrics.NegativeSampler, hits []int) (metrics.Ranking, error) {
	var negs []int32
	return e.rankAmong(triples, ns.PerQuery(), hits, func(i int, v models.Var) []int32 {
		negs = ns.Draw(negs[:0], triples[i], v)
		return negs
	})
}

// RankAgainst ranks each triple's subject and object against the supplied
// negatives heads[i] and tails[i] (metrics.Evaluator.RankAgainst).
func (e *Evaluator) RankAgainst(triples []kg.Triple, heads, tails [][]int32, hits []int) (metrics.Ranking, error) {
	if len(heads) != len(triples) || len(tails) != len(triples) {
		return metrics.Ranking{}, fmt.Errorf("dist.RankAgainst: %d triples but %d head and %d tail candidate lists", len(triples), len(heads), len(tails))
	}
	most := 0
	for i := range heads {
		most = max(most, len(heads[i]), len(tails[i]))
	}
	for i := range triples {
		for _, list := range [][]int32{heads[i], tails[i]} {
			for _, c := range list {
				if c < 0 || int(c) >= e.st.rows.N {
					return metrics.Ranking{}, fmt.Errorf("dist.RankAgainst: triple %d: candidate %d outside %d entities", i, c, e.st.rows.N)
				}
			}
		}
	}
	return e.rankAmong(triples, most, hits, func(i int, v models.Var) []int32 {
		if v == models.Subject {
			return heads[i]
		}
		return tails[i]
	})
}

// LogLikelihood returns the mean log p(s, r, o) of the triples: each
// process scores a share of them.
func (e *Evaluator) LogLikelihood(triples []kg.Triple) (float64, error) {
	if len(triples) == 0 {
		return 0, fmt.Errorf("dist: log-likelihood of no triples")
	}
	logZ, err := e.LogPartition()
	if err != nil {
		return 0, err
	}
	np, k := e.st.comm.Size(), e.score.triples
	sum := []float64{0}
	scores := make([]float64, k)
	for from := 0; from < len(triples); from += np * k {
		block := triples[from:min(from+np*k, len(triples))]
		parts := make([][]kg.Triple, np)
		for q := range parts {
			parts[q] = block[q*len(block)/np : (q+1)*len(block)/np]
		}
		if err := e.score.score(e.st, parts, scores); err != nil {
			return 0, err
		}
		for _, s := range scores[:len(parts[e.st.comm.Rank()])] {
			sum[0] += s
		}
	}
	if err := e.st.comm.SumFloat64(sum); err != nil {
		return 0, err
	}
	return sum[0]/float64(len(triples)) - logZ, nil
}

// LogPartition returns log Z from the processes' summed statistics, or
// models.ErrIntractable for an energy-based model.
func (e *Evaluator) LogPartition() (float64, error) {
	if e.score.zProg == nil {
		return 0, models.ErrIntractable
	}
	for _, t := range e.st.tables {
		if err := e.st.sumStat(t); err != nil {
			return 0, err
		}
		graph.CopyValues(e.score.stats[t.name], t.stat)
	}
	if err := e.score.zProg.Run(); err != nil {
		return 0, err
	}
	return graph.Scalar(e.score.logZ.Value()), nil
}

// rankAmong ranks each triple's subject and object among the candidates
// negatives(i, side) returns (at most most of them): each process scores
// the true triple and the candidates it owns, as many queries at a time
// as fit every process's scoring run.
func (e *Evaluator) rankAmong(triples []kg.Triple, most int, hits []int, negatives func(i int, v models.Var) []int32) (metrics.Ranking, error) {
	st, np, k := e.st, e.st.comm.Size(), e.score.triples
	if 2*(1+most) > k {
		return metrics.Ranking{}, fmt.Errorf("dist: %d candidates per query, at most %d", most, k/2-1)
	}
	n := len(triples)
	ranks := [2][]float64{make([]float64, n), make([]float64, n)}
	var nonFinite int64
	scores := make([]float64, k)
	for from := 0; from < n; {
		parts := make([][]kg.Triple, np)
		var spans []querySpan // this process's
		to := from
		for ; to < n; to++ {
			if !e.fits(parts, 2*(1+most)) {
				break
			}
			for side, v := range []models.Var{models.Subject, models.Object} {
				t, negs := triples[to], negatives(to, v)
				for q := range parts {
					start := len(parts[q])
					parts[q] = append(parts[q], t)
					for _, c := range negs {
						if st.rows.Owner(int(c)) == q {
							parts[q] = append(parts[q], withEntity(t, v, c))
						}
					}
					if q == st.comm.Rank() {
						spans = append(spans, querySpan{to, side, start, len(parts[q])})
					}
				}
			}
		}
		if err := e.score.score(st, parts, scores); err != nil {
			return metrics.Ranking{}, err
		}
		counts := make([]int64, 2*len(spans))
		for j, sp := range spans {
			pos := scores[sp.from]
			if math.IsNaN(pos) || math.IsInf(pos, 0) {
				nonFinite++
			}
			c := countAbove(scores[sp.from+1:sp.to], pos)
			counts[2*j], counts[2*j+1] = c.Greater, c.Equal
		}
		if err := st.comm.SumInt64(counts); err != nil {
			return metrics.Ranking{}, err
		}
		for j, sp := range spans {
			c := metrics.Counts{Greater: counts[2*j], Equal: counts[2*j+1]}
			ranks[sp.side][sp.query] = c.Rank(metrics.Realistic)
		}
		from = to
	}
	if err := st.comm.MaxInt64([]int64{nonFinite}); err != nil {
		return metrics.Ranking{}, err
	}
	return metrics.NewRanking(ranks[0], ranks[1], hits, int(nonFinite)), nil
}

// fits says whether every process's scoring list has room for one more
// query's worth of triples.
func (e *Evaluator) fits(parts [][]kg.Triple, more int) bool {
	for _, p := range parts {
		if len(p)+more > e.score.triples {
			return false
		}
	}
	return true
}

// querySpan locates one query in a process's scoring list: the true
// triple at from, its candidates up to to.
type querySpan struct{ query, side, from, to int }

func withEntity(t kg.Triple, v models.Var, e int32) kg.Triple {
	if v == models.Subject {
		t.S = e
	} else {
		t.O = e
	}
	return t
}

// countAbove counts the scores above and equal to pos (all of them above
// a NaN pos; a NaN score counts as neither).
func countAbove(scores []float64, pos float64) metrics.Counts {
	var c metrics.Counts
	nan := math.IsNaN(pos)
	for _, s := range scores {
		tally(&c, s, pos, nan)
	}
	return c
}

// scorePart scores lists of triples, each process its own list, with the
// rows they read gathered from their owners.
type scorePart struct {
	triples int
	tables  []*entityTable // rows: the gathered rows; need: per process
	s, r, o []int
	out     *G.Node
	prog    *graph.Program
	stats   map[string]*tensor.Dense
	logZ    *G.Node
	zProg   *graph.Program
}

func (st *Stepper) newScorePart(k int) (*scorePart, error) {
	m := st.m
	sp := &scorePart{triples: k, stats: map[string]*tensor.Dense{}}
	values := map[string]*tensor.Dense{}
	for _, name := range m.ParamNames() {
		values[name] = st.params[name]
	}
	for _, src := range st.tables {
		t := &entityTable{name: src.name, cols: src.cols, slots: src.slots}
		t.rows = tensor.New(tensor.Of(m.Dtype), tensor.WithShape(len(t.slots)*(k+1), t.cols))
		values[t.name] = t.rows
		sp.tables = append(sp.tables, t)
	}
	g := G.NewGraph()
	part, err := m.BindPart(g, values)
	if err != nil {
		return nil, err
	}
	for name, n := range part.Stats {
		sp.stats[name] = n.Value().(*tensor.Dense)
	}
	sp.s, sp.r, sp.o = make([]int, k), make([]int, k), make([]int, k)
	b, err := part.NewBatch(graph.IndexVector(g, "s", sp.s), graph.IndexVector(g, "r", sp.r), graph.IndexVector(g, "o", sp.o))
	if err != nil {
		return nil, err
	}
	if sp.out, err = part.LogScore(b); err != nil {
		return nil, err
	}
	if sp.prog, err = graph.Compile(sp.out); err != nil {
		return nil, err
	}
	switch sp.logZ, err = part.LogPartition(); {
	case errors.Is(err, models.ErrIntractable):
		return sp, nil // an energy-based model: no log-likelihoods
	case err != nil:
		return nil, err
	}
	sp.zProg, err = graph.Compile(sp.logZ)
	return sp, err
}

// score writes log φ of each triple of this process's list, parts[me],
// into dst; every process passes every process's list.
func (sp *scorePart) score(st *Stepper, parts [][]kg.Triple, dst []float64) error {
	me := st.comm.Rank()
	pad := kg.Triple{}
	for _, t := range sp.tables {
		t.need = neededRows(parts, pad, t.slots)
		if _, _, err := exchangeRows(st.comm, st.rows, st.params[t.name], t.rows, t.need); err != nil {
			return err
		}
	}
	index := func(v models.Var, e int32) int {
		for _, t := range sp.tables {
			if slices.Contains(t.slots, v) {
				i, _ := slices.BinarySearch(t.need[me], int(e))
				return i
			}
		}
		return 0
	}
	for i := range sp.s {
		t := pad
		if i < len(parts[me]) {
			t = parts[me][i]
		}
		sp.s[i], sp.r[i], sp.o[i] = index(models.Subject, t.S), int(t.R), index(models.Object, t.O)
	}
	if err := sp.prog.Run(); err != nil {
		return err
	}
	copy(dst, graph.Float64s(sp.out.Value())[:len(parts[me])])
	return nil
}
