package metrics

import (
	"fmt"
	"math"
	"runtime"
	"sync"

	"gekc/graph"
	"gekc/kg"
	"gekc/models"

	G "gorgonia.org/gorgonia"
)

// Evaluator scores batches of queries with a model through forward-only
// programs compiled once for a fixed batch size. It reads the model's
// parameter tensors at every call, so it follows training as it goes.
type Evaluator struct {
	m     *models.Model
	batch int
	bb    *models.BoundBatch // the index vectors every program reads

	cand     [3]*G.Node
	candProg [3]*graph.Program
	logScore *G.Node
	llProg   *graph.Program
	logZ     *G.Node
	zProg    *graph.Program

	// The circuit and batch stay bound so that the queries few callers
	// need (marginals) are compiled on first use, not by every evaluator.
	c        *models.Circuit
	b        *models.Batch
	marg     [3]*G.Node
	margProg [3]*graph.Program
	relMarg  *models.RelationMarginals

	dom    *models.Domain
	scorer *tripleScorer // for RankSampled, built on first use
}

// NewEvaluator compiles the evaluation programs of m for batches of the
// given size.
func NewEvaluator(m *models.Model, batch int) (*Evaluator, error) {
	return NewConstrainedEvaluator(m, nil, batch)
}

// NewConstrainedEvaluator evaluates the product of m with the domain
// constraint d (nil: no constraint): candidates the schema rules out get
// log-score −Inf, and log-likelihoods are normalised by Z_K.
func NewConstrainedEvaluator(m *models.Model, d *models.Domain, batch int) (*Evaluator, error) {
	return NewEvaluatorWithin(m, d, batch, BufferLimit{})
}

// NewEvaluatorWithin is NewConstrainedEvaluator with the batch cut to a
// limit on the memory of its programs' buffers: ranking holds a score for
// every candidate of every query in the batch, so at a million entities a
// batch of 1000 queries needs gigabytes while 50 rank as fast. It never
// goes below one query per batch; BufferBytes says what the chosen batch
// takes.
func NewEvaluatorWithin(m *models.Model, d *models.Domain, maxBatch int, limit BufferLimit) (*Evaluator, error) {
	if maxBatch <= 0 {
		return nil, fmt.Errorf("metrics.NewEvaluator: batch size %d", maxBatch)
	}
	if limit.Batch < 0 || limit.Total < 0 {
		return nil, fmt.Errorf("metrics.NewEvaluator: buffer limit %+v bytes", limit)
	}
	e, err := newEvaluator(m, d, maxBatch)
	if err != nil || limit == (BufferLimit{}) || maxBatch == 1 {
		return e, err
	}
	// Every buffer that grows with the batch grows linearly: measure one
	// query's share against a batch of one.
	one, err := newEvaluator(m, d, 1)
	if err != nil {
		return nil, err
	}
	perQuery := max((e.BufferBytes()-one.BufferBytes())/int64(maxBatch-1), 1)
	rows := limit.Rows(one.BufferBytes()-perQuery, perQuery, maxBatch)
	switch rows {
	case maxBatch:
		return e, nil
	case 1:
		return one, nil
	}
	return newEvaluator(m, d, rows)
}

// DefaultBatchBuffers is the cap on an evaluator's buffers that grow with
// its batch used where a caller states none (training runs, queries,
// calibration). Measured at 849,086 entities (ComplEx², d = 50, one core):
// 39 queries a batch (512 MiB of scores) rank 10% slower than 107 (1.4 GiB),
// and 1000 (13.6 GiB) no faster.
const DefaultBatchBuffers = 512 << 20

// DefaultBufferLimit caps the buffers that grow with the batch at
// DefaultBatchBuffers: the limit of queries, calibration and synth.
var DefaultBufferLimit = BufferLimit{Batch: DefaultBatchBuffers}

// BufferLimit bounds the memory of an evaluator's buffers.
type BufferLimit struct {
	Batch int64 // bytes the buffers that grow with the batch may take (0: no limit)
	Total int64 // bytes all of them may take (0: no limit)
}

// Rows returns the largest batch of at most maxBatch queries, and at least
// one, whose buffers stay within the limit, when a batch of n holds
// fixed + n·perQuery bytes.
func (l BufferLimit) Rows(fixed, perQuery int64, maxBatch int) int {
	rows := int64(maxBatch)
	if l.Batch > 0 {
		rows = min(rows, l.Batch/perQuery)
	}
	if l.Total > 0 {
		rows = min(rows, max(l.Total-fixed, 0)/perQuery)
	}
	return int(max(rows, 1))
}

// newEvaluator builds the evaluator's graph for a batch size; compiling it
// allocates nothing (buffers are allocated on a program's first run).
func newEvaluator(m *models.Model, d *models.Domain, batch int) (*Evaluator, error) {
	bb, err := m.BindBatch(d, batch)
	if err != nil {
		return nil, err
	}
	e := &Evaluator{m: m, batch: batch, bb: bb, c: bb.Circuit, b: bb.Batch, dom: d}
	c, b := e.c, e.b
	for _, v := range []models.Var{models.Subject, models.Object, models.Relation} {
		if e.cand[v], err = c.Candidates(b, v); err != nil {
			return nil, err
		}
		if e.candProg[v], err = graph.Compile(e.cand[v]); err != nil {
			return nil, err
		}
	}
	if e.logScore, err = c.LogScore(b); err != nil {
		return nil, err
	}
	if e.llProg, err = graph.Compile(e.logScore); err != nil {
		return nil, err
	}
	if e.logZ, err = c.LogPartition(); err == nil {
		if e.zProg, err = graph.Compile(e.logZ); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// Model returns the evaluated model.
func (e *Evaluator) Model() *models.Model { return e.m }

// BatchSize returns the number of queries each program run answers.
func (e *Evaluator) BatchSize() int { return e.batch }

// BufferBytes returns the bytes of the buffers the evaluator's programs
// hold once they have run: the candidate scores of each slot (the part
// that grows with the number of entities), the log-scores and log Z.
// Marginal programs, compiled on first use, hold a few values per query.
func (e *Evaluator) BufferBytes() int64 {
	outs := []*G.Node{e.cand[0], e.cand[1], e.cand[2], e.logScore}
	if e.logZ != nil {
		outs = append(outs, e.logZ)
	}
	// The programs are separate: a node two of them compute is held twice.
	var total int64
	for _, n := range outs {
		total += graph.Bytes(n)
	}
	return total
}

// load writes triples[from:from+batch] into the index tensors, padding with
// entity 0 / relation 0; it returns the number of real rows.
func (e *Evaluator) load(triples []kg.Triple, from int) int {
	return e.bb.Load(triples[from:], kg.Triple{})
}

// Candidates calls fn with the row of log-scores of every candidate for
// slot v of each triple (the other two slots given). The slice is reused.
func (e *Evaluator) Candidates(triples []kg.Triple, v models.Var, fn func(i int, scores []float64)) error {
	dom := e.m.Sizes.Entities
	if v == models.Relation {
		dom = e.m.Sizes.Relations
	}
	return e.rows(triples, e.candProg[v], e.cand[v], dom, fn)
}

// rows runs prog on the triples batch by batch and calls fn with each real
// row (width values) of out, as float64; the slice is reused.
func (e *Evaluator) rows(triples []kg.Triple, prog *graph.Program, out *G.Node, width int, fn func(i int, row []float64)) error {
	row := make([]float64, width)
	for from := 0; from < len(triples); from += e.batch {
		n := e.load(triples, from)
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

// LogMarginals calls fn with log Σ_x φ(t with slot v set to x) of each
// triple t: slot v summed out by the circuit (its value in t is ignored).
// Under a constraint only the values of v the schema admits are summed —
// for an entity slot, the entities of the type the relation requires; the
// type of the given entity is not checked against the relation. Energy-
// based models sum their B × |candidates| scores; GeKCs answer in closed
// form. The programs are compiled on the first call.
func (e *Evaluator) LogMarginals(triples []kg.Triple, v models.Var, fn func(i int, logMarginal float64)) error {
	if e.margProg[v] == nil {
		marg, err := e.c.LogMarginal(e.b, v)
		if err != nil {
			return err
		}
		prog, err := graph.Compile(marg)
		if err != nil {
			return err
		}
		e.marg[v], e.margProg[v] = marg, prog
	}
	return e.rows(triples, e.margProg[v], e.marg[v], 1, func(i int, row []float64) { fn(i, row[0]) })
}

// RelationLogMarginals returns log Σ_{s,o} φ(s, r, o) for every relation
// r (under the constraint, if any), or models.ErrIntractable for an
// energy-based model. The program is compiled on the first call.
func (e *Evaluator) RelationLogMarginals() ([]float64, error) {
	if e.relMarg == nil {
		if e.zProg == nil {
			return nil, models.ErrIntractable
		}
		rm, err := e.c.NewRelationMarginals()
		if err != nil {
			return nil, err
		}
		e.relMarg = rm
	}
	return e.relMarg.Values()
}

// Rank returns the filtered ranks of the true subject and object of every
// triple against all entities; known answers from filter (typically
// train+valid+test) other than the true one are ignored.
func (e *Evaluator) Rank(triples []kg.Triple, filter *kg.Filter, policy TiePolicy, hits []int) (Ranking, error) {
	subj, badS, err := e.rankSide(triples, models.Subject, filter, policy)
	if err != nil {
		return Ranking{}, err
	}
	obj, badO, err := e.rankSide(triples, models.Object, filter, policy)
	if err != nil {
		return Ranking{}, err
	}
	return summarise(subj, obj, hits, badS+badO), nil
}

// RankRelations returns the filtered ranks of the true relation of every
// triple's query (s, ?, o) against all relations, other known relations
// of (s, o) in filter ignored. A constrained evaluator gives the relations
// whose schema rules out the pair's types log-score −Inf, so the true
// relation is ranked among the admissible ones only, exactly as the
// constrained distribution p(r | s, o) orders them.
func (e *Evaluator) RankRelations(triples []kg.Triple, filter *kg.Filter, policy TiePolicy, hits []int) (RelationRanking, error) {
	ranks, bad, err := e.rankSide(triples, models.Relation, filter, policy)
	if err != nil {
		return RelationRanking{}, err
	}
	return summariseRelations(ranks, hits, bad), nil
}

// rankSide ranks slot v of every triple against all its candidates,
// filtered; it also counts the true answers with a non-finite score.
func (e *Evaluator) rankSide(triples []kg.Triple, side models.Var, filter *kg.Filter, policy TiePolicy) ([]float64, int, error) {
	ranks := make([]float64, len(triples))
	nonFinite := 0
	var mu sync.Mutex
	dom := e.m.Sizes.Entities
	if side == models.Relation {
		dom = e.m.Sizes.Relations
	}
	for from := 0; from < len(triples); from += e.batch {
		n := e.load(triples, from)
		if err := e.candProg[side].Run(); err != nil {
			return nil, 0, err
		}
		bad := 0
		parallelRows(n, func(lo, hi int) {
			localBad := 0
			for i := lo; i < hi; i++ {
				t := triples[from+i]
				var filt []int32
				var target int
				switch side {
				case models.Object:
					filt, target = filter.Objects(t.S, t.R), int(t.O)
				case models.Subject:
					filt, target = filter.Subjects(t.R, t.O), int(t.S)
				default:
					filt, target = filter.Relations(t.S, t.O), int(t.R)
				}
				switch d := e.cand[side].Value().Data().(type) {
				case []float32:
					row := d[i*dom : (i+1)*dom]
					ranks[from+i] = rankOf(row, target, filt, policy)
					if f := float64(row[target]); math.IsNaN(f) || math.IsInf(f, 0) {
						localBad++
					}
				case []float64:
					row := d[i*dom : (i+1)*dom]
					ranks[from+i] = rankOf(row, target, filt, policy)
					if math.IsNaN(row[target]) || math.IsInf(row[target], 0) {
						localBad++
					}
				}
			}
			mu.Lock()
			bad += localBad
			mu.Unlock()
		})
		nonFinite += bad
	}
	return ranks, nonFinite, nil
}

func parallelRows(n int, fn func(lo, hi int)) {
	w := runtime.GOMAXPROCS(0)
	if w > n {
		w = n
	}
	if w <= 1 {
		fn(0, n)
		return
	}
	var wg sync.WaitGroup
	chunk := (n + w - 1) / w
	for lo := 0; lo < n; lo += chunk {
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			fn(lo, hi)
		}(lo, min(lo+chunk, n))
	}
	wg.Wait()
}

// LogLikelihood returns the mean of log p(s,r,o) over the triples. Energy
// models return models.ErrIntractable.
func (e *Evaluator) LogLikelihood(triples []kg.Triple) (float64, error) {
	lp, err := e.LogProbs(triples)
	if err != nil {
		return 0, err
	}
	var s float64
	for _, v := range lp {
		s += v
	}
	return s / float64(len(lp)), nil
}

// LogProbs returns log p(s,r,o) for each triple.
func (e *Evaluator) LogProbs(triples []kg.Triple) ([]float64, error) {
	if e.zProg == nil {
		return nil, models.ErrIntractable
	}
	if len(triples) == 0 {
		return nil, fmt.Errorf("metrics: no triples")
	}
	if err := e.zProg.Run(); err != nil {
		return nil, err
	}
	logZ := graph.Scalar(e.logZ.Value())
	out := make([]float64, len(triples))
	err := e.LogScores(triples, func(i int, ls float64) { out[i] = ls - logZ })
	return out, err
}

// LogScores calls fn with log φ(s,r,o) of each triple (unnormalised).
// Many triples go through the triple scorer, whose batch is not cut by the
// candidates' buffers: scoring 16 million triples 39 at a time would take
// longer than training.
func (e *Evaluator) LogScores(triples []kg.Triple, fn func(i int, logScore float64)) error {
	if len(triples) <= e.batch {
		return e.rows(triples, e.llProg, e.logScore, 1, func(i int, row []float64) { fn(i, row[0]) })
	}
	sc, err := e.tripleScorer(1)
	if err != nil {
		return err
	}
	scores := make([]float64, sc.batch)
	for from := 0; from < len(triples); from += sc.batch {
		block := triples[from:min(from+sc.batch, len(triples))]
		if err := sc.score(block, scores); err != nil {
			return err
		}
		for i := range block {
			fn(from+i, scores[i])
		}
	}
	return nil
}

// LogPartition returns log Z, or models.ErrIntractable.
func (e *Evaluator) LogPartition() (float64, error) {
	if e.zProg == nil {
		return 0, models.ErrIntractable
	}
	if err := e.zProg.Run(); err != nil {
		return 0, err
	}
	return graph.Scalar(e.logZ.Value()), nil
}
