package graph

import (
	"math"
	"math/rand/v2"
	"testing"

	"gorgonia.org/tensor"
)

func relErr(a, b float64) float64 {
	return math.Abs(a-b) / math.Max(1e-30, math.Max(math.Abs(a), math.Abs(b)))
}

// The float32 kernels (AVX2 on amd64) must agree with the float64 ones.
func TestFloat32KernelsMatchFloat64(t *testing.T) {
	if !haveAVX2 {
		t.Log("no AVX2: float32 paths use the portable loops")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for _, cols := range []int{1, 7, 8, 9, 33, 1000} {
		rows := 5
		x64 := make([]float64, rows*cols)
		x32 := make([]float32, rows*cols)
		for i := range x64 {
			x32[i] = float32(rng.NormFloat64() * 30)
			x64[i] = float64(x32[i])
		}
		l64, l32 := make([]float64, rows), make([]float32, rows)
		lseRows(x64, rows, cols, cols, l64)
		lseRows(x32, rows, cols, cols, l32)
		for i := range l64 {
			if math.Abs(float64(l32[i])-l64[i]) > 2e-6*math.Max(1, math.Abs(l64[i])) {
				t.Errorf("cols %d: lse row %d: float32 %v, float64 %v", cols, i, l32[i], l64[i])
			}
		}
		g64, g32 := []float64{1, -2, 0.5, 3, 1}, []float32{1, -2, 0.5, 3, 1}
		o64, o32 := make([]float64, rows*cols), make([]float32, rows*cols)
		softmaxScale(x64, l64, g64, rows, cols, cols, o64)
		softmaxScale(x32, l32, g32, rows, cols, cols, o32)
		for i := range o64 {
			if math.Abs(float64(o32[i])-o64[i]) > 1e-5*math.Max(1e-3, math.Abs(o64[i])) {
				t.Fatalf("cols %d: softmax %d: float32 %v, float64 %v", cols, i, o32[i], o64[i])
			}
		}
	}
	// exp accuracy over the whole useful range, and exact zero below -87.
	xs := []float32{-100, -87.5, -86, -20, -1, -1e-3, 0, 1e-3, 1, 20, 80}
	out := make([]float32, len(xs))
	expShift(xs, 1, len(xs), nil, nil, out)
	for i, x := range xs {
		want := math.Exp(float64(x))
		if x < -87 {
			want = 0
		}
		if want == 0 && out[i] != 0 || want != 0 && relErr(float64(out[i]), want) > 3e-7 {
			t.Errorf("exp(%v) = %v, want %v", x, out[i], want)
		}
	}
}

func TestLSERowWithNaNIsNaN(t *testing.T) {
	x := make([]float32, 20)
	x[13] = float32(math.NaN())
	out := make([]float32, 1)
	lseRows(x, 1, 20, 20, out)
	if !math.IsNaN(float64(out[0])) {
		t.Fatalf("lse of a row with NaN = %v", out[0])
	}
}

func TestAdamMatchesReference(t *testing.T) {
	// Reference: PyTorch's Adam written out in float64.
	const n = 37
	rng := rand.New(rand.NewPCG(5, 6))
	p64 := make([]float64, n)
	p32 := make([]float32, n)
	for i := range p64 {
		p32[i] = float32(rng.NormFloat64())
		p64[i] = float64(p32[i])
	}
	ref := append([]float64(nil), p64...)
	m, v := make([]float64, n), make([]float64, n)
	a32, a64 := NewAdam(0.01), NewAdam(0.01)
	P32 := tensor.New(tensor.WithShape(n), tensor.WithBacking(p32))
	P64 := tensor.New(tensor.WithShape(n), tensor.WithBacking(p64))
	for step := 1; step <= 5; step++ {
		g64 := make([]float64, n)
		g32 := make([]float32, n)
		for i := range g64 {
			g32[i] = float32(rng.NormFloat64())
			g64[i] = float64(g32[i])
		}
		for i := range ref {
			m[i] = 0.9*m[i] + 0.1*g64[i]
			v[i] = 0.999*v[i] + 0.001*g64[i]*g64[i]
			b1, b2 := 1-math.Pow(0.9, float64(step)), 1-math.Pow(0.999, float64(step))
			ref[i] -= 0.01 * (m[i] / b1) / (math.Sqrt(v[i]/b2) + 1e-8)
		}
		if _, err := a32.Step([]*tensor.Dense{P32}, []*tensor.Dense{tensor.New(tensor.WithShape(n), tensor.WithBacking(g32))}); err != nil {
			t.Fatal(err)
		}
		if _, err := a64.Step([]*tensor.Dense{P64}, []*tensor.Dense{tensor.New(tensor.WithShape(n), tensor.WithBacking(g64))}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range ref {
		if math.Abs(p64[i]-ref[i]) > 1e-12 {
			t.Errorf("float64 Adam[%d] = %v, want %v", i, p64[i], ref[i])
		}
		if math.Abs(float64(p32[i])-ref[i]) > 1e-5 {
			t.Errorf("float32 Adam[%d] = %v, want %v", i, p32[i], ref[i])
		}
	}
	bad, _ := a32.Step([]*tensor.Dense{P32}, []*tensor.Dense{tensor.New(tensor.WithShape(n), tensor.WithBacking(append([]float32{float32(math.Inf(1)), float32(math.NaN())}, make([]float32, n-2)...)))})
	if bad != 2 {
		t.Errorf("non-finite gradients counted %d, want 2", bad)
	}
}

// Every optimiser flushes parameters that decay below the smallest normal
// number to zero (subnormal operands slow BLAS down 10-100x), keeps NaN,
// and leaves normal numbers alone; in the vectorised body and the tail.
func TestOptimizersFlushSubnormals(t *testing.T) {
	for _, opt := range []func() Optimizer{
		func() Optimizer { return NewAdam(0.01) },
		func() Optimizer { return NewAdagrad(0.01, 0) },
		func() Optimizer { return NewSGD(0.01, 0) },
		func() Optimizer { return NewSGD(0.01, 0.9) },
	} {
		optimizerFlushesSubnormals(t, opt())
	}
}

func optimizerFlushesSubnormals(t *testing.T, opt Optimizer) {
	const n = 37 // four vectors of 8 and a tail
	start := func(i int, subnormal float64) float64 { return [3]float64{subnormal, 1, math.NaN()}[i%3] }
	p32, g32 := make([]float32, n), make([]float32, n)
	p64, g64 := make([]float64, n), make([]float64, n)
	for i := range p32 {
		// Built from bits: arithmetic would flush them already (see SubnormalsFlushed).
		p32[i], p64[i] = float32(start(i, 1)), start(i, 1)
		if i%3 == 0 {
			p32[i], p64[i] = math.Float32frombits(0x000ae398), math.Float64frombits(0x000123456789abcd)
		}
	}
	if math.Float32bits(p32[0]) == 0 || math.Float64bits(p64[0]) == 0 {
		t.Fatal("the test's subnormals are zero")
	}
	for _, c := range []struct {
		name string
		p, g *tensor.Dense
		at   func(i int) float64
	}{
		{"float32", tensor.New(tensor.WithShape(n), tensor.WithBacking(p32)), tensor.New(tensor.WithShape(n), tensor.WithBacking(g32)),
			func(i int) float64 { return float64(p32[i]) }},
		{"float64", tensor.New(tensor.WithShape(n), tensor.WithBacking(p64)), tensor.New(tensor.WithShape(n), tensor.WithBacking(g64)),
			func(i int) float64 { return p64[i] }},
	} {
		// A zero gradient leaves every parameter where it is, but for the flush.
		if _, err := opt.Step([]*tensor.Dense{c.p}, []*tensor.Dense{c.g}); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < n; i++ {
			x := c.at(i)
			if want := start(i, 0); x != want && !(math.IsNaN(want) && math.IsNaN(x)) {
				t.Errorf("%T %s: parameter %d = %v after a step, want %v", opt, c.name, i, x, want)
			}
		}
	}
}

func TestUnaryFloat32KernelsMatchFloat64(t *testing.T) {
	xs := []float64{-90, -30, -5, -1.5, -0.3, -1e-4, 0, 1e-4, 0.3, 1.5, 5, 30}
	for kind := kindExp; kind <= kindLog1mExp; kind++ {
		c := 0.05
		for i, x := range xs {
			if kind == kindLog1mExp && x >= 0 || kind == kindExp && x > 80 {
				continue
			}
			in := make([]float32, 11) // odd length exercises the vector tail
			for j := range in {
				in[j] = float32(x)
			}
			out, grad := make([]float32, 11), make([]float32, 11)
			g := make([]float32, 11)
			for j := range g {
				g[j] = 1
			}
			unaryKernel(kind, c, in, out)
			unaryGradKernel(kind, c, g, in, out, grad)
			x32 := float64(float32(x))
			want, wantD := unaryFn(kind, c, x32), unaryDeriv(kind, c, x32, unaryFn(kind, c, x32))
			tol := func(w float64) float64 { return 2e-6*math.Abs(w) + 1e-7 }
			for j := range out {
				if math.Abs(float64(out[j])-want) > tol(want) && !(math.IsInf(want, -1) && math.IsInf(float64(out[j]), -1)) {
					t.Fatalf("%s(%v)[%d] = %v, want %v (case %d)", unaryNames[kind], x, j, out[j], want, i)
				}
				if math.Abs(float64(grad[j])-wantD) > 1e-5*math.Abs(wantD)+1e-7 {
					t.Fatalf("%s'(%v)[%d] = %v, want %v", unaryNames[kind], x, j, grad[j], wantD)
				}
			}
		}
	}
}

func TestColLSEFloat32MatchesFloat64(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	n, k := 1001, 13
	x32, x64 := make([]float32, n*k), make([]float64, n*k)
	for i := range x32 {
		x32[i] = float32(rng.NormFloat64()*3 - 10)
		x64[i] = float64(x32[i])
	}
	o32, o64 := make([]float32, k), make([]float64, k)
	colLSE(x32, n, k, o32)
	colLSE(x64, n, k, o64)
	for j := range o64 {
		if math.Abs(float64(o32[j])-o64[j]) > 2e-6*math.Abs(o64[j]) {
			t.Errorf("column %d: %v vs %v", j, o32[j], o64[j])
		}
	}
}

// rowDot splits rows over goroutines and each sum over four accumulators;
// every row must still be its dot product, for widths that do and do not
// divide by four and sizes below and above the parallel threshold.
func TestRowDotMatchesSerialSums(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, c := range []struct{ rows, k int }{{1, 1}, {5, 3}, {9, 4}, {3, 7}, {400, 401}, {1000, 200}} {
		a, b := make([]float64, c.rows*c.k), make([]float64, c.rows*c.k)
		for i := range a {
			a[i], b[i] = rng.NormFloat64(), rng.NormFloat64()
		}
		out := make([]float64, c.rows)
		rowDot(a, b, out, c.k)
		for i := range out {
			var want float64
			for j := 0; j < c.k; j++ {
				want += a[i*c.k+j] * b[i*c.k+j]
			}
			if relErr(out[i], want) > 1e-12*float64(c.k) && math.Abs(out[i]-want) > 1e-12 {
				t.Fatalf("%d×%d: row %d = %v, want %v", c.rows, c.k, i, out[i], want)
			}
		}
	}
}
