package models

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Var names a slot of a triple: the random variables S, R and O.
type Var int

const (
	Subject Var = iota
	Relation
	Object
)

var varNames = [...]string{"subject", "relation", "object"}

func (v Var) String() string { return varNames[v] }

// Vars lists the three slots in order.
var Vars = [3]Var{Subject, Relation, Object}

// Sizes are the dimensions of a model.
type Sizes struct {
	Entities, Relations int
	Rank                int // embedding size d
	RelationRank        int // TuckER's d_r; 0 means Rank
}

func (s Sizes) relRank() int {
	if s.RelationRank > 0 {
		return s.RelationRank
	}
	return s.Rank
}

// Semantics is how a score function becomes a model of triples.
type Semantics int

const (
	// Energy: p(s,r,o) ∝ exp φ(s,r,o), the usual KGE; its partition function
	// is intractable and its marginals cost a B×|E| score matrix.
	Energy Semantics = iota
	// NonNegative (suffix "+"): parameters held in log space so that φ ≥ 0;
	// a probabilistic circuit whose sums are pushed into column sums.
	NonNegative
	// Squared (suffix "2"): p ∝ φ² (plus a uniform epsilon mass); sums are
	// pushed into Gram matrices.
	Squared
)

func (s Semantics) String() string {
	return [...]string{"energy", "non-negative", "squared"}[s]
}

func (s Semantics) suffix() string { return [...]string{"", "+", "2"}[s] }

// ErrIntractable is returned for queries an energy-based model cannot answer
// exactly at a feasible cost, such as its partition function.
var ErrIntractable = errors.New("intractable for an energy-based model: the partition function sums exp φ over all |E|²|R| triples")

// TableSpec describes one parameter tensor of a score function.
type TableSpec struct {
	Name       string
	Rows, Cols int
}

// Layout lists a score function's parameter tables and which table holds
// the input units of each slot: row i of Subject's table is the embedding
// of entity i as a subject, and so on. Subject and Object may name the same
// table (ComplEx) or different ones (CP's role-specific embeddings).
type Layout struct {
	Tables                    []TableSpec
	Subject, Relation, Object string
}

// TableOf names the table whose rows are slot v's input units.
func (l Layout) TableOf(v Var) string {
	return [...]string{l.Subject, l.Relation, l.Object}[v]
}

func (l Layout) spec(name string) TableSpec {
	for _, t := range l.Tables {
		if t.Name == name {
			return t
		}
	}
	panic("models: no table " + name)
}

// Options tune construction.
type Options struct {
	Seed      uint64
	Dtype     tensor.Dtype // Float32 (default) or Float64
	InitScale float64      // overrides a semantics' default init scale when > 0
	// EpsMass is the total mass of the uniform epsilon component of a squared
	// model (1 by default, as in the reference implementation): every triple
	// gets EpsMass/(|E|²|R|) on top of φ², so no log-probability is −∞ and
	// every conditional stays exactly normalised.
	EpsMass float64
}

// Model is a score function under a semantics, with its parameters. It is
// independent of any graph: Bind it to as many graphs as needed (training,
// evaluation); they all share the same parameter tensors.
type Model struct {
	Name      string // registry name, e.g. "complex2"
	Score     ScoreFunction
	Semantics Semantics
	Sizes     Sizes
	Layout    Layout
	EpsMass   float64
	Dtype     tensor.Dtype

	params map[string]*tensor.Dense
}

// Param returns the parameter tensor of the named table.
func (m *Model) Param(name string) *tensor.Dense { return m.params[name] }

// ParamNames lists the parameter tables in layout order.
func (m *Model) ParamNames() []string {
	names := make([]string, len(m.Layout.Tables))
	for i, t := range m.Layout.Tables {
		names[i] = t.Name
	}
	return names
}

// New builds and initialises the model registered under name, e.g. "cp",
// "cp+", "complex2" (see Names).
func New(name string, sz Sizes, opt Options) (*Model, error) {
	m, opt, err := describe(name, sz, opt)
	if err != nil {
		return nil, err
	}
	if err := m.initTables(opt, func(t TableSpec, x []float64) {
		m.params[t.Name] = denseOf(opt.Dtype, x, t.Rows, t.Cols)
	}); err != nil {
		return nil, err
	}
	return m, nil
}

// Describe returns the model registered under name with no parameters:
// its tables bind as shape-only nodes, so the graphs of its queries and
// steps can be built and sized (graph.Bytes) at any size without
// allocating them, but not run.
func Describe(name string, sz Sizes, opt Options) (*Model, error) {
	m, _, err := describe(name, sz, opt)
	return m, err
}

// describe returns the model registered under name with no parameters, and
// the options with their defaults filled in.
func describe(name string, sz Sizes, opt Options) (*Model, Options, error) {
	sf, sem, err := Lookup(name)
	if err != nil {
		return nil, opt, err
	}
	if sz.Entities <= 0 || sz.Relations <= 0 || sz.Rank <= 0 {
		return nil, opt, fmt.Errorf("models.New(%q): sizes must be positive, got %+v", name, sz)
	}
	if opt.Dtype == (tensor.Dtype{}) {
		opt.Dtype = tensor.Float32
	}
	if opt.Dtype != tensor.Float32 && opt.Dtype != tensor.Float64 {
		return nil, opt, fmt.Errorf("models.New(%q): dtype %v is not float32 or float64", name, opt.Dtype)
	}
	if opt.EpsMass == 0 {
		opt.EpsMass = 1
	}
	m := &Model{Name: name, Score: sf, Semantics: sem, Sizes: sz, Layout: sf.Layout(sz), EpsMass: opt.EpsMass,
		Dtype: opt.Dtype, params: map[string]*tensor.Dense{}}
	return m, opt, nil
}

// initTables draws each table's initial values in layout order from the
// options' seed and hands them to keep, row-major.
func (m *Model) initTables(opt Options, keep func(t TableSpec, x []float64)) error {
	rng := m.initStream(opt)
	for _, t := range m.Layout.Tables {
		x, err := m.initTable(t, t.Rows, opt, rng)
		if err != nil {
			return err
		}
		keep(t, x)
	}
	return nil
}

// initStream is the random stream the tables are drawn from, in order.
func (m *Model) initStream(opt Options) *rand.Rand {
	return rand.New(rand.NewPCG(opt.Seed, 0x9e3779b97f4a7c15))
}

// initTable draws the next rows of table t from rng.
func (m *Model) initTable(t TableSpec, rows int, opt Options, rng *rand.Rand) ([]float64, error) {
	x := make([]float64, rows*t.Cols)
	spec := TableSpec{Name: t.Name, Rows: rows, Cols: t.Cols}
	if err := m.Score.Init(m.Semantics, m.Sizes, spec, x, rng, opt.InitScale); err != nil {
		return nil, fmt.Errorf("models.New(%q): initialising %s: %w", m.Name, t.Name, err)
	}
	return x, nil
}

func denseOf(dt tensor.Dtype, x []float64, rows, cols int) *tensor.Dense {
	if dt == tensor.Float64 {
		return tensor.New(tensor.WithShape(rows, cols), tensor.WithBacking(x))
	}
	y := make([]float32, len(x))
	for i, v := range x {
		y[i] = float32(v)
	}
	return tensor.New(tensor.WithShape(rows, cols), tensor.WithBacking(y))
}

// registry maps base names ("cp") to score-function constructors.
var registry = map[string]func() ScoreFunction{}

// Register makes a score function available under its base name; the
// semantics suffixes "+" and "2" come with it.
func Register(base string, f func() ScoreFunction) {
	if _, dup := registry[base]; dup {
		panic("models: score function registered twice: " + base)
	}
	registry[base] = f
}

// Lookup parses a registry name into its score function and semantics.
func Lookup(name string) (ScoreFunction, Semantics, error) {
	base, sem := name, Energy
	switch {
	case strings.HasSuffix(name, "+"):
		base, sem = strings.TrimSuffix(name, "+"), NonNegative
	case strings.HasSuffix(name, "2"):
		base, sem = strings.TrimSuffix(name, "2"), Squared
	}
	f, ok := registry[base]
	if !ok {
		return nil, 0, fmt.Errorf("unknown model %q (known: %s)", name, strings.Join(Names(), ", "))
	}
	sf := f()
	if err := declined(sf, sem); err != nil {
		return nil, 0, fmt.Errorf("model %q: %s has no %s form: %w (known: %s)", name, base, sem, err, strings.Join(Names(), ", "))
	}
	return sf, sem, nil
}

// A DecliningScore is a score function without a sound form under some
// semantics, such as a score whose terms subtract and that proves no
// non-negative restriction: DeclinesSemantics says why. Its name under
// that semantics is not registered (Lookup's error gives the reason, and
// Names leaves it out).
type DecliningScore interface {
	DeclinesSemantics(sem Semantics) error
}

func declined(sf ScoreFunction, sem Semantics) error {
	if d, ok := sf.(DecliningScore); ok {
		return d.DeclinesSemantics(sem)
	}
	return nil
}

// Names lists every registry name: each score function under each
// semantics it does not decline (DecliningScore).
func Names() []string {
	var bases []string
	for b := range registry {
		bases = append(bases, b)
	}
	sort.Strings(bases)
	var out []string
	for _, b := range bases {
		for _, s := range []Semantics{Energy, NonNegative, Squared} {
			if declined(registry[b](), s) == nil {
				out = append(out, b+s.suffix())
			}
		}
	}
	return out
}

// Bind creates the model's parameter nodes in g (bound to the shared
// parameter tensors; shape-only for a Described model) and returns the
// circuit answering queries in g.
func (m *Model) Bind(g *G.ExprGraph) *Circuit {
	c := &Circuit{m: m, g: g, tables: map[string]*G.Node{}, cache: map[string]*G.Node{}}
	for _, t := range m.Layout.Tables {
		opts := []G.NodeConsOpt{G.WithShape(t.Rows, t.Cols), G.WithName(m.Name + "." + t.Name)}
		if v := m.params[t.Name]; v != nil {
			opts = append(opts, G.WithValue(v)) // none for a Described model
		}
		c.tables[t.Name] = G.NewMatrix(g, m.Dtype, opts...)
	}
	return c
}
