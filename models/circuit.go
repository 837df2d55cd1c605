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
func (c *Circuit) RoleTable(v Var) *G.Node { return c.tables[c.m.Layout.table(v)] }

// RoleGram returns the Gram matrix of slot v's table (Tables interface);
// slots sharing a table share one Gram node.
func (c *Circuit) RoleGram(v Var) (*G.Node, error) { return c.gram(c.m.Layout.table(v)) }

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

// table returns the node whose rows are the input units of slot v: the raw
// parameters, or for non-negative models their log features.
func (c *Circuit) table(v Var) (*G.Node, error) {
	name := c.m.Layout.table(v)
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
	return c.memo("collse:"+c.m.Layout.table(v), func() (*G.Node, error) {
		t, err := c.table(v)
		if err != nil {
			return nil, err
		}
		return graph.ColLogSumExp(t)
	})
}

// summedOut returns the inputs of a non-negative circuit with the slots vs
// summed out: each set to its column log-sums.
func (c *Circuit) summedOut(vs ...Var) (Inputs, error) {
	var x Inputs
	for _, v := range vs {
		s, err := c.colLogSum(v)
		if err != nil {
			return Inputs{}, err
		}
		x.set(v, s)
	}
	return x, nil
}

// input returns the rows of slot v's input units for the batch.
func (b *Batch) input(v Var) (*G.Node, error) {
	return b.memo(fmt.Sprintf("in:%v", v), func() (*G.Node, error) {
		t, err := b.c.table(v)
		if err != nil {
			return nil, err
		}
		idx, err := b.index(v)
		if err != nil {
			return nil, err
		}
		return graph.Gather(t, idx)
	})
}

// query returns q_v for the batch.
func (b *Batch) query(v Var) (*G.Node, error) {
	return b.memo(fmt.Sprintf("q:%v", v), func() (*G.Node, error) {
		var x Inputs
		for _, u := range Vars {
			if u == v {
				continue
			}
			in, err := b.input(u)
			if err != nil {
				return nil, err
			}
			x.set(u, in)
		}
		return b.c.queryFrom(v, x)
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
	q, err := b.query(Object)
	if err != nil {
		return nil, err
	}
	x, err := b.input(Object)
	if err != nil {
		return nil, err
	}
	switch c.m.Semantics {
	case Energy:
		return graph.RowDot(q, x)
	case Squared:
		phi, err := graph.RowDot(q, x)
		if err != nil {
			return nil, err
		}
		return graph.LogSquare(phi, c.eps())
	}
	nn := nonNegative(c.m.Score)
	cand, err := nn.LogCandidates(Object, x)
	if err != nil {
		return nil, err
	}
	t, err := graph.Add(q, cand)
	if err != nil {
		return nil, err
	}
	return signedRowLSE(t, nn.Negative(Object, t.Shape()[1]))
}

// eps is the epsilon mass per triple of a squared model.
func (c *Circuit) eps() float64 {
	sz := c.m.Sizes
	return c.m.EpsMass / (float64(sz.Entities) * float64(sz.Entities) * float64(sz.Relations))
}

// domain returns the number of values slot v takes.
func (c *Circuit) domain(v Var) int {
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
		switch c.m.Semantics {
		case Energy:
			s, err := c.Candidates(b, v)
			if err != nil {
				return nil, err
			}
			return graph.RowLogSumExp(s)
		case Squared:
			return c.squaredMarginal(q, v, b.size)
		}
		nn := nonNegative(c.m.Score)
		colSum, err := c.memo(fmt.Sprintf("colsum:%v", v), func() (*G.Node, error) {
			s, err := c.colLogSum(v)
			if err != nil {
				return nil, err
			}
			return nn.LogCandidates(v, s)
		})
		if err != nil {
			return nil, err
		}
		sum, err := graph.Add(q, colSum)
		if err != nil {
			return nil, err
		}
		return signedRowLSE(sum, nn.Negative(v, sum.Shape()[1]))
	})
}

// squaredMarginal computes log(Σ_v (q·x_v)² + ε·|dom v|): for entities as
// the quadratic form qᵀ(XᵀX)q, never forming a batch×|E| matrix; for
// relations by whichever of the Gram form and the direct B×|R| scores is
// cheaper (RESCAL's relation Gram matrix is d²×d²).
func (c *Circuit) squaredMarginal(q *G.Node, v Var, batch int) (*G.Node, error) {
	name := c.m.Layout.table(v)
	spec := c.m.Layout.spec(name)
	n, k := spec.Rows, spec.Cols
	mass := c.eps() * float64(c.domain(v))
	var quad *G.Node
	if v != Relation || k*(n+batch) <= batch*n {
		gram, err := c.gram(name)
		if err != nil {
			return nil, err
		}
		if quad, err = graph.QuadForm(q, gram); err != nil {
			return nil, err
		}
	} else {
		s, err := graph.MatMul(q, c.tables[name], false, true)
		if err != nil {
			return nil, err
		}
		if quad, err = graph.RowDot(s, s); err != nil {
			return nil, err
		}
	}
	return graph.LogPos(quad, mass)
}

// LogConditional returns log p(v | the other two slots) for each triple.
func (c *Circuit) LogConditional(b *Batch, v Var) (*G.Node, error) {
	return b.memo(fmt.Sprintf("logcond:%v", v), func() (*G.Node, error) {
		if c.m.Semantics == Energy {
			// Fused log-softmax: the B×|dom v| scores are needed anyway.
			s, err := c.Candidates(b, v)
			if err != nil {
				return nil, err
			}
			idx, err := b.index(v)
			if err != nil {
				return nil, err
			}
			nll, err := graph.LogSoftmaxNLL(s, idx)
			if err != nil {
				return nil, err
			}
			return graph.Scale(nll, -1)
		}
		ls, err := c.LogScore(b)
		if err != nil {
			return nil, err
		}
		lm, err := c.LogMarginal(b, v)
		if err != nil {
			return nil, err
		}
		return graph.Sub(ls, lm)
	})
}

// LogPartition returns log Z = log Σ_{s,r,o} φ(s,r,o) as a scalar node.
// For energy-based models it returns ErrIntractable.
func (c *Circuit) LogPartition() (*G.Node, error) {
	return c.memo("logZ", func() (*G.Node, error) {
		if c.dom != nil {
			return c.constrainedPartition()
		}
		switch c.m.Semantics {
		case Energy:
			return nil, ErrIntractable
		case Squared:
			z, err := c.m.Score.SquaredPartition(c)
			if err != nil {
				return nil, err
			}
			return graph.LogPos(z, c.m.EpsMass)
		}
		// Σ over a slot of a multilinear circuit = the circuit evaluated at
		// the slot's column sums (paper, Proposition 1): substitute them.
		nn := nonNegative(c.m.Score)
		x, err := c.summedOut(Subject, Relation)
		if err != nil {
			return nil, err
		}
		q, err := nn.LogQuery(Object, x, c)
		if err != nil {
			return nil, err
		}
		so, err := c.colLogSum(Object)
		if err != nil {
			return nil, err
		}
		cand, err := nn.LogCandidates(Object, so)
		if err != nil {
			return nil, err
		}
		sum, err := graph.Add(q, cand)
		if err != nil {
			return nil, err
		}
		z, err := signedRowLSE(sum, nn.Negative(Object, sum.Shape()[1]))
		if err != nil {
			return nil, err
		}
		return graph.Sum(z)
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
	q, err := b.query(v)
	if err != nil {
		return nil, err
	}
	t, err := c.table(v)
	if err != nil {
		return nil, err
	}
	switch c.m.Semantics {
	case Energy:
		return graph.MatMul(q, t, false, true)
	case Squared:
		s, err := graph.MatMul(q, t, false, true)
		if err != nil {
			return nil, err
		}
		return graph.LogSquare(s, c.eps())
	}
	return c.logCandidatesFrom(q, v)
}

// logCandidatesFrom scores a non-negative model's log-query against every
// row of slot v's table: log Σ_k w_k exp(q_k + c_vk), with weights −1 on
// the trailing Negative columns.
func (c *Circuit) logCandidatesFrom(q *G.Node, v Var) (*G.Node, error) {
	t, err := c.table(v)
	if err != nil {
		return nil, err
	}
	nn := nonNegative(c.m.Score)
	cand, err := nn.LogCandidates(v, t)
	if err != nil {
		return nil, err
	}
	k := cand.Shape()[1]
	neg := nn.Negative(v, k)
	if neg == 0 {
		return graph.LogMatMulExp(q, cand, false, true)
	}
	part := func(from, to int) (*G.Node, error) {
		qs, err := graph.SliceCols(q, from, to)
		if err != nil {
			return nil, err
		}
		cs, err := graph.SliceCols(cand, from, to)
		if err != nil {
			return nil, err
		}
		return graph.LogMatMulExp(qs, cs, false, true)
	}
	pos, err := part(0, k-neg)
	if err != nil {
		return nil, err
	}
	ng, err := part(k-neg, k)
	if err != nil {
		return nil, err
	}
	return logSubExp(pos, ng)
}

// signedRowLSE returns log(Σ_{j<k−neg} exp t_ij − Σ_{j≥k−neg} exp t_ij) per row.
func signedRowLSE(t *G.Node, neg int) (*G.Node, error) {
	k := t.Shape()[1]
	if neg == 0 {
		return graph.RowLogSumExp(t)
	}
	ps, err := graph.SliceCols(t, 0, k-neg)
	if err != nil {
		return nil, err
	}
	ns, err := graph.SliceCols(t, k-neg, k)
	if err != nil {
		return nil, err
	}
	p, err := graph.RowLogSumExp(ps)
	if err != nil {
		return nil, err
	}
	n, err := graph.RowLogSumExp(ns)
	if err != nil {
		return nil, err
	}
	return logSubExp(p, n)
}

// logSubExp returns log(exp p − exp n) = p + log(1 − exp(n − p)).
func logSubExp(p, n *G.Node) (*G.Node, error) {
	d, err := graph.Sub(n, p)
	if err != nil {
		return nil, err
	}
	l, err := graph.Log1mExp(d)
	if err != nil {
		return nil, err
	}
	return graph.Add(p, l)
}
