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
		var e graph.Builder
		return e.Result(e.MapIndex(e.Use(b.index(v)), b.c.dom.EntityType))
	})
}

// required returns the int vector of the types the batch's relations
// require of slot v (Subject or Object).
func (b *Batch) required(v Var) (*G.Node, error) {
	return b.memo(fmt.Sprintf("req:%v", v), func() (*G.Node, error) {
		var e graph.Builder
		return e.Result(e.MapIndex(e.Use(b.index(Relation)), b.c.dom.requiredType(v)))
	})
}

// pairOfBatch returns the pair id of each (type(s), type(o)), −1 if no
// relation connects those types.
func (b *Batch) pairOfBatch() (*G.Node, error) {
	return b.memo("pair", func() (*G.Node, error) {
		var e graph.Builder
		s, o := e.Use(b.index(Subject)), e.Use(b.index(Object))
		d := b.c.dom
		return e.Result(e.PairIndex(s, o, d.EntityType, d.EntityType, d.pairOf))
	})
}

// domainMask sets −Inf on triples whose entities have the wrong types.
func (c *Circuit) domainMask(b *Batch, x *G.Node) (*G.Node, error) {
	var e graph.Builder
	for _, v := range []Var{Subject, Object} {
		x = e.MaskEqual(x, e.Use(b.typeOf(v)), e.Use(b.required(v)))
	}
	return e.Result(x)
}

// maskCandidates sets −Inf on candidates of slot v that violate the
// constraint given the batch's other slots.
func (c *Circuit) maskCandidates(b *Batch, v Var, x *G.Node) (*G.Node, error) {
	var e graph.Builder
	if v == Relation {
		return e.Result(e.MaskClasses(x, e.Use(b.pairOfBatch()), c.dom.relPair))
	}
	return e.Result(e.MaskClasses(x, e.Use(b.required(v)), c.dom.EntityType))
}

// typedGram returns Σ_{e of type t} x_e x_eᵀ for every type, for slot v's
// table (a types×k² matrix).
func (c *Circuit) typedGram(v Var) (*G.Node, error) {
	name := c.m.Layout.TableOf(v)
	return c.memo("tgram:"+name, func() (*G.Node, error) {
		return graph.TypedGram(c.tables[name], c.dom.EntityType, c.dom.Types)
	})
}

// typedColSums returns, for a non-negative model, the log-candidates of
// slot v summed over the entities of each type (a types×k' matrix).
func (c *Circuit) typedColSums(v Var) (*G.Node, error) {
	return c.memo("tcol:"+c.m.Layout.TableOf(v), func() (*G.Node, error) {
		var e graph.Builder
		return e.Result(e.TypedColLogSumExp(e.Use(c.table(v)), c.dom.EntityType, c.dom.Types))
	})
}

// constrainedMarginal is LogMarginal under the constraint.
func (c *Circuit) constrainedMarginal(b *Batch, v Var, q *G.Node) (*G.Node, error) {
	e := c.expr()
	if v == Relation {
		return e.Result(e.RowLogSumExp(e.Use(c.Candidates(b, Relation)))) // already masked
	}
	req := e.Use(b.required(v))
	if c.m.Semantics == Squared {
		mass := make([]float64, c.dom.Types) // ε per admissible entity
		for t, n := range c.dom.typeCount {
			mass[t] = c.eps() * float64(n)
		}
		quad := e.TypedQuadForm(q, e.Use(c.typedGram(v)), req)
		return e.Result(e.LogPos(e.Add(quad, e.LookupFloats(req, mass, c.m.Dtype)), 0))
	}
	rows := e.Gather(e.logCandidates(v, e.Use(c.typedColSums(v))), req)
	return e.Result(e.signedRowLSE(e.Add(q, rows), v))
}

// typeRow returns row t of a types×w matrix as a 1×w matrix.
func typeRow(e *graph.Builder, m *G.Node, t int32) *G.Node {
	if e.Err() != nil {
		return nil
	}
	return e.SliceBlock(m, int(t), int(t)+1, 0, m.Shape()[1])
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
	t := p.subj
	if v == Object {
		t = p.obj
	}
	k := p.m.Layout.spec(p.m.Layout.TableOf(v)).Cols
	var e graph.Builder
	return e.Result(e.Reshape(typeRow(&e, e.Use(p.typedGram(v)), t), k, k))
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
	e := c.expr()
	parts := make(G.Nodes, len(d.pairs))
	if c.m.Semantics == Squared {
		for i, p := range d.pairs {
			parts[i] = e.Use(c.m.Score.SquaredPartition(&pairView{Circuit: c, subj: p[0], obj: p[1], rels: d.pairRels[i]}))
		}
		return e.Result(e.LogPos(e.AddAll(parts...), c.eps()*d.ConsistentTriples()))
	}
	for i, p := range d.pairs {
		parts[i] = e.Reshape(c.nonNegativePart(e, p[0], p[1], d.pairRels[i]), 1, 1)
	}
	return e.Result(e.Sum(e.RowLogSumExp(e.ConcatCols(parts...))))
}

// nonNegativePart returns log Σ φ over subjects of type a, the given
// relations and objects of type b (a length-1 vector).
func (c *Circuit) nonNegativePart(e *expr, a, b int32, rels []int) *G.Node {
	ts, to := e.Use(c.typedColSums(Subject)), e.Use(c.typedColSums(Object))
	idx := graph.IndexVector(c.g, fmt.Sprintf("rels%v", rels), append([]int(nil), rels...))
	x := Inputs{S: typeRow(&e.Builder, ts, a), R: e.ColLogSumExp(e.Gather(e.Use(c.table(Relation)), idx))}
	q := e.logQuery(Object, x, c)
	cand := e.logCandidates(Object, typeRow(&e.Builder, to, b))
	return e.signedRowLSE(e.Add(q, cand), Object)
}

// constrainedRelationMarginals is RelationLogMarginals under the constraint:
// for each r, log Σ φ(s,r,o) over subjects of type κ_S(r) and objects of
// type κ_O(r).
func (c *Circuit) constrainedRelationMarginals() (*G.Node, error) {
	d := c.dom
	e := c.expr()
	parts := make(G.Nodes, len(d.SubjectType))
	for r := range d.SubjectType {
		a, b := d.SubjectType[r], d.ObjectType[r]
		if c.m.Semantics != Squared {
			parts[r] = e.Reshape(c.nonNegativePart(e, a, b, []int{r}), 1, 1)
			continue
		}
		z := e.Use(c.m.Score.SquaredPartition(&pairView{Circuit: c, subj: a, obj: b, rels: []int{r}}))
		mass := c.eps() * float64(d.typeCount[a]) * float64(d.typeCount[b])
		parts[r] = e.LogPos((&restricted{Circuit: c, r: r}).asRow(&e.Builder, z), mass)
	}
	return e.Result(e.ConcatCols(parts...))
}
