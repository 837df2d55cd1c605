package models

import (
	"errors"
	"fmt"

	"gekc/graph"
	"gekc/kg"

	G "gorgonia.org/gorgonia"
)

// Domain is a domain-constraint circuit c_K (paper, §5 and appendix B.4):
// relation r admits subjects of type SubjectType[r] and objects of type
// ObjectType[r], so c_K(s,r,o) = [type(s) = κ_S(r)]·[type(o) = κ_O(r)].
//
// The product φ·c_K of a GeKC with c_K is again a smooth, decomposable
// circuit: its sums over entities run over one type at a time (per-type
// Gram matrices for squared models, per-type column sums for non-negative
// ones) and its partition function sums over the (subject type, object
// type) pairs that relations share — never masking a batch×|E| matrix.
type Domain struct {
	Types       int
	EntityType  []int32 // type of each entity
	SubjectType []int32 // κ_S(r) per relation
	ObjectType  []int32 // κ_O(r) per relation

	pairOf    map[[2]int32]int32 // (κ_S, κ_O) → pair id
	pairs     [][2]int32
	pairRels  [][]int // relations of each pair
	relPair   []int32 // pair of each relation
	typeCount []int
}

// NewDomain builds the constraint from per-entity types and per-relation
// subject and object types (ids in [0, types)).
func NewDomain(entityType, subjectType, objectType []int32, types int) (*Domain, error) {
	if len(subjectType) != len(objectType) {
		return nil, errors.New("models.NewDomain: subject and object type lists differ in length")
	}
	d := &Domain{Types: types, EntityType: entityType, SubjectType: subjectType, ObjectType: objectType,
		pairOf: map[[2]int32]int32{}, relPair: make([]int32, len(subjectType)), typeCount: make([]int, types)}
	for e, t := range entityType {
		if t < 0 || int(t) >= types {
			return nil, fmt.Errorf("models.NewDomain: entity %d has type %d outside [0,%d)", e, t, types)
		}
		d.typeCount[t]++
	}
	for r := range subjectType {
		p := [2]int32{subjectType[r], objectType[r]}
		for _, t := range p {
			if t < 0 || int(t) >= types {
				return nil, fmt.Errorf("models.NewDomain: relation %d requires type %d outside [0,%d)", r, t, types)
			}
		}
		id, ok := d.pairOf[p]
		if !ok {
			id = int32(len(d.pairs))
			d.pairOf[p] = id
			d.pairs = append(d.pairs, p)
			d.pairRels = append(d.pairRels, nil)
		}
		d.relPair[r] = id
		d.pairRels[id] = append(d.pairRels[id], r)
	}
	return d, nil
}

// DomainFromSchema reads the constraint of a typed knowledge graph.
func DomainFromSchema(s *kg.Schema) (*Domain, error) {
	if s == nil {
		return nil, errors.New("the dataset has no schema (entity_types.tsv and relation_schema.tsv, or OGB node types)")
	}
	return NewDomain(s.EntityType, s.SubjectType, s.ObjectType, s.Types.Len())
}

// Consistent reports whether (s, r, o) satisfies the constraint.
func (d *Domain) Consistent(s, r, o int) bool {
	return d.EntityType[s] == d.SubjectType[r] && d.EntityType[o] == d.ObjectType[r]
}

// Pairs returns the number of distinct (subject type, object type) pairs.
func (d *Domain) Pairs() int { return len(d.pairs) }

// Size is the number of edges of the compiled constraint circuit: per pair,
// a product of three sums over its subjects, relations and objects.
func (d *Domain) Size() int {
	n := 0
	for i, p := range d.pairs {
		n += d.typeCount[p[0]] + len(d.pairRels[i]) + d.typeCount[p[1]] + 3
	}
	return n
}

// ConsistentTriples counts the triples that satisfy the constraint.
func (d *Domain) ConsistentTriples() float64 {
	var n float64
	for r := range d.SubjectType {
		n += float64(d.typeCount[d.SubjectType[r]]) * float64(d.typeCount[d.ObjectType[r]])
	}
	return n
}

func (d *Domain) requiredType(v Var) []int32 {
	if v == Subject {
		return d.SubjectType
	}
	return d.ObjectType
}

// BindConstrained binds the model to g multiplied by the domain constraint:
// every query of the returned circuit answers for p_K ∝ φ·c_K. Energy-based
// models have no tractable constrained partition function and are refused.
// A nil d means no constraint: the result is m.Bind(g).
func (m *Model) BindConstrained(g *G.ExprGraph, d *Domain) (*Circuit, error) {
	if d == nil {
		return m.Bind(g), nil
	}
	if m.Semantics == Energy {
		return nil, fmt.Errorf("models: %s with domain constraints: %w", m.Name, ErrIntractable)
	}
	if len(d.EntityType) != m.Sizes.Entities || len(d.SubjectType) != m.Sizes.Relations {
		return nil, fmt.Errorf("models: domain of %d entities and %d relations for a model of %d and %d",
			len(d.EntityType), len(d.SubjectType), m.Sizes.Entities, m.Sizes.Relations)
	}
	c := m.Bind(g)
	c.dom = d
	return c, nil
}

// Domain returns the circuit's constraint, or nil.
func (c *Circuit) Domain() *Domain { return c.dom }

// typeOf returns the int vector of the types of slot v's entities.
func (b *Batch) typeOf(v Var) (*G.Node, error) {
	return b.memo(fmt.Sprintf("type:%v", v), func() (*G.Node, error) {
		idx, err := b.index(v)
		if err != nil {
			return nil, err
		}
		return graph.MapIndex(idx, b.c.dom.EntityType)
	})
}

// required returns the int vector of the types the batch's relations
// require of slot v (Subject or Object).
func (b *Batch) required(v Var) (*G.Node, error) {
	return b.memo(fmt.Sprintf("req:%v", v), func() (*G.Node, error) {
		r, err := b.index(Relation)
		if err != nil {
			return nil, err
		}
		return graph.MapIndex(r, b.c.dom.requiredType(v))
	})
}

// pairOfBatch returns the pair id of each (type(s), type(o)), −1 if no
// relation connects those types.
func (b *Batch) pairOfBatch() (*G.Node, error) {
	return b.memo("pair", func() (*G.Node, error) {
		s, err := b.index(Subject)
		if err != nil {
			return nil, err
		}
		o, err := b.index(Object)
		if err != nil {
			return nil, err
		}
		d := b.c.dom
		return graph.PairIndex(s, o, d.EntityType, d.EntityType, d.pairOf)
	})
}

// domainMask sets −Inf on triples whose entities have the wrong types.
func (c *Circuit) domainMask(b *Batch, x *G.Node) (*G.Node, error) {
	for _, v := range []Var{Subject, Object} {
		have, err := b.typeOf(v)
		if err != nil {
			return nil, err
		}
		want, err := b.required(v)
		if err != nil {
			return nil, err
		}
		if x, err = graph.MaskEqual(x, have, want); err != nil {
			return nil, err
		}
	}
	return x, nil
}

// maskCandidates sets −Inf on candidates of slot v that violate the
// constraint given the batch's other slots.
func (c *Circuit) maskCandidates(b *Batch, v Var, x *G.Node) (*G.Node, error) {
	if v == Relation {
		p, err := b.pairOfBatch()
		if err != nil {
			return nil, err
		}
		return graph.MaskClasses(x, p, c.dom.relPair)
	}
	req, err := b.required(v)
	if err != nil {
		return nil, err
	}
	return graph.MaskClasses(x, req, c.dom.EntityType)
}

// typedGram returns Σ_{e of type t} x_e x_eᵀ for every type, for slot v's
// table (a types×k² matrix).
func (c *Circuit) typedGram(v Var) (*G.Node, error) {
	name := c.m.Layout.table(v)
	return c.memo("tgram:"+name, func() (*G.Node, error) {
		return graph.TypedGram(c.tables[name], c.dom.EntityType, c.dom.Types)
	})
}

// typedColSums returns, for a non-negative model, the log-candidates of
// slot v summed over the entities of each type (a types×k' matrix).
func (c *Circuit) typedColSums(v Var) (*G.Node, error) {
	return c.memo("tcol:"+c.m.Layout.table(v), func() (*G.Node, error) {
		t, err := c.table(v)
		if err != nil {
			return nil, err
		}
		return graph.TypedColLogSumExp(t, c.dom.EntityType, c.dom.Types)
	})
}

// constrainedMarginal is LogMarginal under the constraint.
func (c *Circuit) constrainedMarginal(b *Batch, v Var, q *G.Node) (*G.Node, error) {
	if v == Relation {
		s, err := c.Candidates(b, Relation) // already masked
		if err != nil {
			return nil, err
		}
		return graph.RowLogSumExp(s)
	}
	req, err := b.required(v)
	if err != nil {
		return nil, err
	}
	if c.m.Semantics == Squared {
		grams, err := c.typedGram(v)
		if err != nil {
			return nil, err
		}
		quad, err := graph.TypedQuadForm(q, grams, req)
		if err != nil {
			return nil, err
		}
		mass := make([]float64, c.dom.Types) // ε per admissible entity
		for t, n := range c.dom.typeCount {
			mass[t] = c.eps() * float64(n)
		}
		eps, err := graph.LookupFloats(req, mass, c.m.Dtype)
		if err != nil {
			return nil, err
		}
		sum, err := graph.Add(quad, eps)
		if err != nil {
			return nil, err
		}
		return graph.LogPos(sum, 0)
	}
	nn := nonNegative(c.m.Score)
	tc, err := c.typedColSums(v)
	if err != nil {
		return nil, err
	}
	cands, err := nn.LogCandidates(v, tc)
	if err != nil {
		return nil, err
	}
	rows, err := graph.Gather(cands, req)
	if err != nil {
		return nil, err
	}
	sum, err := graph.Add(q, rows)
	if err != nil {
		return nil, err
	}
	e := c.expr()
	return e.Result(e.signedRowLSE(sum, v))
}

// typeRow returns row t of a types×w matrix as a 1×w matrix.
func typeRow(m *G.Node, t int32) (*G.Node, error) {
	return graph.SliceBlock(m, int(t), int(t)+1, 0, m.Shape()[1])
}

// pairView restricts the sums of a partition function to subjects of one
// type, objects of another and a subset of the relations.
type pairView struct {
	*Circuit
	subj, obj int32
	rels      []int
	relRows   *G.Node
}

func (p *pairView) relations() *G.Node {
	if p.relRows == nil {
		var err error
		idx := graph.IndexVector(p.g, fmt.Sprintf("rels%v", p.rels), append([]int(nil), p.rels...))
		if p.relRows, err = graph.Gather(p.tables[p.m.Layout.Relation], idx); err != nil {
			panic(err) // gathering valid rows of a matrix cannot fail
		}
	}
	return p.relRows
}

func (p *pairView) RoleTable(v Var) *G.Node {
	if v == Relation {
		return p.relations()
	}
	return p.Circuit.RoleTable(v) // entity tables are only read through RoleGram
}

func (p *pairView) RoleGram(v Var) (*G.Node, error) {
	if v == Relation {
		return graph.Gram(p.relations())
	}
	grams, err := p.typedGram(v)
	if err != nil {
		return nil, err
	}
	t := p.subj
	if v == Object {
		t = p.obj
	}
	row, err := typeRow(grams, t)
	if err != nil {
		return nil, err
	}
	k := p.m.Layout.spec(p.m.Layout.table(v)).Cols
	return graph.Reshape(row, k, k)
}

func (p *pairView) Sizes() Sizes {
	sz := p.m.Sizes
	sz.Relations = len(p.rels)
	return sz
}

// constrainedPartition sums the partition function over the pairs of types
// that relations connect: Z_K = Σ_(a,b) Z restricted to subjects of type a,
// the relations from a to b and objects of type b.
func (c *Circuit) constrainedPartition() (*G.Node, error) {
	d := c.dom
	if c.m.Semantics == Squared {
		var total *G.Node
		for i, p := range d.pairs {
			z, err := c.m.Score.SquaredPartition(&pairView{Circuit: c, subj: p[0], obj: p[1], rels: d.pairRels[i]})
			if err != nil {
				return nil, err
			}
			if total == nil {
				total = z
			} else if total, err = graph.Add(total, z); err != nil {
				return nil, err
			}
		}
		return graph.LogPos(total, c.eps()*d.ConsistentTriples())
	}
	parts := make(G.Nodes, len(d.pairs))
	for i, p := range d.pairs {
		z, err := c.nonNegativePart(p[0], p[1], d.pairRels[i])
		if err != nil {
			return nil, err
		}
		if parts[i], err = graph.Reshape(z, 1, 1); err != nil {
			return nil, err
		}
	}
	all, err := graph.ConcatCols(parts...)
	if err != nil {
		return nil, err
	}
	lz, err := graph.RowLogSumExp(all)
	if err != nil {
		return nil, err
	}
	return graph.Sum(lz)
}

// nonNegativePart returns log Σ φ over subjects of type a, the given
// relations and objects of type b (a length-1 vector).
func (c *Circuit) nonNegativePart(a, b int32, rels []int) (*G.Node, error) {
	nn := nonNegative(c.m.Score)
	ts, err := c.typedColSums(Subject)
	if err != nil {
		return nil, err
	}
	to, err := c.typedColSums(Object)
	if err != nil {
		return nil, err
	}
	var x Inputs
	if x.S, err = typeRow(ts, a); err != nil {
		return nil, err
	}
	rt, err := c.table(Relation)
	if err != nil {
		return nil, err
	}
	idx := graph.IndexVector(c.g, fmt.Sprintf("rels%v", rels), append([]int(nil), rels...))
	rr, err := graph.Gather(rt, idx)
	if err != nil {
		return nil, err
	}
	if x.R, err = graph.ColLogSumExp(rr); err != nil {
		return nil, err
	}
	q, err := nn.LogQuery(Object, x, c)
	if err != nil {
		return nil, err
	}
	ob, err := typeRow(to, b)
	if err != nil {
		return nil, err
	}
	cand, err := nn.LogCandidates(Object, ob)
	if err != nil {
		return nil, err
	}
	sum, err := graph.Add(q, cand)
	if err != nil {
		return nil, err
	}
	e := c.expr()
	return e.Result(e.signedRowLSE(sum, Object))
}

// constrainedRelationMarginals is RelationLogMarginals under the constraint:
// for each r, log Σ φ(s,r,o) over subjects of type κ_S(r) and objects of
// type κ_O(r).
func (c *Circuit) constrainedRelationMarginals() (*G.Node, error) {
	d := c.dom
	parts := make(G.Nodes, len(d.SubjectType))
	for r := range d.SubjectType {
		a, b := d.SubjectType[r], d.ObjectType[r]
		var z *G.Node
		var err error
		if c.m.Semantics == Squared {
			z, err = c.m.Score.SquaredPartition(&pairView{Circuit: c, subj: a, obj: b, rels: []int{r}})
			if err == nil {
				mass := c.eps() * float64(d.typeCount[a]) * float64(d.typeCount[b])
				if z, err = (&restricted{Circuit: c, r: r}).asRow(z); err == nil {
					z, err = graph.LogPos(z, mass)
				}
			}
		} else if z, err = c.nonNegativePart(a, b, []int{r}); err == nil {
			z, err = graph.Reshape(z, 1, 1)
		}
		if err != nil {
			return nil, err
		}
		parts[r] = z
	}
	return graph.ConcatCols(parts...)
}
