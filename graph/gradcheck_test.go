package graph

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// gradCase builds a scalar cost from parameter nodes (and may add integer
// inputs of its own).
type gradCase struct {
	name   string
	shapes [][]int                                          // parameter shapes
	build  func(g *G.ExprGraph, p G.Nodes) (*G.Node, error) // returns the scalar cost
	pos    bool                                             // draw positive parameters
	values [][]float64                                      // if set, the parameters' values instead of draws
}

func randDense(rng *rand.Rand, pos bool, shape ...int) *tensor.Dense {
	n := 1
	for _, s := range shape {
		n *= s
	}
	x := make([]float64, n)
	for i := range x {
		x[i] = rng.NormFloat64()
		if pos {
			x[i] = 0.2 + rng.Float64()
		}
	}
	return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(x))
}

func intVec(g *G.ExprGraph, name string, v ...int) *G.Node {
	t := tensor.New(tensor.WithShape(len(v)), tensor.WithBacking(append([]int(nil), v...)))
	return G.NewVector(g, tensor.Int, G.WithShape(len(v)), G.WithName(name), G.WithValue(t))
}

// checkGradients compares Backward's gradients with central differences.
func checkGradients(t *testing.T, c gradCase) {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, uint64(len(c.name))))
	g := G.NewGraph()
	var params G.Nodes
	var values []*tensor.Dense
	for i, s := range c.shapes {
		v := randDense(rng, c.pos, s...)
		if c.values != nil {
			v = tensor.New(tensor.WithShape(s...), tensor.WithBacking(append([]float64(nil), c.values[i]...)))
		}
		values = append(values, v)
		params = append(params, G.NewTensor(g, tensor.Float64, len(s), G.WithShape(s...), G.WithValue(v), G.WithName(string(rune('A'+i)))))
	}
	cost, err := c.build(g, params)
	if err != nil {
		t.Fatal(err)
	}
	grads, err := Backward(cost, params...)
	if err != nil {
		t.Fatal(err)
	}
	prog, err := Compile(append(G.Nodes{cost}, grads...)...)
	if err != nil {
		t.Fatal(err)
	}
	fwd, err := Compile(cost)
	if err != nil {
		t.Fatal(err)
	}
	if err := prog.Run(); err != nil {
		t.Fatal(err)
	}
	analytic := make([][]float64, len(grads))
	for i, gn := range grads {
		analytic[i] = append([]float64(nil), gn.Value().Data().([]float64)...)
	}
	// A program runs at every step on the same buffers: a second run must
	// give the same gradients (an op that accumulates into its output
	// without clearing it does not).
	if err := prog.Run(); err != nil {
		t.Fatal(err)
	}
	for i, gn := range grads {
		if again := gn.Value().Data().([]float64); !slices.Equal(again, analytic[i]) {
			t.Errorf("%s: d/d%s differs on the program's second run: %v, then %v", c.name, params[i].Name(), analytic[i], again)
		}
	}
	eval := func() float64 {
		if err := fwd.Run(); err != nil {
			t.Fatal(err)
		}
		return scalarOf(cost.Value())
	}
	const h = 1e-6
	for pi, v := range values {
		x := v.Data().([]float64)
		for j := range x {
			old := x[j]
			x[j] = old + h
			up := eval()
			x[j] = old - h
			down := eval()
			x[j] = old
			num := (up - down) / (2 * h)
			if d := math.Abs(num - analytic[pi][j]); d > 1e-6*math.Max(1, math.Abs(num)) {
				t.Errorf("%s: d/d%s[%d]: analytic %.9g, numeric %.9g", c.name, params[pi].Name(), j, analytic[pi][j], num)
			}
		}
	}
}

func must(n *G.Node, err error) *G.Node {
	if err != nil {
		panic(err)
	}
	return n
}

// weightedSum reduces any tensor to a scalar with fixed pseudo-random
// weights, so every element's gradient is exercised distinctly.
func weightedSum(g *G.ExprGraph, x *G.Node) (*G.Node, error) {
	w := randDense(rand.New(rand.NewPCG(7, 7)), false, x.Shape()...)
	if x.Dims() == 0 {
		return x, nil
	}
	wn := G.NewTensor(g, tensor.Float64, x.Dims(), G.WithShape(x.Shape()...), G.WithValue(w), G.WithName("w"))
	return Dot(x, wn)
}

func TestGradients(t *testing.T) {
	cases := []gradCase{
		{name: "Add", shapes: [][]int{{3, 4}, {3, 4}}, build: func(g *G.ExprGraph, p G.Nodes) (*G.Node, error) {
			return weightedSum(g, must(Add(p[0], p[1])))
		}},
		{name: "SubBroadcast", shapes: [][]int{{3, 4}, {1, 4}}, build: func(g *G.ExprGraph, p G.Nodes) (*G.Node, error) {
			return weightedSum(g, must(Sub(p[0], p[1])))
		}},
		{name: "MulBroadcastLeft", shapes: [][]int{{1, 4}, {3, 4}}, build: func(g *G.ExprGraph, p G.Nodes) (*G.Node, error) {
			return weightedSum(g, must(Mul(p[0], p[1])))
		}},
		{name: "LogAddExp", shapes: [][]int{{3, 4}, {3, 4}}, build: func(g *G.ExprGraph, p G.Nodes) (*G.Node, error) {
			return weightedSum(g, must(LogAddExp(p[0], p[1])))
		}},
		// The cost's own op sees only the seed: its gradient must be built
		// in the graph (a PLL with one weighted term is such a cost).
		{name: "ScaledCost", shapes: [][]int{{2, 3}}, build: func(g *G.ExprGraph, p G.Nodes) (*G.Node, error) {
			return Scale(must(weightedSum(g, p[0])), -0.5)
		}},
		{name: "ShiftExp", shapes: [][]int{{2, 3}}, build: func(g *G.ExprGraph, p G.Nodes) (*G.Node, error) {
			return weightedSum(g, must(Exp(must(Shift(p[0], -0.7)))))
		}},
		{name: "ScaleExp", shapes: [][]int{{2, 3}}, build: func(g *G.ExprGraph, p G.Nodes) (*G.Node, error) {
			return weightedSum(g, must(Exp(must(Scale(p[0], 0.5)))))
		}},
		{name: "LogSquare", shapes: [][]int{{2, 3}}, build: func(g *G.ExprGraph, p G.Nodes) (*G.Node, error) {
			return weightedSum(g, must(LogSquare(p[0], 0.1)))
		}},
		{name: "LogPos", shapes: [][]int{{2, 3}}, pos: true, build: func(g *G.ExprGraph, p G.Nodes) (*G.Node, error) {
			return weightedSum(g, must(LogPos(p[0], 0.1)))
		}},
		{name: "LogSigmoidLog1mExp", shapes: [][]int{{2, 3}}, build: func(g *G.ExprGraph, p G.Nodes) (*G.Node, error) {
			return weightedSum(g, must(Log1mExp(must(LogSigmoid(p[0])))))
		}},
		{name: "MatMul", shapes: [][]int{{3, 4}, {4, 5}}, build: func(g *G.ExprGraph, p G.Nodes) (*G.Node, error) {
			return weightedSum(g, must(MatMul(p[0], p[1], false, false)))
		}},
		{name: "MatMulTT", shapes: [][]int{{4, 3}, {5, 4}}, build: func(g *G.ExprGraph, p G.Nodes) (*G.Node, error) {
			return weightedSum(g, must(MatMul(p[0], p[1], true, true)))
		}},
		{name: "MatMulNT", shapes: [][]int{{3, 4}, {5, 4}}, build: func(g *G.ExprGraph, p G.Nodes) (*G.Node, error) {
			return weightedSum(g, must(MatMul(p[0], p[1], false, true)))
		}},
		{name: "Gram", shapes: [][]int{{6, 3}}, build: func(g *G.ExprGraph, p G.Nodes) (*G.Node, error) {
			return weightedSum(g, must(Gram(p[0])))
		}},
		{name: "LogMatMulExp", shapes: [][]int{{3, 4}, {4, 5}}, build: func(g *G.ExprGraph, p G.Nodes) (*G.Node, error) {
			return weightedSum(g, must(LogMatMulExp(p[0], p[1], false, false)))
		}},
		// Positive inner terms of order 1, negative ones of order e^−3.
		{name: "SignedLogMatMulExp", shapes: [][]int{{3, 5}, {4, 5}}, values: signedLMMEOperands(false, false), build: func(g *G.ExprGraph, p G.Nodes) (*G.Node, error) {
			return weightedSum(g, must(SignedLogMatMulExp(p[0], p[1], false, true, 2)))
		}},
		{name: "SignedLogMatMulExpTN", shapes: [][]int{{5, 3}, {5, 4}}, values: signedLMMEOperands(true, true), build: func(g *G.ExprGraph, p G.Nodes) (*G.Node, error) {
			return weightedSum(g, must(SignedLogMatMulExp(p[0], p[1], true, false, 2)))
		}},
		{name: "LogMatMulExpTT", shapes: [][]int{{4, 3}, {5, 4}}, build: func(g *G.ExprGraph, p G.Nodes) (*G.Node, error) {
			return weightedSum(g, must(LogMatMulExp(p[0], p[1], true, true)))
		}},
		{name: "RowDotScaleRows", shapes: [][]int{{3, 4}, {3, 4}, {3, 4}}, build: func(g *G.ExprGraph, p G.Nodes) (*G.Node, error) {
			return weightedSum(g, must(ScaleRows(p[2], must(RowDot(p[0], p[1])))))
		}},
		{name: "SumScaleBy", shapes: [][]int{{3, 4}, {2, 2}}, build: func(g *G.ExprGraph, p G.Nodes) (*G.Node, error) {
			return weightedSum(g, must(ScaleBy(p[0], must(Sum(p[1])))))
		}},
		{name: "RowLogSumExp", shapes: [][]int{{3, 5}}, build: func(g *G.ExprGraph, p G.Nodes) (*G.Node, error) {
			return weightedSum(g, must(RowLogSumExp(p[0])))
		}},
		// Rows of 3 positive and 2 negative columns: moderate, negative
		// mass 0.9 and 0.999 of the positive (cancellation), and shifted by
		// ±700, where exp overflows and underflows without the row max.
		{name: "SignedRowLogSumExp", shapes: [][]int{{6, 5}}, values: [][]float64{signedLSERows(700)}, build: func(g *G.ExprGraph, p G.Nodes) (*G.Node, error) {
			return weightedSum(g, must(SignedRowLogSumExp(p[0], 2)))
		}},
		{name: "SignedRowLogSumExpOneNegative", shapes: [][]int{{3, 4}}, values: [][]float64{{0.1, -0.4, 0.6, 1.2, 2, 1, 0.5, -0.3, -1, 0, 1, -0.2}}, build: func(g *G.ExprGraph, p G.Nodes) (*G.Node, error) {
			return weightedSum(g, must(SignedRowLogSumExp(p[0], 1)))
		}},
		{name: "ColLogSumExp", shapes: [][]int{{5, 3}}, build: func(g *G.ExprGraph, p G.Nodes) (*G.Node, error) {
			return weightedSum(g, must(ColLogSumExp(p[0])))
		}},
		{name: "LogSoftmaxNLL", shapes: [][]int{{3, 5}}, build: func(g *G.ExprGraph, p G.Nodes) (*G.Node, error) {
			return weightedSum(g, must(LogSoftmaxNLL(p[0], intVec(g, "t", 4, 0, 2))))
		}},
		{name: "GatherSparseAccumulate", shapes: [][]int{{5, 3}}, build: func(g *G.ExprGraph, p G.Nodes) (*G.Node, error) {
			// The table is used by two gathers (sparse, repeated rows) and a
			// dense product: all three kinds of contribution are summed.
			a := must(Gather(p[0], intVec(g, "i", 1, 3, 1, 0)))
			b := must(Gather(p[0], intVec(g, "j", 4, 1, 2, 1)))
			s := must(MatMul(must(Mul(a, b)), p[0], false, true))
			return weightedSum(g, s)
		}},
		{name: "SliceConcat", shapes: [][]int{{3, 6}}, build: func(g *G.ExprGraph, p G.Nodes) (*G.Node, error) {
			re := must(SliceCols(p[0], 0, 3))
			im := must(SliceCols(p[0], 3, 6))
			return weightedSum(g, must(ConcatCols(must(Mul(re, im)), re, must(Sub(re, im)))))
		}},
		{name: "ComplexMul", shapes: [][]int{{3, 6}, {3, 6}}, build: func(g *G.ExprGraph, p G.Nodes) (*G.Node, error) {
			return weightedSum(g, must(ComplexMul(p[0], p[1], false)))
		}},
		{name: "PartProduct", shapes: [][]int{{3, 9}, {3, 9}}, build: func(g *G.ExprGraph, p G.Nodes) (*G.Node, error) {
			return weightedSum(g, must(PartProduct(p[0], p[1], 3, threePartTable)))
		}},
		{name: "PartProductBroadcastX", shapes: [][]int{{1, 9}, {4, 9}}, build: func(g *G.ExprGraph, p G.Nodes) (*G.Node, error) {
			return weightedSum(g, must(PartProduct(p[0], p[1], 3, threePartTable)))
		}},
		{name: "PartProductBroadcastY", shapes: [][]int{{4, 4}, {1, 4}}, build: func(g *G.ExprGraph, p G.Nodes) (*G.Node, error) {
			return weightedSum(g, must(PartProduct(p[0], p[1], 2, complexTable)))
		}},
		{name: "PartSumsFourParts", shapes: [][]int{{3, 8}, {1, 8}}, build: func(g *G.ExprGraph, p G.Nodes) (*G.Node, error) {
			return weightedSum(g, must(PartSums(p[0], p[1], 4, [][2]int{{0, 3}, {2, 2}, {3, 0}, {1, 1}, {0, 0}})))
		}},
		{name: "GatedLogPartsFourParts", shapes: [][]int{{3, 8}}, build: func(g *G.ExprGraph, p G.Nodes) (*G.Node, error) {
			return weightedSum(g, must(GatedLogParts(p[0], 4, -0.8)))
		}},
		{name: "SignedBlockContract", shapes: [][]int{{4, 6}, {3, 6}, {5, 6}}, build: func(g *G.ExprGraph, p G.Nodes) (*G.Node, error) {
			terms := []TriTerm{{0, 1, 2, 1}, {2, 2, 0, -1}, {1, 0, 1, 0.5}}
			return SignedBlockContract(must(Gram(p[0])), must(Gram(p[1])), must(Gram(p[2])), 3, terms)
		}},
		{name: "ComplexMulConj", shapes: [][]int{{3, 6}, {3, 6}}, build: func(g *G.ExprGraph, p G.Nodes) (*G.Node, error) {
			return weightedSum(g, must(ComplexMul(p[0], p[1], true)))
		}},
		{name: "ComplexMulConjBroadcastA", shapes: [][]int{{1, 6}, {4, 6}}, build: func(g *G.ExprGraph, p G.Nodes) (*G.Node, error) {
			return weightedSum(g, must(ComplexMul(p[0], p[1], true)))
		}},
		{name: "ComplexMulBroadcastB", shapes: [][]int{{4, 6}, {1, 6}}, build: func(g *G.ExprGraph, p G.Nodes) (*G.Node, error) {
			return weightedSum(g, must(ComplexMul(p[0], p[1], false)))
		}},
		{name: "HalfSums", shapes: [][]int{{3, 6}, {3, 6}}, build: func(g *G.ExprGraph, p G.Nodes) (*G.Node, error) {
			return weightedSum(g, must(HalfSums(p[0], p[1], complexLogPairs)))
		}},
		{name: "HalfSumsBroadcastA", shapes: [][]int{{1, 6}, {4, 6}}, build: func(g *G.ExprGraph, p G.Nodes) (*G.Node, error) {
			return weightedSum(g, must(HalfSums(p[0], p[1], complexLogPairs)))
		}},
		{name: "HalfSumsBroadcastB", shapes: [][]int{{4, 6}, {1, 6}}, build: func(g *G.ExprGraph, p G.Nodes) (*G.Node, error) {
			return weightedSum(g, must(HalfSums(p[0], p[1], unevenPairs)))
		}},
		{name: "HalfSumsBroadcastBoth", shapes: [][]int{{1, 6}, {1, 6}}, build: func(g *G.ExprGraph, p G.Nodes) (*G.Node, error) {
			return weightedSum(g, must(HalfSums(p[0], p[1], unevenPairs)))
		}},
		{name: "RowModulusPowersN3", shapes: [][]int{{3, 4}}, build: func(g *G.ExprGraph, p G.Nodes) (*G.Node, error) {
			return weightedSum(g, must(RowModulusPowers(p[0], 1, 3)))
		}},
		{name: "RowModulusPowersComplexN3", shapes: [][]int{{3, 6}}, build: func(g *G.ExprGraph, p G.Nodes) (*G.Node, error) {
			return weightedSum(g, must(RowModulusPowers(p[0], 2, 3)))
		}},
		{name: "RowModulusPowersF2", shapes: [][]int{{3, 6}}, build: func(g *G.ExprGraph, p G.Nodes) (*G.Node, error) {
			return weightedSum(g, must(RowModulusPowers(p[0], 3, 2)))
		}},
		{name: "RowModulusPowersP2.5", shapes: [][]int{{2, 4}}, build: func(g *G.ExprGraph, p G.Nodes) (*G.Node, error) {
			return weightedSum(g, must(RowModulusPowers(p[0], 2, 2.5)))
		}},
		{name: "GatedLogHalves", shapes: [][]int{{3, 6}}, build: func(g *G.ExprGraph, p G.Nodes) (*G.Node, error) {
			return weightedSum(g, must(GatedLogHalves(p[0])))
		}},
		{name: "BatchVecMat", shapes: [][]int{{3, 2}, {3, 6}}, build: func(g *G.ExprGraph, p G.Nodes) (*G.Node, error) {
			return weightedSum(g, must(BatchVecMat(p[0], p[1], 2, 3, false)))
		}},
		{name: "BatchVecMatTransBroadcastX", shapes: [][]int{{1, 3}, {4, 6}}, build: func(g *G.ExprGraph, p G.Nodes) (*G.Node, error) {
			return weightedSum(g, must(BatchVecMat(p[0], p[1], 2, 3, true)))
		}},
		{name: "LogBatchVecMat", shapes: [][]int{{3, 2}, {3, 6}}, build: func(g *G.ExprGraph, p G.Nodes) (*G.Node, error) {
			return weightedSum(g, must(LogBatchVecMat(p[0], p[1], 2, 3, false)))
		}},
		{name: "LogBatchVecMatTransBroadcastM", shapes: [][]int{{4, 3}, {1, 6}}, build: func(g *G.ExprGraph, p G.Nodes) (*G.Node, error) {
			return weightedSum(g, must(LogBatchVecMat(p[0], p[1], 2, 3, true)))
		}},
		{name: "BatchOuter", shapes: [][]int{{3, 2}, {1, 4}}, build: func(g *G.ExprGraph, p G.Nodes) (*G.Node, error) {
			return weightedSum(g, must(BatchOuter(p[0], p[1])))
		}},
		{name: "LogBatchOuter", shapes: [][]int{{1, 2}, {3, 4}}, build: func(g *G.ExprGraph, p G.Nodes) (*G.Node, error) {
			return weightedSum(g, must(LogBatchOuter(p[0], p[1])))
		}},
		{name: "ModeProduct1", shapes: [][]int{{2, 12}, {5, 2}}, build: func(g *G.ExprGraph, p G.Nodes) (*G.Node, error) {
			return weightedSum(g, must(ModeProduct(p[0], p[1], 1, [3]int{2, 3, 4}, false)))
		}},
		{name: "ModeProduct2T", shapes: [][]int{{2, 12}, {3, 5}}, build: func(g *G.ExprGraph, p G.Nodes) (*G.Node, error) {
			return weightedSum(g, must(ModeProduct(p[0], p[1], 2, [3]int{2, 3, 4}, true)))
		}},
		{name: "ModeProduct3", shapes: [][]int{{2, 12}, {5, 4}}, build: func(g *G.ExprGraph, p G.Nodes) (*G.Node, error) {
			return weightedSum(g, must(ModeProduct(p[0], p[1], 3, [3]int{2, 3, 4}, false)))
		}},
		{name: "SliceBlockTranspose", shapes: [][]int{{4, 5}}, build: func(g *G.ExprGraph, p G.Nodes) (*G.Node, error) {
			return weightedSum(g, must(Transpose(must(SliceBlock(p[0], 1, 3, 2, 5)))))
		}},
		{name: "TypedGram", shapes: [][]int{{6, 3}}, build: func(g *G.ExprGraph, p G.Nodes) (*G.Node, error) {
			return weightedSum(g, must(TypedGram(p[0], []int32{1, 0, -1, 1, 2, 1}, 4))) // class 3 is empty
		}},
		{name: "QuadForm", shapes: [][]int{{4, 3}, {3, 3}}, build: func(g *G.ExprGraph, p G.Nodes) (*G.Node, error) {
			return weightedSum(g, must(QuadForm(p[0], p[1]))) // G not symmetric: the general gradient
		}},
		{name: "QuadForm/Gram", shapes: [][]int{{4, 3}, {5, 3}}, build: func(g *G.ExprGraph, p G.Nodes) (*G.Node, error) {
			return weightedSum(g, must(QuadForm(p[0], must(Gram(p[1]))))) // symmetric: the forward's Q·G reused
		}},
		{name: "TypedQuadForm", shapes: [][]int{{4, 2}, {3, 4}}, build: func(g *G.ExprGraph, p G.Nodes) (*G.Node, error) {
			return weightedSum(g, must(TypedQuadForm(p[0], p[1], intVec(g, "c", 2, 0, -1, 2))))
		}},
		{name: "TypedQuadForm/Gram", shapes: [][]int{{4, 2}, {6, 2}}, build: func(g *G.ExprGraph, p G.Nodes) (*G.Node, error) {
			grams := must(TypedGram(p[1], []int32{1, 0, 2, 1, 2, 1}, 3)) // symmetric blocks
			return weightedSum(g, must(TypedQuadForm(p[0], grams, intVec(g, "c", 2, 0, -1, 2))))
		}},
		{name: "TypedColLogSumExp", shapes: [][]int{{5, 3}}, build: func(g *G.ExprGraph, p G.Nodes) (*G.Node, error) {
			return weightedSum(g, must(SliceBlock(must(TypedColLogSumExp(p[0], []int32{0, 1, 0, 0, 1}, 3)), 0, 2, 0, 3)))
		}},
		{name: "MaskClasses", shapes: [][]int{{3, 4}}, build: func(g *G.ExprGraph, p G.Nodes) (*G.Node, error) {
			m := must(MaskClasses(p[0], intVec(g, "rc", 0, 1, 0), []int32{0, 1, 0, 1}))
			return weightedSum(g, must(RowLogSumExp(m)))
		}},
		{name: "MaskEqualReshape", shapes: [][]int{{2, 3}}, build: func(g *G.ExprGraph, p G.Nodes) (*G.Node, error) {
			v := must(Reshape(p[0], 6))
			m := must(MaskEqual(v, intVec(g, "a", 1, 2, 3, 4, 5, 6), intVec(g, "b", 1, 0, 3, 4, 0, 6)))
			return weightedSum(g, must(Exp(must(Reshape(m, 3, 2)))))
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { checkGradients(t, c) })
	}
}
