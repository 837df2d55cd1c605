package graph

import (
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// builderInputs are the operands of builderCases: matrices, vectors and
// index vectors of shapes every op accepts.
type builderInputs struct {
	a, c, neg, t24, m22, gram, grams, vec, s *G.Node // float
	idx, cls                                 *G.Node // int vectors
}

var (
	builderClasses = []int32{0, 1, 0, 1}
	builderPairs   = map[[2]int32]int32{{0, 1}: 0, {1, 1}: 1}
)

// builderCases pairs each Builder method with the function it mirrors; op
// is the function that reports a nil first operand.
var builderCases = []struct {
	op     string
	method func(b *Builder, x builderInputs) *G.Node
	direct func(x builderInputs) (*G.Node, error)
}{
	{"Add", func(b *Builder, x builderInputs) *G.Node { return b.Add(x.a, x.c) },
		func(x builderInputs) (*G.Node, error) { return Add(x.a, x.c) }},
	{"Add", func(b *Builder, x builderInputs) *G.Node { return b.AddAll(x.a, x.c, x.a) },
		func(x builderInputs) (*G.Node, error) { return Add(must(Add(x.a, x.c)), x.a) }},
	{"Sub", func(b *Builder, x builderInputs) *G.Node { return b.Sub(x.a, x.c) },
		func(x builderInputs) (*G.Node, error) { return Sub(x.a, x.c) }},
	{"Mul", func(b *Builder, x builderInputs) *G.Node { return b.Mul(x.a, x.c) },
		func(x builderInputs) (*G.Node, error) { return Mul(x.a, x.c) }},
	{"Scale", func(b *Builder, x builderInputs) *G.Node { return b.Scale(x.a, 2.5) },
		func(x builderInputs) (*G.Node, error) { return Scale(x.a, 2.5) }},
	{"Scale", func(b *Builder, x builderInputs) *G.Node { return b.Neg(x.a) },
		func(x builderInputs) (*G.Node, error) { return Scale(x.a, -1) }},
	{"ScaleBy", func(b *Builder, x builderInputs) *G.Node { return b.ScaleBy(x.a, x.s) },
		func(x builderInputs) (*G.Node, error) { return ScaleBy(x.a, x.s) }},
	{"LogPos", func(b *Builder, x builderInputs) *G.Node { return b.LogPos(x.a, 0.5) },
		func(x builderInputs) (*G.Node, error) { return LogPos(x.a, 0.5) }},
	{"LogSquare", func(b *Builder, x builderInputs) *G.Node { return b.LogSquare(x.a, 0.1) },
		func(x builderInputs) (*G.Node, error) { return LogSquare(x.a, 0.1) }},
	{"Log1mExp", func(b *Builder, x builderInputs) *G.Node { return b.Log1mExp(x.neg) },
		func(x builderInputs) (*G.Node, error) { return Log1mExp(x.neg) }},
	{"Sum", func(b *Builder, x builderInputs) *G.Node { return b.Sum(x.a) },
		func(x builderInputs) (*G.Node, error) { return Sum(x.a) }},
	{"Dot", func(b *Builder, x builderInputs) *G.Node { return b.Dot(x.a, x.c) },
		func(x builderInputs) (*G.Node, error) { return Dot(x.a, x.c) }},
	{"RowDot", func(b *Builder, x builderInputs) *G.Node { return b.RowDot(x.a, x.c) },
		func(x builderInputs) (*G.Node, error) { return RowDot(x.a, x.c) }},
	{"RowModulusPowers", func(b *Builder, x builderInputs) *G.Node { return b.RowModulusPowers(x.a, 1, 3) },
		func(x builderInputs) (*G.Node, error) { return RowModulusPowers(x.a, 1, 3) }},
	{"RowLogSumExp", func(b *Builder, x builderInputs) *G.Node { return b.RowLogSumExp(x.a) },
		func(x builderInputs) (*G.Node, error) { return RowLogSumExp(x.a) }},
	{"SignedRowLogSumExp", func(b *Builder, x builderInputs) *G.Node { return b.SignedRowLogSumExp(x.neg, 1) },
		func(x builderInputs) (*G.Node, error) { return SignedRowLogSumExp(x.neg, 1) }},
	{"ColLogSumExp", func(b *Builder, x builderInputs) *G.Node { return b.ColLogSumExp(x.a) },
		func(x builderInputs) (*G.Node, error) { return ColLogSumExp(x.a) }},
	{"LogSoftmaxNLL", func(b *Builder, x builderInputs) *G.Node { return b.LogSoftmaxNLL(x.a, x.idx) },
		func(x builderInputs) (*G.Node, error) { return LogSoftmaxNLL(x.a, x.idx) }},
	{"Gather", func(b *Builder, x builderInputs) *G.Node { return b.Gather(x.a, x.idx) },
		func(x builderInputs) (*G.Node, error) { return Gather(x.a, x.idx) }},
	{"SliceCols", func(b *Builder, x builderInputs) *G.Node { return b.SliceCols(x.a, 1, 3) },
		func(x builderInputs) (*G.Node, error) { return SliceCols(x.a, 1, 3) }},
	{"SliceBlock", func(b *Builder, x builderInputs) *G.Node { return b.SliceBlock(x.a, 0, 2, 1, 4) },
		func(x builderInputs) (*G.Node, error) { return SliceBlock(x.a, 0, 2, 1, 4) }},
	{"ConcatCols", func(b *Builder, x builderInputs) *G.Node { return b.ConcatCols(x.a, x.c) },
		func(x builderInputs) (*G.Node, error) { return ConcatCols(x.a, x.c) }},
	{"Reshape", func(b *Builder, x builderInputs) *G.Node { return b.Reshape(x.a, 2, 8) },
		func(x builderInputs) (*G.Node, error) { return Reshape(x.a, 2, 8) }},
	{"MatMul", func(b *Builder, x builderInputs) *G.Node { return b.MatMul(x.a, x.c, true, false) },
		func(x builderInputs) (*G.Node, error) { return MatMul(x.a, x.c, true, false) }},
	{"SignedLogMatMulExp", func(b *Builder, x builderInputs) *G.Node { return b.SignedLogMatMulExp(x.neg, x.neg, false, true, 1) },
		func(x builderInputs) (*G.Node, error) { return SignedLogMatMulExp(x.neg, x.neg, false, true, 1) }},
	{"LogMatMulExp", func(b *Builder, x builderInputs) *G.Node { return b.LogMatMulExp(x.a, x.c, false, true) },
		func(x builderInputs) (*G.Node, error) { return LogMatMulExp(x.a, x.c, false, true) }},
	{"Gram", func(b *Builder, x builderInputs) *G.Node { return b.Gram(x.a) },
		func(x builderInputs) (*G.Node, error) { return Gram(x.a) }},
	{"QuadForm", func(b *Builder, x builderInputs) *G.Node { return b.QuadForm(x.a, x.gram) },
		func(x builderInputs) (*G.Node, error) { return QuadForm(x.a, x.gram) }},
	{"ModeProduct", func(b *Builder, x builderInputs) *G.Node {
		return b.ModeProduct(x.t24, x.m22, 2, [3]int{2, 2, 2}, true)
	}, func(x builderInputs) (*G.Node, error) { return ModeProduct(x.t24, x.m22, 2, [3]int{2, 2, 2}, true) }},
	{"TypedQuadForm", func(b *Builder, x builderInputs) *G.Node { return b.TypedQuadForm(x.a, x.grams, x.cls) },
		func(x builderInputs) (*G.Node, error) { return TypedQuadForm(x.a, x.grams, x.cls) }},
	{"TypedColLogSumExp", func(b *Builder, x builderInputs) *G.Node { return b.TypedColLogSumExp(x.a, builderClasses, 2) },
		func(x builderInputs) (*G.Node, error) { return TypedColLogSumExp(x.a, builderClasses, 2) }},
	{"MapIndex", func(b *Builder, x builderInputs) *G.Node { return b.MapIndex(x.idx, builderClasses) },
		func(x builderInputs) (*G.Node, error) { return MapIndex(x.idx, builderClasses) }},
	{"PairIndex", func(b *Builder, x builderInputs) *G.Node {
		return b.PairIndex(x.idx, x.cls, builderClasses, builderClasses, builderPairs)
	}, func(x builderInputs) (*G.Node, error) {
		return PairIndex(x.idx, x.cls, builderClasses, builderClasses, builderPairs)
	}},
	{"MaskEqual", func(b *Builder, x builderInputs) *G.Node { return b.MaskEqual(x.vec, x.idx, x.cls) },
		func(x builderInputs) (*G.Node, error) { return MaskEqual(x.vec, x.idx, x.cls) }},
	{"MaskClasses", func(b *Builder, x builderInputs) *G.Node { return b.MaskClasses(x.a, x.cls, builderClasses) },
		func(x builderInputs) (*G.Node, error) { return MaskClasses(x.a, x.cls, builderClasses) }},
	{"LookupFloats", func(b *Builder, x builderInputs) *G.Node {
		return b.LookupFloats(x.idx, []float64{0.5, -1, 2, 3}, tensor.Float64)
	}, func(x builderInputs) (*G.Node, error) {
		return LookupFloats(x.idx, []float64{0.5, -1, 2, 3}, tensor.Float64)
	}},
}

func newBuilderInputs(g *G.ExprGraph) builderInputs {
	rng := rand.New(rand.NewPCG(3, 4))
	mat := func(name string, pos bool, shape ...int) *G.Node {
		return G.NewTensor(g, tensor.Float64, len(shape), G.WithShape(shape...), G.WithName(name),
			G.WithValue(randDense(rng, pos, shape...)))
	}
	x := builderInputs{
		a: mat("a", false, 4, 4), c: mat("c", false, 4, 4), neg: mat("neg", true, 4, 4),
		t24: mat("t24", false, 2, 4), m22: mat("m22", false, 2, 2), vec: mat("vec", false, 4),
		idx: intVec(g, "idx", 0, 2, 1, 3), cls: intVec(g, "cls", 1, 1, 0, 1),
	}
	x.neg = must(Scale(x.neg, -1))
	x.gram = must(Gram(x.c))
	x.grams = must(TypedGram(x.c, builderClasses, 2))
	x.s = must(Sum(x.c))
	return x
}

// Every method gives the value of the function it mirrors, bit for bit.
func TestBuilderMatchesFunctions(t *testing.T) {
	g := G.NewGraph()
	x := newBuilderInputs(g)
	var b Builder
	var outs G.Nodes
	for _, tc := range builderCases {
		got := tc.method(&b, x)
		want, err := tc.direct(x)
		if err != nil || b.Err() != nil {
			t.Fatalf("%s: %v / %v", tc.op, err, b.Err())
		}
		outs = append(outs, got, want)
	}
	runScalar(t, outs...)
	for i, tc := range builderCases {
		got, want := outs[2*i].Value().Data(), outs[2*i+1].Value().Data()
		if !sameBits(got, want) {
			t.Errorf("case %d (%s): builder %v, function %v", i, tc.op, got, want)
		}
	}
}

// sameBits reports whether got and want are equal bit for bit, so a NaN
// (SignedLogMatMulExp gives some on these inputs) equals the same NaN.
func sameBits(got, want any) bool {
	g, ok1 := got.([]float64)
	w, ok2 := want.([]float64)
	if !ok1 || !ok2 {
		return reflect.DeepEqual(got, want)
	}
	if len(g) != len(w) {
		return false
	}
	for i := range g {
		if math.Float64bits(g[i]) != math.Float64bits(w[i]) {
			return false
		}
	}
	return true
}

// A nil operand with no earlier error is an error naming the op, not a
// panic; after any error every method returns nil without calling its op
// (which would panic on the nil operands) and the first error stays.
func TestBuilderShortCircuits(t *testing.T) {
	var none builderInputs
	first := errors.New("first")
	for i, tc := range builderCases {
		var b Builder
		if n := tc.method(&b, none); n != nil || b.Err() == nil ||
			!strings.HasPrefix(b.Err().Error(), "graph."+tc.op+": operand 1 is nil") {
			t.Errorf("case %d (%s) on nil operands: %v, %v", i, tc.op, n, b.Err())
		}
		var failed Builder
		failed.Use(nil, first)
		if n := tc.method(&failed, none); n != nil || failed.Err() != first {
			t.Errorf("case %d (%s) after an error: %v, %v", i, tc.op, n, failed.Err())
		}
	}
}

func TestBuilderKeepsFirstError(t *testing.T) {
	g := G.NewGraph()
	x := newBuilderInputs(g)
	var b Builder
	bad := b.MatMul(x.a, x.t24, false, false) // 4×4 · 2×4
	if bad != nil || b.Err() == nil || !strings.HasPrefix(b.Err().Error(), "graph.MatMul") {
		t.Fatalf("MatMul of 4×4 and 2×4: %v, %v", bad, b.Err())
	}
	first := b.Err()
	// An op whose message already names it is not prefixed twice.
	var own Builder
	_, direct := SliceCols(x.a, 3, 9)
	if own.SliceCols(x.a, 3, 9); own.Err() == nil || own.Err().Error() != direct.Error() {
		t.Errorf("SliceCols out of range: builder %v, function %v", own.Err(), direct)
	}
	if n := b.SliceCols(x.a, 3, 9); n != nil || b.Err() != first {
		t.Errorf("a second failing op replaced the first error: %v", b.Err())
	}
	if n := b.Use(x.a, errors.New("later")); n != nil || b.Err() != first {
		t.Errorf("Use after an error: %v, %v", n, b.Err())
	}
	called := false
	if n := b.Do(func() (*G.Node, error) { called = true; return x.a, nil }); n != nil || called {
		t.Errorf("Do after an error ran its function (result %v)", n)
	}
	if n, err := b.Result(x.a); n != nil || err != first {
		t.Errorf("Result after an error: %v, %v", n, err)
	}
}

func TestBuilderUseAndDo(t *testing.T) {
	g := G.NewGraph()
	x := newBuilderInputs(g)
	sentinel := errors.New("sentinel")
	var b Builder
	if n := b.Use(x.a, nil); n != x.a {
		t.Fatalf("Use(n, nil) = %v, want n", n)
	}
	if n := b.Do(func() (*G.Node, error) { return x.c, nil }); n != x.c || b.Err() != nil {
		t.Fatalf("Do of a successful step: %v, %v", n, b.Err())
	}
	if n, err := b.Result(x.c); n != x.c || err != nil {
		t.Fatalf("Result without an error: %v, %v", n, err)
	}
	if n := b.Do(func() (*G.Node, error) { return x.a, sentinel }); n != nil || !errors.Is(b.Err(), sentinel) {
		t.Errorf("Do of a failing step: %v, %v", n, b.Err())
	}
	var empty Builder
	if n := empty.AddAll(); n != nil || empty.Err() == nil {
		t.Errorf("AddAll of nothing: %v, %v", n, empty.Err())
	}
	var one Builder
	if n := one.AddAll(x.a); n != x.a || one.Err() != nil {
		t.Errorf("AddAll of one node: %v, %v", n, one.Err())
	}
}

// linearAlg is the linear semiring, for testing Builder.In in this package.
type linearAlg struct{}

func (linearAlg) Mul(x, y *G.Node) (*G.Node, error)           { return Mul(x, y) }
func (linearAlg) Add(x, y *G.Node) (*G.Node, error)           { return Add(x, y) }
func (linearAlg) Sub(x, y *G.Node) (*G.Node, error)           { return Sub(x, y) }
func (linearAlg) Scale(x *G.Node, c float64) (*G.Node, error) { return Shift(must(Scale(x, c)), 0) }

// Halves and Quadrants cut as documented and refuse shapes they cannot cut;
// In chains an algebra's operations and keeps the first error; Shift adds
// its constant.
func TestBuilderHalvesQuadrantsIn(t *testing.T) {
	g := G.NewGraph()
	x := G.NewMatrix(g, tensor.Float64, G.WithShape(4, 4), G.WithName("x"),
		G.WithValue(tensor.New(tensor.WithShape(4, 4), tensor.WithBacking([]float64{
			1, 2, 3, 4,
			5, 6, 7, 8,
			9, 10, 11, 12,
			13, 14, 15, 16}))))
	var e Builder
	left, right := e.Halves(x)
	tl, tr, bl, br := e.Quadrants(x)
	in := e.In(linearAlg{})
	combo := in.Sub(in.Add(in.Mul(left, right), in.Scale(left, 2)), right) // l·r + 2l − r
	shifted := e.Use(Shift(tl, 0.5))
	nodes := []*G.Node{left, right, tl, tr, bl, br, combo, shifted}
	if e.Err() != nil {
		t.Fatal(e.Err())
	}
	prog, err := Compile(nodes...)
	if err != nil {
		t.Fatal(err)
	}
	if err := prog.Run(); err != nil {
		t.Fatal(err)
	}
	want := [][]float64{
		{1, 2, 5, 6, 9, 10, 13, 14}, {3, 4, 7, 8, 11, 12, 15, 16},
		{1, 2, 5, 6}, {3, 4, 7, 8}, {9, 10, 13, 14}, {11, 12, 15, 16},
		{1*3 + 2 - 3, 2*4 + 4 - 4, 5*7 + 10 - 7, 6*8 + 12 - 8, 9*11 + 18 - 11, 10*12 + 20 - 12, 13*15 + 26 - 15, 14*16 + 28 - 16},
		{1.5, 2.5, 5.5, 6.5},
	}
	for i, n := range nodes {
		if got := n.Value().Data().([]float64); !reflect.DeepEqual(got, want[i]) {
			t.Errorf("node %d = %v, want %v", i, got, want[i])
		}
	}
	odd := G.NewMatrix(g, tensor.Float64, G.WithShape(2, 3), G.WithName("odd"))
	for name, f := range map[string]func(b *Builder){
		"graph.Halves":    func(b *Builder) { b.Halves(odd) },
		"graph.Quadrants": func(b *Builder) { b.Quadrants(odd) },
	} {
		var b Builder
		f(&b)
		if b.Err() == nil || !strings.Contains(b.Err().Error(), name) {
			t.Errorf("%s of a 2×3 matrix: %v", name, b.Err())
		}
	}
	var b Builder
	bin := b.In(linearAlg{})
	if bin.Mul(bin.Mul(x, odd), x) != nil || b.Err() == nil || !strings.Contains(b.Err().Error(), "Mul") {
		t.Errorf("a failing In step: %v", b.Err())
	}
}

// Quadrants refuses a square matrix of odd size (it has no four equal
// blocks; cutting at ⌊n/2⌋ would silently drop its last row and column),
// and Halves a matrix of an odd number of columns, whatever its rows.
func TestBuilderCutsRefuseOddSizes(t *testing.T) {
	g := G.NewGraph()
	for _, c := range []struct {
		name  string
		shape []int
		cut   func(*Builder, *G.Node)
	}{
		{"graph.Quadrants", []int{3, 3}, func(b *Builder, x *G.Node) { b.Quadrants(x) }},
		{"graph.Quadrants", []int{2, 4}, func(b *Builder, x *G.Node) { b.Quadrants(x) }},
		{"graph.Halves", []int{4, 3}, func(b *Builder, x *G.Node) { b.Halves(x) }},
	} {
		x := G.NewMatrix(g, tensor.Float64, G.WithShape(c.shape...))
		var b Builder
		c.cut(&b, x)
		if b.Err() == nil || !strings.Contains(b.Err().Error(), c.name) {
			t.Errorf("%s of a %v matrix: %v, want an error", c.name, c.shape, b.Err())
		}
	}
}

// Shift adds its constant to a scalar too (a scalar takes another path
// through the op than a tensor), in both dtypes.
func TestShiftScalar(t *testing.T) {
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		g := G.NewGraph()
		var v any = 1.5
		if dt == tensor.Float32 {
			v = float32(1.5)
		}
		x := G.NewScalar(g, dt, G.WithName("x"), G.WithValue(v))
		y := must(Shift(x, 0.25))
		prog, err := Compile(y)
		if err != nil {
			t.Fatal(err)
		}
		if err := prog.Run(); err != nil {
			t.Fatal(err)
		}
		if got := scalarOf(y.Value()); got != 1.75 {
			t.Errorf("%v: Shift(1.5, 0.25) = %v, want 1.75", dt, got)
		}
	}
}

// Parts and Blocks cut a 6×6 matrix into 3 parts: part p is columns
// [2p, 2p+2), block [p][q] rows [2p, 2p+2) and columns [2q, 2q+2); Halves
// and Quadrants agree with them at 2; sizes that do not cut are refused.
func TestBuilderPartsAndBlocks(t *testing.T) {
	g := G.NewGraph()
	vals := make([]float64, 36)
	for i := range vals {
		vals[i] = float64(i)
	}
	x := G.NewMatrix(g, tensor.Float64, G.WithShape(6, 6), G.WithName("x"), G.WithValue(tensor.New(tensor.WithShape(6, 6), tensor.WithBacking(vals))))
	var e Builder
	parts := e.Parts(x, 3)
	blocks := e.Blocks(x, 3)
	if e.Err() != nil {
		t.Fatal(e.Err())
	}
	nodes := append([]*G.Node(nil), parts...)
	for _, row := range blocks {
		nodes = append(nodes, row...)
	}
	prog, err := Compile(nodes...)
	if err != nil {
		t.Fatal(err)
	}
	if err := prog.Run(); err != nil {
		t.Fatal(err)
	}
	for p, n := range parts {
		var want []float64
		for i := range 6 {
			want = append(want, vals[i*6+2*p], vals[i*6+2*p+1])
		}
		if got := n.Value().Data().([]float64); !reflect.DeepEqual(got, want) {
			t.Errorf("part %d = %v, want %v", p, got, want)
		}
	}
	for p := range 3 {
		for q := range 3 {
			want := []float64{vals[(2*p)*6+2*q], vals[(2*p)*6+2*q+1], vals[(2*p+1)*6+2*q], vals[(2*p+1)*6+2*q+1]}
			if got := blocks[p][q].Value().Data().([]float64); !reflect.DeepEqual(got, want) {
				t.Errorf("block [%d][%d] = %v, want %v", p, q, got, want)
			}
		}
	}
	for _, n := range []int{4, 0} {
		var b Builder
		if b.Parts(x, n) != nil || b.Err() == nil || !strings.Contains(b.Err().Error(), "graph.Parts") {
			t.Errorf("Parts(6 columns, %d): %v", n, b.Err())
		}
		var c Builder
		if c.Blocks(x, n) != nil || c.Err() == nil || !strings.Contains(c.Err().Error(), "graph.Blocks") {
			t.Errorf("Blocks(6×6, %d): %v", n, c.Err())
		}
	}
}
