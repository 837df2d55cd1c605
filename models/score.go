package models

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gekc/graph"

	G "gorgonia.org/gorgonia"
)

// A ScoreFunction is a multilinear KGE score φ(s,r,o), a circuit over the
// variables S, R, O. It is linear in each slot's input units, so for every
// slot v there is a query q_v built from the other two slots such that
//
//	φ(s,r,o) = ⟨q_v(·), x_v⟩
//
// where x_v is the row of v's table. This is facebookresearch/kbc's split of
// a model into queries and candidates; written once, it yields all three
// semantics (energy, non-negative, squared), ranking and sampling.
//
// A new score function is one file: implement this interface, Register it
// in an init function, and the names "f", "f+" and "f2" exist.
type ScoreFunction interface {
	// Name is the base registry name, e.g. "cp".
	Name() string
	// Layout declares the parameter tables for the given sizes, and the
	// one table that serves each slot: a slot with several embeddings (a
	// complex number's two parts, SimplE's head and tail roles) packs them
	// side by side in its table's rows.
	Layout(sz Sizes) Layout
	// Query returns q_target from the input rows of the other two slots
	// (x's entry for the target is nil), computed in alg: products and sums
	// of the linear semiring for energy and squared models, of the log
	// semiring for non-negative ones. Operands have B rows or one row (a
	// marginalised slot), and the result has the batch's rows.
	Query(alg Algebra, target Var, x Inputs, t Tables) (*G.Node, error)
	// SquaredPartition returns Σ_{s,r,o} φ(s,r,o)² as a scalar node, in
	// closed form through Gram matrices (paper, appendix C.4.1).
	SquaredPartition(t Tables) (*G.Node, error)
	// Init fills the values x (row-major) of table t for semantics sem;
	// scale > 0 overrides the default scale. See the helpers in init.go.
	Init(sem Semantics, sz Sizes, t TableSpec, x []float64, rng *rand.Rand, scale float64) error
}

// NonNegativeScore is implemented by score functions whose non-negative
// restriction is not just "the same circuit with non-negative parameters",
// such as ComplEx, whose score subtracts a term (paper, appendix C.2).
//
// The restricted circuit is φ = Σ_k w_k·exp(q_k + c_k) with weights w_k = +1
// for the leading columns and −1 for the trailing Negative(target) ones;
// every q_k + c_k is a log-product of single input units, so summing a slot
// out replaces its features by their column log-sum-exp.
type NonNegativeScore interface {
	// LogFeatures maps rows of a parameter table to log-valued features
	// (row-wise, so it applies to gathered rows and whole tables). It
	// depends on the table only, not on the slot: a table that serves
	// several slots (one entity table for subjects and objects) has its
	// features, and their column sums, computed once per step.
	LogFeatures(rows *G.Node) (*G.Node, error)
	// LogQuery is the log-space query of target from the features of the
	// other two slots.
	LogQuery(target Var, x Inputs, t Tables) (*G.Node, error)
	// LogCandidates maps features of target's slot to the columns matching
	// LogQuery's.
	LogCandidates(target Var, feats *G.Node) (*G.Node, error)
	// Negative is how many of the cols trailing columns have weight −1.
	Negative(target Var, cols int) int
}

// CandidateBlocks is an optional method of a NonNegativeScore whose
// LogCandidates only repeat column blocks of the features: cut the
// features into max(blocks)+1 blocks of equal width, each of which blocks
// names at least once, and LogCandidates(target, f) is the concatenation
// of f's blocks blocks[0], blocks[1], …. Scoring all candidates then
// multiplies the query into the features themselves, summing the query's
// blocks that meet the same block (graph.FoldedLogMatMulExp): for
// ComplEx+, whose four terms meet two halves, half the product of a
// ranking. A test checks the claim for every registered model that makes
// it (TestCandidateBlocks).
type CandidateBlocks interface {
	CandidateBlocks(target Var) (blocks []int)
}

// Inputs are the rows of the three slots' input units for a batch (or the
// column sums of a marginalised slot).
type Inputs struct{ S, R, O *G.Node }

func (x Inputs) get(v Var) *G.Node { return [...]*G.Node{x.S, x.R, x.O}[v] }

func (x *Inputs) set(v Var, n *G.Node) { *[...]**G.Node{&x.S, &x.R, &x.O}[v] = n }

// Tables gives a score function access to its bound parameter tables.
//
// SquaredPartition must read the input units of each slot through
// RoleTable and RoleGram, not by table name: when a domain constraint (or
// a sampler) restricts the sum to some entities or relations, these return
// the Gram matrix over just those rows, and the subject side may then
// differ from the object side even when both read the same table.
type Tables interface {
	// Node returns a parameter table by name (e.g. TuckER's "core").
	Node(name string) *G.Node
	// RoleTable returns the rows summed over for slot v (the whole table
	// of v, or the rows a restriction allows).
	RoleTable(v Var) *G.Node
	// RoleGram returns Σ x xᵀ over the rows of RoleTable(v).
	RoleGram(v Var) (*G.Node, error)
	// Sizes are the model's sizes, with Relations = the number of rows of
	// RoleTable(Relation).
	Sizes() Sizes
}

// Algebra is the semiring a query is computed in. Linear is (+,×) on real
// values; Log is (log-sum-exp, +) on log-values, used by non-negative models.
type Algebra interface {
	IsLog() bool
	Mul(a, b *G.Node) (*G.Node, error) // elementwise ⊗
	Add(a, b *G.Node) (*G.Node, error) // elementwise ⊕
	Sub(a, b *G.Node) (*G.Node, error) // linear only
	// Scale is c ⊗ a for a constant c: c·a in the linear semiring, a + log c
	// in the log semiring (c > 0).
	Scale(a *G.Node, c float64) (*G.Node, error)
	MatMul(a, b *G.Node, transA, transB bool) (*G.Node, error)
	BatchVecMat(x, m *G.Node, n, k int, trans bool) (*G.Node, error)
	BatchOuter(a, b *G.Node) (*G.Node, error)
}

// Linear is the ordinary (+,×) semiring.
var Linear Algebra = linear{}

// Log is the log semiring (log-sum-exp, +) of non-negative circuits.
var Log Algebra = logAlg{}

type linear struct{}

func (linear) IsLog() bool                       { return false }
func (linear) Mul(a, b *G.Node) (*G.Node, error) { return graph.Mul(a, b) }
func (linear) Add(a, b *G.Node) (*G.Node, error) { return graph.Add(a, b) }
func (linear) Sub(a, b *G.Node) (*G.Node, error) { return graph.Sub(a, b) }
func (linear) Scale(a *G.Node, c float64) (*G.Node, error) {
	return graph.Scale(a, c)
}
func (linear) BatchOuter(a, b *G.Node) (*G.Node, error) { return graph.BatchOuter(a, b) }
func (linear) MatMul(a, b *G.Node, ta, tb bool) (*G.Node, error) {
	return graph.MatMul(a, b, ta, tb)
}
func (linear) BatchVecMat(x, m *G.Node, n, k int, trans bool) (*G.Node, error) {
	return graph.BatchVecMat(x, m, n, k, trans)
}

// ErrNotMonotone is returned by the log semiring for a subtraction: a score
// function with one needs to implement NonNegativeScore.
var ErrNotMonotone = errors.New("subtraction in the log semiring: the score is not monotone; implement NonNegativeScore to define its non-negative restriction")

type logAlg struct{}

func (logAlg) IsLog() bool                       { return true }
func (logAlg) Mul(a, b *G.Node) (*G.Node, error) { return graph.Add(a, b) }
func (logAlg) Add(a, b *G.Node) (*G.Node, error) { return graph.LogAddExp(a, b) }
func (logAlg) Sub(a, b *G.Node) (*G.Node, error) { return nil, ErrNotMonotone }
func (logAlg) Scale(a *G.Node, c float64) (*G.Node, error) {
	if !(c > 0) || math.IsInf(c, 1) {
		return nil, fmt.Errorf("models: scale by %g in the log semiring: want a finite c > 0 (a negative one makes the score non-monotone: %w)", c, ErrNotMonotone)
	}
	return graph.Shift(a, math.Log(c))
}
func (logAlg) BatchOuter(a, b *G.Node) (*G.Node, error) { return graph.LogBatchOuter(a, b) }
func (logAlg) MatMul(a, b *G.Node, ta, tb bool) (*G.Node, error) {
	return graph.LogMatMulExp(a, b, ta, tb)
}
func (logAlg) BatchVecMat(x, m *G.Node, n, k int, trans bool) (*G.Node, error) {
	return graph.LogBatchVecMat(x, m, n, k, trans)
}

// monotoneRestriction adapts a monotone score function (one written with
// products and sums only) to NonNegativeScore: its parameters are the
// log-values themselves.
type monotoneRestriction struct{ sf ScoreFunction }

func (m monotoneRestriction) LogFeatures(rows *G.Node) (*G.Node, error)       { return rows, nil }
func (m monotoneRestriction) LogCandidates(_ Var, f *G.Node) (*G.Node, error) { return f, nil }
func (m monotoneRestriction) Negative(Var, int) int                           { return 0 }
func (m monotoneRestriction) LogQuery(target Var, x Inputs, t Tables) (*G.Node, error) {
	q, err := m.sf.Query(Log, target, x, t)
	if err != nil {
		return nil, fmt.Errorf("%s+: %w", m.sf.Name(), err)
	}
	return q, nil
}

func nonNegative(sf ScoreFunction) NonNegativeScore {
	if nn, ok := sf.(NonNegativeScore); ok {
		return nn
	}
	return monotoneRestriction{sf}
}

// ProductUnitScore is implemented by score functions whose product units
// make the triple features ψ of the kernel triple distance (paper, §6.3):
// the values of the units under the circuit's sum, before summing. Values
// are unsigned; for a NonNegativeScore the trailing Negative(target,
// units) ones enter φ with weight −1, so that Σ ± units = φ
// (TestProductUnitsSumToScore).
type ProductUnitScore interface {
	// ProductUnits returns the number of product units.
	ProductUnits(sz Sizes) int
	// ProductUnitValues writes the unit values of φ(s, r, o) into out,
	// given the rows of the subject, relation and object tables.
	ProductUnitValues(sz Sizes, s, r, o, out []float64)
}

// ModulusScore is implemented by score functions whose rows pack the parts
// of one number side by side, such as ComplEx's [re | im]: the Lp
// regularisers (Circuit.LpPenalty) then penalise the numbers' moduli, as
// N3 does for ComplEx (Lacroix et al. 2018), rather than each part apart.
type ModulusScore interface {
	// ModulusParts is how many blocks of equal width a row of slot v's
	// table holds, the parts of one number each.
	ModulusParts(v Var) int
}
