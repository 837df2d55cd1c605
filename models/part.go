package models

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"

	"gekc/graph"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// ErrNotShardable is returned by EntityStat for models whose normalisers
// read the entity tables other than through a sum over their rows:
// energy-based models, whose normalisers are log-sum-exps of B×|E|
// candidate scores (package dist combines those across processes).
var ErrNotShardable = errors.New("an energy-based model's normalisers are log-sum-exps of its B×|E| candidate scores, not a statistic summed over rows")

// EntityTables returns the names of the tables whose rows are entities
// (the subject's and the object's), in layout order.
func (l Layout) EntityTables() []string {
	var out []string
	for _, t := range l.Tables {
		if t.Name == l.Subject || t.Name == l.Object {
			out = append(out, t.Name)
		}
	}
	return out
}

// NewPart draws the parameters New draws for the same arguments and keeps
// one process's part of them: rows [lo, hi) of every entity table and the
// whole of every other table. The returned model holds no parameters; bind
// it with BindPart.
func NewPart(name string, sz Sizes, opt Options, lo, hi int) (*Model, map[string]*tensor.Dense, error) {
	m, opt, err := describe(name, sz, opt)
	if err != nil {
		return nil, nil, err
	}
	if lo < 0 || hi > sz.Entities || lo >= hi {
		return nil, nil, fmt.Errorf("models.NewPart(%q): rows [%d, %d) of %d entities", name, lo, hi, sz.Entities)
	}
	entity := m.Layout.EntityTables()
	part := map[string]*tensor.Dense{}
	rng := m.initStream(opt)
	for _, t := range m.Layout.Tables {
		if !slices.Contains(entity, t.Name) {
			x, err := m.initTable(t, t.Rows, opt, rng)
			if err != nil {
				return nil, nil, err
			}
			part[t.Name] = denseOf(opt.Dtype, x, t.Rows, t.Cols)
			continue
		}
		x, err := m.initRows(t, lo, hi, opt, rng)
		if err != nil {
			return nil, nil, err
		}
		part[t.Name] = denseOf(opt.Dtype, x, hi-lo, t.Cols)
	}
	return m, part, nil
}

// partChunk is the number of rows a squared model's entity table is
// drawn in at a time by NewPart.
const partChunk = 1 << 14

// initRows draws table t as initTables would and returns rows [lo, hi).
// A squared model's tables are drawn elementwise in row-major order (the
// log-normal init), so they are drawn in chunks of rows and only the part
// is kept. Other semantics draw column statistics over all rows
// (log-Dirichlet columns): the whole table is drawn, in float64, then cut
// and let go. TestNewPartMatchesNew holds every registered
// model to New's values.
func (m *Model) initRows(t TableSpec, lo, hi int, opt Options, rng *rand.Rand) ([]float64, error) {
	if m.Semantics != Squared {
		x, err := m.initTable(t, t.Rows, opt, rng)
		if err != nil {
			return nil, err
		}
		return slices.Clone(x[lo*t.Cols : hi*t.Cols]), nil // not a view: the whole table is let go
	}
	out := make([]float64, 0, (hi-lo)*t.Cols)
	for r0 := 0; r0 < t.Rows; r0 += partChunk {
		r1 := min(r0+partChunk, t.Rows)
		x, err := m.initTable(t, r1-r0, opt, rng)
		if err != nil {
			return nil, err
		}
		if a, b := max(r0, lo), min(r1, hi); a < b {
			out = append(out, x[(a-r0)*t.Cols:(b-r0)*t.Cols]...)
		}
	}
	return out, nil
}

// EntityStat returns the statistic of an entity table's rows that the
// model's queries read from the whole table: the Gram matrix XᵀX (squared
// semantics) or the column log-sum-exps of the rows' log features
// (non-negative). Both are sums over rows (the second in the log
// semiring), so a table split by rows has the sum (log-sum-exp) of its
// parts' statistics as its own.
func (m *Model) EntityStat(rows *G.Node) (*G.Node, error) {
	switch m.Semantics {
	case Squared:
		return graph.Gram(rows)
	case NonNegative:
		var e graph.Builder
		f := e.Do(func() (*G.Node, error) { return nonNegative(m.Score).LogFeatures(rows) })
		return e.Result(e.ColLogSumExp(f))
	}
	return nil, fmt.Errorf("models: %s: %w", m.Name, ErrNotShardable)
}

// Part is a model bound to a graph as one process of an entity-sharded
// run sees it: each entity table is a node holding the rows the process's
// batch reads (any number of rows; the batch's indices point into it), and
// each entity table's whole-table statistic (EntityStat over all of its
// rows, held by every process together) is an input node, Stats[table].
// Every query of the Circuit then answers for the whole model, and the
// gradient of a loss with respect to Stats is what each process needs to
// pass the normaliser's gradient on to its own rows. An energy-based
// model has no statistics: its normalisers are log-sum-exps over
// candidate rows (Candidates, against the rows bound).
type Part struct {
	*Circuit
	Stats map[string]*G.Node
}

// BindPart binds m to g with the given parameter values: for every entity
// table the batch's rows (layout's columns), for every other table the
// whole table. The statistics' input nodes get tensors of their own, which
// the caller fills before each run.
func (m *Model) BindPart(g *G.ExprGraph, values map[string]*tensor.Dense) (*Part, error) {
	c := &Circuit{m: m, g: g, tables: map[string]*G.Node{}, cache: map[string]*G.Node{}}
	entity := m.Layout.EntityTables()
	for _, t := range m.Layout.Tables {
		v := values[t.Name]
		if v == nil || v.Dims() != 2 || v.Shape()[1] != t.Cols || v.Dtype() != m.Dtype {
			return nil, fmt.Errorf("models.BindPart(%s): table %s: want a %v matrix of %d columns", m.Name, t.Name, m.Dtype, t.Cols)
		}
		if !slices.Contains(entity, t.Name) && v.Shape()[0] != t.Rows {
			return nil, fmt.Errorf("models.BindPart(%s): table %s has %d rows, want all %d", m.Name, t.Name, v.Shape()[0], t.Rows)
		}
		c.tables[t.Name] = G.NewMatrix(g, m.Dtype, G.WithShape(v.Shape()...), G.WithName(m.Name+"."+t.Name), G.WithValue(v))
	}
	p := &Part{Circuit: c, Stats: map[string]*G.Node{}}
	if m.Semantics == Energy {
		return p, nil // no normaliser reads a statistic of the rows
	}
	for _, name := range entity {
		shape, err := m.statShape(name)
		if err != nil {
			return nil, err
		}
		in := G.NewMatrix(g, m.Dtype, G.WithShape(shape...), G.WithName("stat:"+name),
			G.WithValue(tensor.New(tensor.Of(m.Dtype), tensor.WithShape(shape...))))
		p.Stats[name] = in
		key := "gram:" + name
		if m.Semantics == NonNegative {
			key = "collse:" + name
		}
		c.cache[key] = in
	}
	return p, nil
}

// statShape is the shape of EntityStat over table name's rows, found on a
// graph of its own.
func (m *Model) statShape(name string) (tensor.Shape, error) {
	spec := m.Layout.spec(name)
	rows := G.NewMatrix(G.NewGraph(), m.Dtype, G.WithShape(1, spec.Cols), G.WithName(name))
	s, err := m.EntityStat(rows)
	if err != nil {
		return nil, err
	}
	return s.Shape().Clone(), nil
}

// WithParams returns m's description with params as its parameters, one
// per table of the layout, of its columns and dtype; entity tables may
// hold any number of rows: one process's part of an entity-sharded model,
// whose queries answer for those rows only.
func (m *Model) WithParams(params map[string]*tensor.Dense) (*Model, error) {
	out := *m
	out.params = map[string]*tensor.Dense{}
	entity := m.Layout.EntityTables()
	for _, t := range m.Layout.Tables {
		v := params[t.Name]
		if v == nil || v.Dims() != 2 || v.Shape()[1] != t.Cols || v.Dtype() != m.Dtype ||
			(!slices.Contains(entity, t.Name) && v.Shape()[0] != t.Rows) {
			return nil, fmt.Errorf("models: %s.WithParams: table %s is not a %v matrix of %d columns (and %d rows unless an entity table)", m.Name, t.Name, m.Dtype, t.Cols, t.Rows)
		}
		out.params[t.Name] = v
	}
	return &out, nil
}
