package models

import (
	"fmt"

	"gekc/graph"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Circuit is a Model bound to a graph: it answers the queries of a circuit
// over (S, R, O) as graph nodes. Objectives compose losses from these
// queries only, so a new score function gets every objective for free.
type Circuit struct {
	m      *Model
	g      *G.ExprGraph
	tables map[string]*G.Node
	cache  map[string]*G.Node
	dom    *Domain // nil, or the constraint multiplied in (BindConstrained)
}

// Model returns the model this circuit was bound from.
func (c *Circuit) Model() *Model { return c.m }

// Graph returns the graph the circuit lives in.
func (c *Circuit) Graph() *G.ExprGraph { return c.g }

// Params returns the parameter nodes in layout order.
func (c *Circuit) Params() G.Nodes {
	var ns G.Nodes
	for _, t := range c.m.Layout.Tables {
		ns = append(ns, c.tables[t.Name])
	}
	return ns
}

// Node returns the parameter node of a table (Tables interface).
func (c *Circuit) Node(name string) *G.Node { return c.tables[name] }

// Sizes returns the model's sizes (Tables interface).
func (c *Circuit) Sizes() Sizes { return c.m.Sizes }

// RoleTable returns the table of slot v (Tables interface).
func (c *Circuit) RoleTable(v Var) *G.Node { return c.tables[c.m.Layout.TableOf(v)] }

// RoleGram returns the Gram matrix of slot v's table (Tables interface);
// slots sharing a table share one Gram node.
func (c *Circuit) RoleGram(v Var) (*G.Node, error) { return c.gram(c.m.Layout.TableOf(v)) }

// gram returns the Gram matrix XᵀX of a table, built once per graph.
func (c *Circuit) gram(name string) (*G.Node, error) {
	return c.memo("gram:"+name, func() (*G.Node, error) { return graph.Gram(c.tables[name]) })
}

func (c *Circuit) memo(key string, f func() (*G.Node, error)) (*G.Node, error) {
	if n, ok := c.cache[key]; ok {
		return n, nil
	}
	n, err := f()
	if err != nil {
		return nil, err
	}
	c.cache[key] = n
	return n, nil
}

// Batch is a batch of (possibly partial) triples given as index vectors.
// Indices of a slot that a query sums out or ranks may be nil.
type Batch struct {
	c     *Circuit
	idx   [3]*G.Node
	size  int
	cache map[string]*G.Node
}

// NewBatch wraps index vectors (tensor.Int, equal lengths) for s, r and o.
func (c *Circuit) NewBatch(s, r, o *G.Node) (*Batch, error) {
	b := &Batch{c: c, idx: [3]*G.Node{s, r, o}, size: -1, cache: map[string]*G.Node{}}
	for v, n := range b.idx {
		if n == nil {
			continue
		}
		if n.Dims() != 1 || n.Dtype() != tensor.Int {
			return nil, fmt.Errorf("models: %v indices must be an int vector, got %v %v", Var(v), n.Dtype(), n.Shape())
		}
		if b.size >= 0 && n.Shape()[0] != b.size {
			return nil, fmt.Errorf("models: index vectors have different lengths")
		}
		b.size = n.Shape()[0]
	}
	if b.size < 0 {
		return nil, fmt.Errorf("models: a batch needs at least one index vector")
	}
	return b, nil
}

// Size returns the number of triples in the batch.
func (b *Batch) Size() int { return b.size }

func (b *Batch) memo(key string, f func() (*G.Node, error)) (*G.Node, error) {
	if n, ok := b.cache[key]; ok {
		return n, nil
	}
	n, err := f()
	if err != nil {
		return nil, err
	}
	b.cache[key] = n
	return n, nil
}

func (b *Batch) index(v Var) (*G.Node, error) {
	if b.idx[v] == nil {
		return nil, fmt.Errorf("models: the batch has no %v indices", v)
	}
	return b.idx[v], nil
}

// expr chains the circuit's graph ops and the hooks of its score function's
// non-negative restriction, keeping the first error (graph.Builder). The
// hooks run through Do: they read nodes of the chain, which are nil after a
// failure.
type expr struct {
	graph.Builder
	sf ScoreFunction
}

func (c *Circuit) expr() *expr { return &expr{sf: c.m.Score} }

// logQuery is the restriction's LogQuery.
func (e *expr) logQuery(target Var, x Inputs, t Tables) *G.Node {
	return e.Do(func() (*G.Node, error) { return nonNegative(e.sf).LogQuery(target, x, t) })
}

// logCandidates is the restriction's LogCandidates.
func (e *expr) logCandidates(target Var, feats *G.Node) *G.Node {
	return e.Do(func() (*G.Node, error) { return nonNegative(e.sf).LogCandidates(target, feats) })
}

// negative is how many of the cols trailing columns of slot v's log-query
// have weight −1.
func (e *expr) negative(v Var, cols int) int { return nonNegative(e.sf).Negative(v, cols) }

// table returns the node whose rows are the input units of slot v: the raw
// parameters, or for non-negative models their log features.
func (c *Circuit) table(v Var) (*G.Node, error) {
	name := c.m.Layout.TableOf(v)
	if c.m.Semantics != NonNegative {
		return c.tables[name], nil
	}
	return c.memo("feat:"+name, func() (*G.Node, error) {
		return nonNegative(c.m.Score).LogFeatures(c.tables[name])
	})
}

// colLogSum returns the column log-sum-exp of slot v's (log-space) input
// table: the slot summed out of a non-negative circuit (paper,
// Proposition 1). It is built once per graph and table, and shared by every
// query and every slot of the table.
func (c *Circuit) colLogSum(v Var) (*G.Node, error) {
	return c.memo("collse:"+c.m.Layout.TableOf(v), func() (*G.Node, error) {
		var e graph.Builder
		return e.Result(e.ColLogSumExp(e.Use(c.table(v))))
	})
}

// summedOut returns the inputs of a non-negative circuit with the slots vs
// summed out: each set to its column log-sums.
func (c *Circuit) summedOut(e *expr, vs ...Var) Inputs {
	var x Inputs
	for _, v := range vs {
		x.set(v, e.Use(c.colLogSum(v)))
	}
	return x
}

// input returns the rows of slot v's input units for the batch.
func (b *Batch) input(v Var) (*G.Node, error) {
	return b.memo(fmt.Sprintf("in:%v", v), func() (*G.Node, error) {
		var e graph.Builder
		return e.Result(e.Gather(e.Use(b.c.table(v)), e.Use(b.index(v))))
	})
}

// query returns q_v for the batch.
func (b *Batch) query(v Var) (*G.Node, error) {
	return b.memo(fmt.Sprintf("q:%v", v), func() (*G.Node, error) {
		var e graph.Builder
		var x Inputs
		for _, u := range Vars {
			if u != v {
				x.set(u, e.Use(b.input(u)))
			}
		}
		return e.Result(e.Do(func() (*G.Node, error) { return b.c.queryFrom(v, x) }))
	})
}

func (c *Circuit) queryFrom(v Var, x Inputs) (*G.Node, error) {
	if c.m.Semantics == NonNegative {
		return nonNegative(c.m.Score).LogQuery(v, x, c)
	}
	return c.m.Score.Query(Linear, v, x, c)
}

// LogScore returns log φ(s,r,o) for each triple of the batch: the
// unnormalised log-probability of the model.
func (c *Circuit) LogScore(b *Batch) (*G.Node, error) {
	return b.memo("logscore", func() (*G.Node, error) {
		ls, err := c.logScore(b)
		if err != nil || c.dom == nil {
			return ls, err
		}
		return c.domainMask(b, ls)
	})
}

func (c *Circuit) logScore(b *Batch) (*G.Node, error) {
	e := c.expr()
	q, x := e.Use(b.query(Object)), e.Use(b.input(Object))
	switch c.m.Semantics {
	case Energy:
		return e.Result(e.RowDot(q, x))
	case Squared:
		return e.Result(e.LogSquare(e.RowDot(q, x), c.eps()))
	}
	return e.Result(e.signedRowLSE(e.Add(q, e.logCandidates(Object, x)), Object))
}

// eps is the epsilon mass per triple of a squared model.
func (c *Circuit) eps() float64 {
	sz := c.m.Sizes
	return c.m.EpsMass / (float64(sz.Entities) * float64(sz.Entities) * float64(sz.Relations))
}

// slotSize returns the number of values slot v takes: |E| or |R| (not to
// be confused with Domain, the constraint).
func (c *Circuit) slotSize(v Var) int {
	if v == Relation {
		return c.m.Sizes.Relations
	}
	return c.m.Sizes.Entities
}

// LogMarginal returns log Σ_v φ(...) for each triple of the batch, the
// slot v summed out: the normaliser of p(v | other two slots).
func (c *Circuit) LogMarginal(b *Batch, v Var) (*G.Node, error) {
	return b.memo(fmt.Sprintf("logmarg:%v", v), func() (*G.Node, error) {
		q, err := b.query(v)
		if err != nil {
			return nil, err
		}
		if c.dom != nil {
			return c.constrainedMarginal(b, v, q)
		}
		e := c.expr()
		switch c.m.Semantics {
		case Energy:
			return e.Result(e.RowLogSumExp(e.Use(c.Candidates(b, v))))
		case Squared:
			return c.squaredMarginal(q, v, b.size)
		}
		colSum := e.Use(c.memo(fmt.Sprintf("colsum:%v", v), func() (*G.Node, error) {
			e := c.expr()
			return e.Result(e.logCandidates(v, e.Use(c.colLogSum(v))))
		}))
		return e.Result(e.signedRowLSE(e.Add(q, colSum), v))
	})
}

// squaredMarginal computes log(Σ_v (q·x_v)² + ε·|dom v|): for entities as
// the quadratic form qᵀ(XᵀX)q, never forming a batch×|E| matrix; for
// relations by whichever of the Gram form and the direct B×|R| scores is
// cheaper (RESCAL's relation Gram matrix is d²×d²).
func (c *Circuit) squaredMarginal(q *G.Node, v Var, batch int) (*G.Node, error) {
	name := c.m.Layout.TableOf(v)
	spec := c.m.Layout.spec(name)
	n, k := spec.Rows, spec.Cols
	mass := c.eps() * float64(c.slotSize(v))
	var e graph.Builder
	var quad *G.Node
	if v != Relation || k*(n+batch) <= batch*n {
		quad = e.QuadForm(q, e.Use(c.gram(name)))
	} else {
		s := e.MatMul(q, c.tables[name], false, true)
		quad = e.RowDot(s, s)
	}
	return e.Result(e.LogPos(quad, mass))
}

// LogConditional returns log p(v | the other two slots) for each triple.
func (c *Circuit) LogConditional(b *Batch, v Var) (*G.Node, error) {
	return b.memo(fmt.Sprintf("logcond:%v", v), func() (*G.Node, error) {
		var e graph.Builder
		if c.m.Semantics == Energy {
			// Fused log-softmax: the B×|dom v| scores are needed anyway.
			s, idx := e.Use(c.Candidates(b, v)), e.Use(b.index(v))
			return e.Result(e.Neg(e.LogSoftmaxNLL(s, idx)))
		}
		return e.Result(e.Sub(e.Use(c.LogScore(b)), e.Use(c.LogMarginal(b, v))))
	})
}

// LogPartition returns log Z = log Σ_{s,r,o} φ(s,r,o) as a scalar node.
// For energy-based models it returns ErrIntractable.
func (c *Circuit) LogPartition() (*G.Node, error) {
	return c.memo("logZ", func() (*G.Node, error) {
		if c.dom != nil {
			return c.constrainedPartition()
		}
		e := c.expr()
		switch c.m.Semantics {
		case Energy:
			return nil, ErrIntractable
		case Squared:
			return e.Result(e.LogPos(e.Use(c.m.Score.SquaredPartition(c)), c.m.EpsMass))
		}
		// Σ over a slot of a multilinear circuit = the circuit evaluated at
		// the slot's column sums (paper, Proposition 1): substitute them.
		q := e.logQuery(Object, c.summedOut(e, Subject, Relation), c)
		cand := e.logCandidates(Object, e.Use(c.colLogSum(Object)))
		return e.Result(e.Sum(e.signedRowLSE(e.Add(q, cand), Object)))
	})
}

// Candidates returns the B×|dom v| matrix of log φ for every value of slot v
// given the batch's other two slots: link prediction ranks these.
func (c *Circuit) Candidates(b *Batch, v Var) (*G.Node, error) {
	return b.memo(fmt.Sprintf("cand:%v", v), func() (*G.Node, error) {
		x, err := c.candidates(b, v)
		if err != nil || c.dom == nil {
			return x, err
		}
		return c.maskCandidates(b, v, x)
	})
}

func (c *Circuit) candidates(b *Batch, v Var) (*G.Node, error) {
	e := c.expr()
	q, t := e.Use(b.query(v)), e.Use(c.table(v))
	switch c.m.Semantics {
	case Energy:
		return e.Result(e.MatMul(q, t, false, true))
	case Squared:
		return e.Result(e.LogSquare(e.MatMul(q, t, false, true), c.eps()))
	}
	return e.Result(c.logCandidatesFrom(e, q, v))
}

// logCandidatesFrom scores a non-negative model's log-query against every
// row of slot v's table: log Σ_k w_k exp(q_k + c_vk), with weights −1 on
// the trailing Negative columns.
//
// Where the score function says which blocks of the features its
// candidates repeat (CandidateBlocks), the query is folded onto the
// features instead of the features being copied into every block.
func (c *Circuit) logCandidatesFrom(e *expr, q *G.Node, v Var) *G.Node {
	if cb, ok := nonNegative(c.m.Score).(CandidateBlocks); ok {
		if e.Err() != nil {
			return nil
		}
		return e.FoldedLogMatMulExp(q, e.Use(c.table(v)), cb.CandidateBlocks(v), e.negative(v, q.Shape()[1]))
	}
	cand := e.logCandidates(v, e.Use(c.table(v)))
	if e.Err() != nil {
		return nil
	}
	return e.SignedLogMatMulExp(q, cand, false, true, e.negative(v, cand.Shape()[1]))
}

// signedRowLSE returns log(Σ_{j<k−neg} exp t_ij − Σ_{j≥k−neg} exp t_ij) per
// row of the B×k log-terms t of slot v, the trailing neg of whose columns
// have weight −1.
func (e *expr) signedRowLSE(t *G.Node, v Var) *G.Node {
	if e.Err() != nil {
		return nil
	}
	return e.SignedRowLogSumExp(t, e.negative(v, t.Shape()[1]))
}
