package graph

import (
	"math"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// These tests pin the Gorgonia v0.9.18 failures measured on this project's
// machines and show that the package's own ops do not have them.

func runScalar(t *testing.T, outs ...*G.Node) {
	t.Helper()
	p, err := Compile(outs...)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Run(); err != nil {
		t.Fatal(err)
	}
}

// G.ByIndices on the innermost axis returned gradient [2 0 0 0 0] for
// x=[0..4], idx=[3,4]; the right answer is [0 0 0 1 1].
func TestGatherGradientIsScatterAdd(t *testing.T) {
	g := G.NewGraph()
	x := G.NewMatrix(g, tensor.Float64, G.WithShape(5, 1), G.WithName("x"),
		G.WithValue(tensor.New(tensor.WithShape(5, 1), tensor.WithBacking([]float64{0, 1, 2, 3, 4}))))
	rows := must(Gather(x, intVec(g, "idx", 3, 4)))
	cost := must(Sum(rows))
	grads, err := Backward(cost, x)
	if err != nil {
		t.Fatal(err)
	}
	runScalar(t, cost, grads[0])
	if got := scalarOf(cost.Value()); got != 7 {
		t.Errorf("sum of gathered rows = %v, want 7", got)
	}
	want := []float64{0, 0, 0, 1, 1}
	for i, v := range grads[0].Value().Data().([]float64) {
		if v != want[i] {
			t.Fatalf("gradient = %v, want %v", grads[0].Value().Data(), want)
		}
	}
}

// G.LogSumExp returned 3.43 for [10 20 30] and failed on matrices.
func TestRowLogSumExpValue(t *testing.T) {
	g := G.NewGraph()
	x := G.NewMatrix(g, tensor.Float64, G.WithShape(2, 3), G.WithName("x"),
		G.WithValue(tensor.New(tensor.WithShape(2, 3), tensor.WithBacking([]float64{10, 20, 30, -1000, 0, 1000}))))
	y := must(RowLogSumExp(x))
	runScalar(t, y)
	got := y.Value().Data().([]float64)
	want := []float64{30 + math.Log1p(math.Exp(-10)+math.Exp(-20)), 1000}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Errorf("row %d: %v, want %v", i, got[i], want[i])
		}
	}
}

// G.LogSoftMax used the maximum of the whole tensor, so the row [0 1]
// became [+Inf +Inf] when another row held 200. The NLL is per row.
func TestLogSoftmaxNLLPerRowShift(t *testing.T) {
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		g := G.NewGraph()
		var back any = []float64{0, 1, 200, 0}
		if dt == tensor.Float32 {
			back = []float32{0, 1, 200, 0}
		}
		x := G.NewMatrix(g, dt, G.WithShape(2, 2), G.WithName("x"), G.WithValue(tensor.New(tensor.WithShape(2, 2), tensor.WithBacking(back))))
		y := must(LogSoftmaxNLL(x, intVec(g, "t", 1, 1)))
		runScalar(t, y)
		got := []float64{scalarAt(y.Value(), 0), scalarAt(y.Value(), 1)}
		want := []float64{math.Log1p(math.Exp(-1)), 200}
		for i := range want {
			if math.Abs(got[i]-want[i]) > 1e-5*math.Max(1, want[i]) {
				t.Errorf("%v row %d: %v, want %v", dt, i, got[i], want[i])
			}
		}
	}
}

func scalarAt(v G.Value, i int) float64 {
	switch d := v.Data().(type) {
	case []float32:
		return float64(d[i])
	case []float64:
		return d[i]
	}
	return math.NaN()
}

// With BindDualValues some stock ops accumulated gradients across runs; a
// compiled Program must give the same gradient every time.
func TestGradientsDoNotAccumulateAcrossRuns(t *testing.T) {
	g := G.NewGraph()
	e := G.NewMatrix(g, tensor.Float64, G.WithShape(4, 3), G.WithName("E"), G.WithInit(G.Gaussian(0, 1)))
	q := must(Gather(e, intVec(g, "s", 0, 2)))
	cost := must(Sum(must(LogSoftmaxNLL(must(MatMul(q, e, false, true)), intVec(g, "o", 1, 3)))))
	grads, err := Backward(cost, e)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Compile(cost, grads[0])
	if err != nil {
		t.Fatal(err)
	}
	var first []float64
	for run := 0; run < 3; run++ {
		if err := p.Run(); err != nil {
			t.Fatal(err)
		}
		got := grads[0].Value().Data().([]float64)
		if first == nil {
			first = append([]float64(nil), got...)
			continue
		}
		for i := range got {
			if got[i] != first[i] {
				t.Fatalf("run %d: gradient changed at %d: %v vs %v", run, i, got[i], first[i])
			}
		}
	}
}
