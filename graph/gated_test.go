package graph

import (
	"math"
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// GatedLogHalves equals the composition it replaces, [a | a + LogSigmoid(b)]
// built from SliceCols, Add and ConcatCols, forward and backward, in float32
// (the vectorised kernels, rows long enough for them) and float64, with
// inputs of both signs and large magnitude.
func TestGatedLogHalvesMatchesComposition(t *testing.T) {
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		const rows, k = 7, 37
		rng := rand.New(rand.NewPCG(3, 4))
		vals := make([]float64, rows*2*k)
		for i := range vals {
			vals[i] = 30 * rng.NormFloat64()
		}
		run := func(fused bool) (out, grad []float64) {
			g := G.NewGraph()
			x := G.NewMatrix(g, dt, G.WithShape(rows, 2*k), G.WithName("x"), G.WithValue(denseOf(dt, vals, rows, 2*k)))
			var y *G.Node
			if fused {
				y = must(GatedLogHalves(x))
			} else {
				a, b := must(SliceCols(x, 0, k)), must(SliceCols(x, k, 2*k))
				y = must(ConcatCols(a, must(Add(a, must(LogSigmoid(b))))))
			}
			w := denseOf(dt, weightsFor(rows*2*k), rows, 2*k)
			cost := must(Dot(y, G.NewMatrix(g, dt, G.WithShape(rows, 2*k), G.WithName("w"), G.WithValue(w))))
			grads, err := Backward(cost, x)
			if err != nil {
				t.Fatal(err)
			}
			prog, err := Compile(y, grads[0])
			if err != nil {
				t.Fatal(err)
			}
			if err := prog.Run(); err != nil {
				t.Fatal(err)
			}
			return Float64s(y.Value().(*tensor.Dense)), Float64s(grads[0].Value().(*tensor.Dense))
		}
		wantOut, wantGrad := run(false)
		gotOut, gotGrad := run(true)
		tol := 1e-12
		if dt == tensor.Float32 {
			tol = 1e-5
		}
		for i := range wantOut {
			if d := math.Abs(gotOut[i] - wantOut[i]); d > tol*(1+math.Abs(wantOut[i])) {
				t.Fatalf("%v: output %d = %v, composition %v", dt, i, gotOut[i], wantOut[i])
			}
			if d := math.Abs(gotGrad[i] - wantGrad[i]); d > tol*(1+math.Abs(wantGrad[i])) {
				t.Fatalf("%v: gradient %d = %v, composition %v", dt, i, gotGrad[i], wantGrad[i])
			}
		}
	}
	if _, err := GatedLogHalves(G.NewMatrix(G.NewGraph(), tensor.Float64, G.WithShape(2, 3), G.WithName("odd"))); err == nil {
		t.Error("an odd number of columns was accepted")
	}
}

func denseOf(dt tensor.Dtype, vals []float64, rows, cols int) *tensor.Dense {
	if dt == tensor.Float32 {
		v := make([]float32, len(vals))
		for i, x := range vals {
			v[i] = float32(x)
		}
		return tensor.New(tensor.WithShape(rows, cols), tensor.WithBacking(v))
	}
	return tensor.New(tensor.WithShape(rows, cols), tensor.WithBacking(append([]float64(nil), vals...)))
}

func weightsFor(n int) []float64 {
	rng := rand.New(rand.NewPCG(5, 6))
	w := make([]float64, n)
	for i := range w {
		w[i] = rng.NormFloat64()
	}
	return w
}
