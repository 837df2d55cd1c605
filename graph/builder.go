package graph

import (
	"fmt"
	"strings"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// A Builder chains the ops of this package and keeps the first error, so
// that an expression reads as the formula it computes:
//
//	var e graph.Builder
//	z := e.Dot(e.Mul(gu, gw), gv)
//	return e.Result(z)
//
// Each method mirrors the function of the same name but returns only the
// node. Once an op has failed, every later call returns nil without calling
// its op, so the nil results of failed steps are never looked at; Err
// reports the error of the failed op, prefixed by its name ("graph.MatMul:
// ...") where the op's own message does not start with it. A nil operand
// with no earlier error is reported as an error, not a panic.
//
// Steps that already return (*G.Node, error) join the chain through Use
// (for calls whose arguments are certainly valid, such as cached lookups)
// or Do (for calls that take nodes of the chain, which must not run after
// a failure).
//
// The zero value is ready to use. A Builder is not safe for concurrent use.
type Builder struct{ err error }

// Err returns the first error of the chain, or nil.
func (b *Builder) Err() error { return b.err }

// Result returns (n, nil), or (nil, Err()) if any step has failed.
func (b *Builder) Result(n *G.Node) (*G.Node, error) {
	if b.err != nil {
		return nil, b.err
	}
	return n, nil
}

// Use folds the result of a call made outside the builder into the chain:
// it records err if it is the first error and returns n (nil on any error).
// Its arguments are evaluated before Use runs, even after a failure, so
// call it only for steps that take no node of the chain; use Do for those.
func (b *Builder) Use(n *G.Node, err error) *G.Node {
	if b.err != nil {
		return nil
	}
	if err != nil {
		b.err = err
		return nil
	}
	return n
}

// Do runs f unless an earlier step has failed, and folds its result into
// the chain as Use does.
func (b *Builder) Do(f func() (*G.Node, error)) *G.Node {
	if b.err != nil {
		return nil
	}
	n, err := f()
	return b.named("f", n, err)
}

// named is Use for the result of op, with the error prefixed by the op's
// name unless it already starts with it.
func (b *Builder) named(op string, n *G.Node, err error) *G.Node {
	if err != nil && !strings.HasPrefix(err.Error(), "graph."+op) {
		err = fmt.Errorf("graph.%s: %w", op, err)
	}
	return b.Use(n, err)
}

// ready reports whether op may run: no earlier error and no nil operand.
func (b *Builder) ready(op string, xs ...*G.Node) bool {
	if b.err != nil {
		return false
	}
	for i, x := range xs {
		if x == nil {
			b.err = fmt.Errorf("graph.%s: operand %d is nil", op, i+1)
			return false
		}
	}
	return true
}

// Add is x + y (see Add).
func (b *Builder) Add(x, y *G.Node) *G.Node {
	if !b.ready("Add", x, y) {
		return nil
	}
	n, err := Add(x, y)
	return b.named("Add", n, err)
}

// AddAll is x₁ + x₂ + … + xₙ, summed left to right.
func (b *Builder) AddAll(xs ...*G.Node) *G.Node {
	if len(xs) == 0 {
		if b.err == nil {
			b.err = fmt.Errorf("graph.AddAll: nothing to add")
		}
		return nil
	}
	acc := xs[0]
	for _, x := range xs[1:] {
		acc = b.Add(acc, x)
	}
	if !b.ready("AddAll", acc) {
		return nil
	}
	return acc
}

// Sub is x − y (see Sub).
func (b *Builder) Sub(x, y *G.Node) *G.Node {
	if !b.ready("Sub", x, y) {
		return nil
	}
	n, err := Sub(x, y)
	return b.named("Sub", n, err)
}

// Mul is the elementwise product x ∘ y (see Mul).
func (b *Builder) Mul(x, y *G.Node) *G.Node {
	if !b.ready("Mul", x, y) {
		return nil
	}
	n, err := Mul(x, y)
	return b.named("Mul", n, err)
}

// Scale is c·x (see Scale).
func (b *Builder) Scale(x *G.Node, c float64) *G.Node {
	if !b.ready("Scale", x) {
		return nil
	}
	n, err := Scale(x, c)
	return b.named("Scale", n, err)
}

// Neg is −x, Scale(x, −1).
func (b *Builder) Neg(x *G.Node) *G.Node { return b.Scale(x, -1) }

// ScaleBy is s·x for a scalar node s (see ScaleBy).
func (b *Builder) ScaleBy(x, s *G.Node) *G.Node {
	if !b.ready("ScaleBy", x, s) {
		return nil
	}
	n, err := ScaleBy(x, s)
	return b.named("ScaleBy", n, err)
}

// LogPos is log(max(x, 0) + c) (see LogPos).
func (b *Builder) LogPos(x *G.Node, c float64) *G.Node {
	if !b.ready("LogPos", x) {
		return nil
	}
	n, err := LogPos(x, c)
	return b.named("LogPos", n, err)
}

// LogSquare is log(x² + c) (see LogSquare).
func (b *Builder) LogSquare(x *G.Node, c float64) *G.Node {
	if !b.ready("LogSquare", x) {
		return nil
	}
	n, err := LogSquare(x, c)
	return b.named("LogSquare", n, err)
}

// Log1mExp is log(1 − exp x) (see Log1mExp).
func (b *Builder) Log1mExp(x *G.Node) *G.Node {
	if !b.ready("Log1mExp", x) {
		return nil
	}
	n, err := Log1mExp(x)
	return b.named("Log1mExp", n, err)
}

// Sum is the sum of all entries, a scalar (see Sum).
func (b *Builder) Sum(x *G.Node) *G.Node {
	if !b.ready("Sum", x) {
		return nil
	}
	n, err := Sum(x)
	return b.named("Sum", n, err)
}

// Dot is Σ_ij x_ij·y_ij, a scalar (see Dot).
func (b *Builder) Dot(x, y *G.Node) *G.Node {
	if !b.ready("Dot", x, y) {
		return nil
	}
	n, err := Dot(x, y)
	return b.named("Dot", n, err)
}

// RowDot is the vector of row inner products (see RowDot).
func (b *Builder) RowDot(x, y *G.Node) *G.Node {
	if !b.ready("RowDot", x, y) {
		return nil
	}
	n, err := RowDot(x, y)
	return b.named("RowDot", n, err)
}

// RowModulusPowers is Σ_j m_j^p of each row's moduli across parts blocks
// (see RowModulusPowers).
func (b *Builder) RowModulusPowers(x *G.Node, parts int, p float64) *G.Node {
	if !b.ready("RowModulusPowers", x) {
		return nil
	}
	n, err := RowModulusPowers(x, parts, p)
	return b.named("RowModulusPowers", n, err)
}

// RowLogSumExp is the log-sum-exp of each row (see RowLogSumExp).
func (b *Builder) RowLogSumExp(x *G.Node) *G.Node {
	if !b.ready("RowLogSumExp", x) {
		return nil
	}
	n, err := RowLogSumExp(x)
	return b.named("RowLogSumExp", n, err)
}

// CombinedRowLogSumExp is the log-sum-exp of whole rows of which x holds
// some columns (see CombinedRowLogSumExp).
func (b *Builder) CombinedRowLogSumExp(x *G.Node, combine func(lse []float64) error) *G.Node {
	if !b.ready("CombinedRowLogSumExp", x) {
		return nil
	}
	n, err := CombinedRowLogSumExp(x, combine)
	return b.named("CombinedRowLogSumExp", n, err)
}

// SignedRowLogSumExp is the log-sum-exp of each row with weight −1 on its
// trailing neg columns (see SignedRowLogSumExp).
func (b *Builder) SignedRowLogSumExp(x *G.Node, neg int) *G.Node {
	if !b.ready("SignedRowLogSumExp", x) {
		return nil
	}
	n, err := SignedRowLogSumExp(x, neg)
	return b.named("SignedRowLogSumExp", n, err)
}

// ColLogSumExp is the log-sum-exp of each column (see ColLogSumExp).
func (b *Builder) ColLogSumExp(x *G.Node) *G.Node {
	if !b.ready("ColLogSumExp", x) {
		return nil
	}
	n, err := ColLogSumExp(x)
	return b.named("ColLogSumExp", n, err)
}

// LogSoftmaxNLL is −log softmax(x_i)[targets_i] per row (see LogSoftmaxNLL).
func (b *Builder) LogSoftmaxNLL(x, targets *G.Node) *G.Node {
	if !b.ready("LogSoftmaxNLL", x, targets) {
		return nil
	}
	n, err := LogSoftmaxNLL(x, targets)
	return b.named("LogSoftmaxNLL", n, err)
}

// Gather is the rows table[idx[i]] (see Gather).
func (b *Builder) Gather(table, idx *G.Node) *G.Node {
	if !b.ready("Gather", table, idx) {
		return nil
	}
	n, err := Gather(table, idx)
	return b.named("Gather", n, err)
}

// SliceCols is columns [from,to) of x (see SliceCols).
func (b *Builder) SliceCols(x *G.Node, from, to int) *G.Node {
	if !b.ready("SliceCols", x) {
		return nil
	}
	n, err := SliceCols(x, from, to)
	return b.named("SliceCols", n, err)
}

// SliceBlock is rows [r0,r1) and columns [c0,c1) of x (see SliceBlock).
func (b *Builder) SliceBlock(x *G.Node, r0, r1, c0, c1 int) *G.Node {
	if !b.ready("SliceBlock", x) {
		return nil
	}
	n, err := SliceBlock(x, r0, r1, c0, c1)
	return b.named("SliceBlock", n, err)
}

// ConcatCols joins matrices side by side (see ConcatCols).
func (b *Builder) ConcatCols(xs ...*G.Node) *G.Node {
	if !b.ready("ConcatCols", xs...) {
		return nil
	}
	n, err := ConcatCols(xs...)
	return b.named("ConcatCols", n, err)
}

// Reshape gives x a new shape (see Reshape).
func (b *Builder) Reshape(x *G.Node, shape ...int) *G.Node {
	if !b.ready("Reshape", x) {
		return nil
	}
	n, err := Reshape(x, shape...)
	return b.named("Reshape", n, err)
}

// MatMul is op(x)·op(y) (see MatMul).
func (b *Builder) MatMul(x, y *G.Node, transA, transB bool) *G.Node {
	if !b.ready("MatMul", x, y) {
		return nil
	}
	n, err := MatMul(x, y, transA, transB)
	return b.named("MatMul", n, err)
}

// SignedLogMatMulExp is LogMatMulExp with weight −1 on the trailing neg
// inner indices (see SignedLogMatMulExp).
func (b *Builder) SignedLogMatMulExp(x, y *G.Node, transA, transB bool, neg int) *G.Node {
	if !b.ready("SignedLogMatMulExp", x, y) {
		return nil
	}
	n, err := SignedLogMatMulExp(x, y, transA, transB, neg)
	return b.named("SignedLogMatMulExp", n, err)
}

// FoldedLogMatMulExp scores log-queries q against the candidates whose
// columns are the given blocks of f (see FoldedLogMatMulExp).
func (b *Builder) FoldedLogMatMulExp(q, f *G.Node, blocks []int, neg int) *G.Node {
	if !b.ready("FoldedLogMatMulExp", q, f) {
		return nil
	}
	n, err := FoldedLogMatMulExp(q, f, blocks, neg)
	return b.named("FoldedLogMatMulExp", n, err)
}

// LogMatMulExp is log(exp(op(x))·exp(op(y))) (see LogMatMulExp).
func (b *Builder) LogMatMulExp(x, y *G.Node, transA, transB bool) *G.Node {
	if !b.ready("LogMatMulExp", x, y) {
		return nil
	}
	n, err := LogMatMulExp(x, y, transA, transB)
	return b.named("LogMatMulExp", n, err)
}

// Gram is xᵀx (see Gram).
func (b *Builder) Gram(x *G.Node) *G.Node {
	if !b.ready("Gram", x) {
		return nil
	}
	n, err := Gram(x)
	return b.named("Gram", n, err)
}

// QuadForm is qᵢᵀ g qᵢ for each row qᵢ of q (see QuadForm).
func (b *Builder) QuadForm(q, g *G.Node) *G.Node {
	if !b.ready("QuadForm", q, g) {
		return nil
	}
	n, err := QuadForm(q, g)
	return b.named("QuadForm", n, err)
}

// ModeProduct is t ×_mode op(m) (see ModeProduct).
func (b *Builder) ModeProduct(t, m *G.Node, mode int, d [3]int, transM bool) *G.Node {
	if !b.ready("ModeProduct", t, m) {
		return nil
	}
	n, err := ModeProduct(t, m, mode, d, transM)
	return b.named("ModeProduct", n, err)
}

// TypedQuadForm is qᵢᵀ G_{class i} qᵢ for each row (see TypedQuadForm).
func (b *Builder) TypedQuadForm(q, grams, class *G.Node) *G.Node {
	if !b.ready("TypedQuadForm", q, grams, class) {
		return nil
	}
	n, err := TypedQuadForm(q, grams, class)
	return b.named("TypedQuadForm", n, err)
}

// TypedColLogSumExp is the column log-sum-exp over the rows of each class
// (see TypedColLogSumExp).
func (b *Builder) TypedColLogSumExp(x *G.Node, classOf []int32, classes int) *G.Node {
	if !b.ready("TypedColLogSumExp", x) {
		return nil
	}
	n, err := TypedColLogSumExp(x, classOf, classes)
	return b.named("TypedColLogSumExp", n, err)
}

// MapIndex is table[idx[i]] for each i (see MapIndex).
func (b *Builder) MapIndex(idx *G.Node, table []int32) *G.Node {
	if !b.ready("MapIndex", idx) {
		return nil
	}
	n, err := MapIndex(idx, table)
	return b.named("MapIndex", n, err)
}

// PairIndex is table[(left[x_i], right[y_i])], −1 when absent (see PairIndex).
func (b *Builder) PairIndex(x, y *G.Node, left, right []int32, table map[[2]int32]int32) *G.Node {
	if !b.ready("PairIndex", x, y) {
		return nil
	}
	n, err := PairIndex(x, y, left, right, table)
	return b.named("PairIndex", n, err)
}

// MaskEqual is x_i where p_i = q_i, −Inf elsewhere (see MaskEqual).
func (b *Builder) MaskEqual(x, p, q *G.Node) *G.Node {
	if !b.ready("MaskEqual", x, p, q) {
		return nil
	}
	n, err := MaskEqual(x, p, q)
	return b.named("MaskEqual", n, err)
}

// MaskClasses is x with −Inf wherever colClass[j] ≠ rowClass[i] (see
// MaskClasses).
func (b *Builder) MaskClasses(x, rowClass *G.Node, colClass []int32) *G.Node {
	if !b.ready("MaskClasses", x, rowClass) {
		return nil
	}
	n, err := MaskClasses(x, rowClass, colClass)
	return b.named("MaskClasses", n, err)
}

// LookupFloats is table[idx[i]] for each i, of dtype dt (see LookupFloats).
func (b *Builder) LookupFloats(idx *G.Node, table []float64, dt tensor.Dtype) *G.Node {
	if !b.ready("LookupFloats", idx) {
		return nil
	}
	n, err := LookupFloats(idx, table, dt)
	return b.named("LookupFloats", n, err)
}

// Halves splits the columns of x into its first and second half, e.g. the
// [re | im] rows of complex embeddings or SimplE's [head | tail] rows; x
// must have an even number of columns.
func (b *Builder) Halves(x *G.Node) (first, second *G.Node) {
	if !b.ready("Halves", x) {
		return nil, nil
	}
	if x.Dims() != 2 || x.Shape()[1]%2 != 0 {
		b.err = fmt.Errorf("graph.Halves: shape %v: want a matrix with an even number of columns", x.Shape())
		return nil, nil
	}
	d := x.Shape()[1] / 2
	return b.SliceCols(x, 0, d), b.SliceCols(x, d, 2*d)
}

// Parts splits the columns of x into n parts of equal width, e.g. a
// quaternion row's four parts; Halves is Parts(x, 2).
func (b *Builder) Parts(x *G.Node, n int) []*G.Node {
	if !b.ready("Parts", x) {
		return nil
	}
	if x.Dims() != 2 || n < 1 || x.Shape()[1]%n != 0 {
		b.err = fmt.Errorf("graph.Parts: shape %v: want a matrix whose columns cut into %d parts", x.Shape(), n)
		return nil
	}
	k := x.Shape()[1] / n
	out := make([]*G.Node, n)
	for p := range out {
		out[p] = b.SliceCols(x, p*k, (p+1)*k)
	}
	return out
}

// Blocks splits a square matrix whose size cuts into n parts, such as the
// Gram matrix of rows of n parts, into its n × n blocks: block [p][q] of a
// Gram matrix is part p's transposed times part q. Quadrants is Blocks(g, 2).
func (b *Builder) Blocks(g *G.Node, n int) [][]*G.Node {
	if !b.ready("Blocks", g) {
		return nil
	}
	if s := g.Shape(); g.Dims() != 2 || s[0] != s[1] || n < 1 || s[0]%n != 0 {
		b.err = fmt.Errorf("graph.Blocks: shape %v: want a square matrix whose size cuts into %d parts", s, n)
		return nil
	}
	k := g.Shape()[0] / n
	out := make([][]*G.Node, n)
	for p := range out {
		out[p] = make([]*G.Node, n)
		for q := range out[p] {
			out[p][q] = b.SliceBlock(g, p*k, (p+1)*k, q*k, (q+1)*k)
		}
	}
	return out
}

// Quadrants splits a square matrix of even size, such as the Gram matrix
// of rows [a | b], into its four blocks: aᵀa, aᵀb, bᵀa and bᵀb for a Gram
// matrix.
func (b *Builder) Quadrants(g *G.Node) (tl, tr, bl, br *G.Node) {
	if !b.ready("Quadrants", g) {
		return nil, nil, nil, nil
	}
	if s := g.Shape(); g.Dims() != 2 || s[0] != s[1] || s[0]%2 != 0 {
		b.err = fmt.Errorf("graph.Quadrants: shape %v: want a square matrix of even size", s)
		return nil, nil, nil, nil
	}
	d := g.Shape()[0] / 2
	return b.SliceBlock(g, 0, d, 0, d), b.SliceBlock(g, 0, d, d, 2*d), b.SliceBlock(g, d, 2*d, 0, d), b.SliceBlock(g, d, 2*d, d, 2*d)
}

// An Algebra is a semiring's elementwise operations on nodes, such as the
// linear and log semirings of gekc/models: Mul and Add are ⊗ and ⊕, Sub
// its subtraction where there is one, Scale the product with a positive
// constant.
type Algebra interface {
	Mul(x, y *G.Node) (*G.Node, error)
	Add(x, y *G.Node) (*G.Node, error)
	Sub(x, y *G.Node) (*G.Node, error)
	Scale(x *G.Node, c float64) (*G.Node, error)
}

// In chains alg's operations into b, so that an expression in any
// semiring reads as its formula with one error check:
//
//	in := e.In(alg)
//	q := in.Scale(in.Mul(s, r), 0.5)
//	return e.Result(q)
func (b *Builder) In(alg Algebra) InAlgebra { return InAlgebra{b: b, alg: alg} }

// InAlgebra is a Builder computing in an Algebra (see Builder.In).
type InAlgebra struct {
	b   *Builder
	alg Algebra
}

// Mul is x ⊗ y.
func (a InAlgebra) Mul(x, y *G.Node) *G.Node {
	if !a.b.ready("Mul", x, y) {
		return nil
	}
	return a.b.Use(a.alg.Mul(x, y))
}

// Add is x ⊕ y.
func (a InAlgebra) Add(x, y *G.Node) *G.Node {
	if !a.b.ready("Add", x, y) {
		return nil
	}
	return a.b.Use(a.alg.Add(x, y))
}

// Sub is x − y, where the algebra has a subtraction.
func (a InAlgebra) Sub(x, y *G.Node) *G.Node {
	if !a.b.ready("Sub", x, y) {
		return nil
	}
	return a.b.Use(a.alg.Sub(x, y))
}

// Scale is c ⊗ x for a constant c.
func (a InAlgebra) Scale(x *G.Node, c float64) *G.Node {
	if !a.b.ready("Scale", x) {
		return nil
	}
	return a.b.Use(a.alg.Scale(x, c))
}
