package models

import (
	"fmt"

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
// by one of its rows), reusing the entity Gram matrices, so the cost is |R|
// small contractions on top of one partition function.
func (c *Circuit) RelationLogMarginals() (*G.Node, error) {
	return c.memo("relmarg", func() (*G.Node, error) {
		if c.dom != nil {
			return c.constrainedRelationMarginals()
		}
		switch c.m.Semantics {
		case Energy:
			return nil, ErrIntractable
		case NonNegative:
			nn := nonNegative(c.m.Score)
			x, err := c.summedOut(Subject, Object)
			if err != nil {
				return nil, err
			}
			q, err := nn.LogQuery(Relation, x, c)
			if err != nil {
				return nil, err
			}
			return c.logCandidatesFrom(q, Relation)
		}
		nr := c.m.Sizes.Relations
		parts := make(G.Nodes, nr)
		for r := 0; r < nr; r++ {
			rt := &restricted{Circuit: c, r: r}
			z, err := c.m.Score.SquaredPartition(rt)
			if err != nil {
				return nil, err
			}
			if parts[r], err = rt.asRow(z); err != nil {
				return nil, err
			}
		}
		zs, err := graph.ConcatCols(parts...)
		if err != nil {
			return nil, err
		}
		// Each relation carries ε·|E|² of the uniform mass.
		n := float64(c.m.Sizes.Entities)
		return graph.LogPos(zs, c.eps()*n*n)
	})
}

// restricted is the circuit's tables with the relation table cut down to
// row r, so that a partition function sums over S and O only.
type restricted struct {
	*Circuit
	r   int
	row *G.Node
}

func (t *restricted) rowNode() (*G.Node, error) {
	if t.row != nil {
		return t.row, nil
	}
	name := t.m.Layout.Relation
	idx := graph.IndexVector(t.g, fmt.Sprintf("relation#%d", t.r), []int{t.r})
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
	if v != Relation {
		return t.Circuit.RoleGram(v)
	}
	row, err := t.rowNode()
	if err != nil {
		return nil, err
	}
	return graph.Gram(row)
}

func (t *restricted) Sizes() Sizes {
	sz := t.m.Sizes
	sz.Relations = 1
	return sz
}

// asRow turns a scalar node into a 1×1 matrix for concatenation.
func (t *restricted) asRow(z *G.Node) (*G.Node, error) {
	one := G.NewMatrix(t.g, t.m.Dtype, G.WithShape(1, 1), G.WithName(fmt.Sprintf("one#%d", t.r)),
		G.WithValue(tensor.New(tensor.Of(t.m.Dtype), tensor.WithShape(1, 1), tensor.WithBacking(oneOfDtype(t.m.Dtype)))))
	return graph.ScaleBy(one, z)
}

func oneOfDtype(dt tensor.Dtype) any {
	if dt == tensor.Float64 {
		return []float64{1}
	}
	return []float32{1}
}
