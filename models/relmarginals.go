package models

import (
	"fmt"
	"slices"
	"sync/atomic"

	"gekc/graph"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// RelationLogMarginals returns the vector (length |R|) of
// log Σ_{s,o} φ(s,r,o) for every relation r: the unnormalised log p(R),
// with which exact sampling starts.
//
// Non-negative models substitute the column sums of the subject and object
// tables into the relation query. Squared models evaluate their partition
// function restricted to each relation in turn (the relation table replaced
// by one of its rows), reusing the entity Gram matrices; the graph holds
// the intermediates of every relation at once, which at FB15k-237's sizes
// and d = 1000 is tens of GB. RelationMarginals evaluates the same numbers
// one relation at a time, in the memory of one: use it beyond toy sizes.
func (c *Circuit) RelationLogMarginals() (*G.Node, error) {
	return c.memo("relmarg", func() (*G.Node, error) {
		if c.dom != nil {
			return c.constrainedRelationMarginals()
		}
		switch c.m.Semantics {
		case Energy:
			return nil, ErrIntractable
		case NonNegative:
			e := c.expr()
			q := e.logQuery(Relation, c.summedOut(e, Subject, Object), c)
			return e.Result(c.logCandidatesFrom(e, q, Relation))
		}
		var e graph.Builder
		parts := make(G.Nodes, c.m.Sizes.Relations)
		for r := range parts {
			rt := &restricted{Circuit: c, r: r}
			parts[r] = rt.asRow(&e, e.Use(c.m.Score.SquaredPartition(rt)))
		}
		// Each relation carries ε·|E|² of the uniform mass.
		n := float64(c.m.Sizes.Entities)
		return e.Result(e.LogPos(e.ConcatCols(parts...), c.eps()*n*n))
	})
}

// restricted is the circuit's tables with the relation table cut down to
// row r, so that a partition function sums over S and O only.
type restricted struct {
	*Circuit
	r   int
	row *G.Node
	// idx, if set, is a one-entry index vector naming the relation at run
	// time (r is then unused), and gram holds inputs standing for the
	// entity roles' Gram matrices, computed once outside the program.
	idx  *G.Node
	gram map[Var]*G.Node
}

func (t *restricted) rowNode() (*G.Node, error) {
	if t.row != nil {
		return t.row, nil
	}
	name := t.m.Layout.Relation
	idx := t.idx
	if idx == nil {
		idx = graph.IndexVector(t.g, fmt.Sprintf("relation#%d", t.r), []int{t.r})
	}
	row, err := graph.Gather(t.tables[name], idx)
	t.row = row
	return row, err
}

func (t *restricted) RoleTable(v Var) *G.Node {
	if v == Relation {
		row, err := t.rowNode()
		if err != nil {
			panic(err) // the relation table is a matrix, gathering a row cannot fail
		}
		return row
	}
	return t.Circuit.RoleTable(v)
}

func (t *restricted) RoleGram(v Var) (*G.Node, error) {
	if g, ok := t.gram[v]; ok {
		return g, nil
	}
	if v != Relation {
		return t.Circuit.RoleGram(v)
	}
	var e graph.Builder
	return e.Result(e.Gram(e.Use(t.rowNode())))
}

func (t *restricted) Sizes() Sizes {
	sz := t.m.Sizes
	sz.Relations = 1
	return sz
}

// asRow turns a scalar node into a 1×1 matrix for concatenation.
func (t *restricted) asRow(e *graph.Builder, z *G.Node) *G.Node {
	if e.Err() != nil {
		return nil
	}
	name := fmt.Sprintf("one#%d", t.r)
	if t.idx != nil {
		name = "one#" + t.idx.Name()
	}
	return e.ScaleBy(identity(t.g, t.m.Dtype, 1, name), z)
}

// RelationMarginals evaluates RelationLogMarginals of a circuit. For an
// unconstrained squared model it runs the partition function restricted
// to one relation once per relation, with the entity Gram matrices
// computed once per call and passed in, so its memory is that of one
// relation (about 150 MB for ComplEx² at d = 1000) whatever |R|; other
// models compute all relations in one run.
type RelationMarginals struct {
	n    int
	out  *G.Node
	prog *graph.Program
	// Per relation (unconstrained squared models):
	rs        []int // backing of the relation index vector
	gramProg  *graph.Program
	grams     []*G.Node // computed by gramProg
	gramInput []*G.Node // read by prog; grams[i]'s value is bound to gramInput[i]
}

var relationMarginalsCount atomic.Int64

// NewRelationMarginals compiles the programs; it fails with ErrIntractable
// for an energy-based model.
func (c *Circuit) NewRelationMarginals() (*RelationMarginals, error) {
	n := c.m.Sizes.Relations
	if c.dom != nil || c.m.Semantics != Squared {
		out, err := c.RelationLogMarginals()
		if err != nil {
			return nil, err
		}
		prog, err := graph.Compile(out)
		if err != nil {
			return nil, err
		}
		return &RelationMarginals{n: n, out: out, prog: prog}, nil
	}
	rm := &RelationMarginals{n: n, rs: make([]int, 1)}
	// Gorgonia merges input nodes of equal name, type and shape: a second
	// RelationMarginals on this graph must not read the first one's index.
	tag := relationMarginalsCount.Add(1)
	rt := &restricted{Circuit: c, idx: graph.IndexVector(c.g, fmt.Sprintf("relation-marginal#%d", tag), rm.rs), gram: map[Var]*G.Node{}}
	for _, v := range []Var{Subject, Object} {
		g, err := c.RoleGram(v)
		if err != nil {
			return nil, err
		}
		// Subject and object share a table (and so a Gram matrix) in
		// ComplEx: one input then stands for both.
		if i := slices.Index(rm.grams, g); i >= 0 {
			rt.gram[v] = rm.gramInput[i]
			continue
		}
		in := G.NewMatrix(c.g, c.m.Dtype, G.WithShape(g.Shape()...), G.WithName(fmt.Sprintf("relation-marginal-gram#%d-%v", tag, v)),
			G.WithValue(tensor.New(tensor.Of(c.m.Dtype), tensor.WithShape(g.Shape()...))))
		rm.grams, rm.gramInput = append(rm.grams, g), append(rm.gramInput, in)
		rt.gram[v] = in
	}
	var err error
	if rm.gramProg, err = graph.Compile(rm.grams...); err != nil {
		return nil, err
	}
	var e graph.Builder
	z := e.Use(c.m.Score.SquaredPartition(rt))
	n2 := float64(c.m.Sizes.Entities)
	if rm.out, err = e.Result(e.LogPos(rt.asRow(&e, z), c.eps()*n2*n2)); err != nil {
		return nil, err
	}
	if rm.prog, err = graph.Compile(rm.out); err != nil {
		return nil, err
	}
	return rm, nil
}

// Values returns log Σ_{s,o} φ(s,r,o) for every relation r, from the
// model's current parameters.
func (rm *RelationMarginals) Values() ([]float64, error) {
	if rm.rs == nil {
		if err := rm.prog.Run(); err != nil {
			return nil, err
		}
		return append([]float64(nil), graph.Float64s(rm.out.Value())...), nil
	}
	if err := rm.gramProg.Run(); err != nil {
		return nil, err
	}
	for i, g := range rm.grams {
		if err := G.Let(rm.gramInput[i], g.Value()); err != nil {
			return nil, err
		}
	}
	vals := make([]float64, rm.n)
	for r := range vals {
		rm.rs[0] = r
		if err := rm.prog.Run(); err != nil {
			return nil, err
		}
		vals[r] = graph.Float64s(rm.out.Value())[0]
	}
	return vals, nil
}

// identity returns the k×k identity matrix as a constant node.
func identity(g *G.ExprGraph, dt tensor.Dtype, k int, name string) *G.Node {
	var backing any = unitDiagonal[float32](k)
	if dt == tensor.Float64 {
		backing = unitDiagonal[float64](k)
	}
	return G.NewMatrix(g, dt, G.WithShape(k, k), G.WithName(name),
		G.WithValue(tensor.New(tensor.WithShape(k, k), tensor.WithBacking(backing))))
}

func unitDiagonal[T float32 | float64](k int) []T {
	x := make([]T, k*k)
	for i := 0; i < k; i++ {
		x[i*k+i] = 1
	}
	return x
}

// squaredSubjectMarginals returns, for the relation r that the one-entry
// index vector rs names, the vector over all subjects s of
// log(Σ_o φ(s,r,o)² + ε·|E|): the unnormalised log p(S | r) of a squared
// model, as LogMarginal over the objects of the batch (s, r) would give it
// for every s at once.
//
// The object query is linear in the subject row, q(s, r) = s·A_r, where
// row i of A_r is the query of the i-th unit vector; hence
// Σ_o (q·x_o)² = s·M_r·sᵀ with M_r = A_r G_O A_rᵀ (k×k). That is one
// |E|×k×k product per relation, without building, storing and contracting
// |E| queries, which costs several times more in memory traffic.
//
// gram is G_O, the Gram matrix of the object table, passed in so that a
// sampler computes it once for all relations rather than in every run.
func (c *Circuit) squaredSubjectMarginals(rs, gram *G.Node) (*G.Node, error) {
	if c.m.Semantics != Squared || c.dom != nil {
		return nil, fmt.Errorf("models: the subject marginals by relation need an unconstrained squared model")
	}
	k := c.m.Layout.spec(c.m.Layout.Subject).Cols
	if rs.Shape()[0] != 1 {
		return nil, fmt.Errorf("models: %d relation indices, want one", rs.Shape()[0])
	}
	var e graph.Builder
	mr := e.Do(func() (*G.Node, error) { return c.squaredSubjectForm(rs, gram, k) })
	subjects := c.RoleTable(Subject)
	quad := e.RowDot(e.MatMul(subjects, mr, false, false), subjects)
	return e.Result(e.LogPos(quad, c.eps()*float64(c.m.Sizes.Entities)))
}

// squaredSubjectForm returns M_r = A_r G_O A_rᵀ (k×k, k the subject
// table's width) of the relation rs names: Σ_o φ(s,r,o)² = s·M_r·sᵀ.
func (c *Circuit) squaredSubjectForm(rs, gram *G.Node, k int) (*G.Node, error) {
	units := identity(c.g, c.m.Dtype, k, fmt.Sprintf("subject-units-%d", c.g.AllNodes().Len()))
	var e graph.Builder
	rel := e.Gather(c.tables[c.m.Layout.Relation], rs)
	a := e.Do(func() (*G.Node, error) { return c.queryFrom(Object, Inputs{S: units, R: rel}) })
	return e.Result(e.MatMul(e.MatMul(a, gram, false, false), a, false, true))
}

// nonNegativeSubjectMarginals returns the |R|×|E| matrix of
// log Σ_o φ(s,r,o) for every relation r (row) and subject s (column) of an
// unconstrained non-negative model: the unnormalised log p(S | r). The
// object is summed out by its column sums (paper, Proposition 1), and the
// subject queries of all relations are scored against every subject at
// once, as link prediction scores candidates: |R|·|E|·k work in all.
func (c *Circuit) nonNegativeSubjectMarginals() (*G.Node, error) {
	if c.m.Semantics != NonNegative || c.dom != nil {
		return nil, fmt.Errorf("models: the subject marginals by relation need an unconstrained non-negative model")
	}
	e := c.expr()
	x := c.summedOut(e, Object)
	x.R = e.Use(c.table(Relation))
	return e.Result(c.logCandidatesFrom(e, e.logQuery(Subject, x, c), Subject))
}
