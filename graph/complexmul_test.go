package graph

import (
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// ComplexMul agrees with complex128 arithmetic entry by entry, for both
// dtypes, with and without conjugation and row broadcasting.
func TestComplexMulMatchesComplexArithmetic(t *testing.T) {
	const k = 5
	for _, c := range []struct {
		name         string
		rowsA, rowsB int
		conj         bool
	}{
		{"plain", 3, 3, false}, {"conj", 3, 3, true},
		{"broadcastA", 1, 4, true}, {"broadcastB", 4, 1, false},
	} {
		for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
			rng := rand.New(rand.NewPCG(5, 9))
			a := randDense(rng, false, c.rowsA, 2*k)
			b := randDense(rng, false, c.rowsB, 2*k)
			g := G.NewGraph()
			cast := func(x *tensor.Dense, name string) *G.Node {
				v := x
				if dt == tensor.Float32 {
					f := make([]float32, x.Len())
					for i, y := range x.Data().([]float64) {
						f[i] = float32(y)
					}
					v = tensor.New(tensor.WithShape(x.Shape()...), tensor.WithBacking(f))
				}
				return G.NewMatrix(g, dt, G.WithShape(x.Shape()...), G.WithValue(v), G.WithName(name))
			}
			y := must(ComplexMul(cast(a, "a"), cast(b, "b"), c.conj))
			prog, err := Compile(y)
			if err != nil {
				t.Fatal(err)
			}
			if err := prog.Run(); err != nil {
				t.Fatal(err)
			}
			rows := max(c.rowsA, c.rowsB)
			if !y.Shape().Eq(tensor.Shape{rows, 2 * k}) {
				t.Fatalf("%s %v: shape %v", c.name, dt, y.Shape())
			}
			at, bt := a.Data().([]float64), b.Data().([]float64)
			entry := func(x []float64, rowsX, i, j int) complex128 {
				if rowsX == 1 {
					i = 0
				}
				return complex(x[i*2*k+j], x[i*2*k+k+j])
			}
			tol := 1e-12
			if dt == tensor.Float32 {
				tol = 1e-5
			}
			for i := 0; i < rows; i++ {
				for j := 0; j < k; j++ {
					ca := entry(at, c.rowsA, i, j)
					if c.conj {
						ca = cmplx.Conj(ca)
					}
					want := ca * entry(bt, c.rowsB, i, j)
					var re, im float64
					switch v := y.Value().Data().(type) {
					case []float64:
						re, im = v[i*2*k+j], v[i*2*k+k+j]
					case []float32:
						re, im = float64(v[i*2*k+j]), float64(v[i*2*k+k+j])
					}
					if math.Abs(re-real(want)) > tol || math.Abs(im-imag(want)) > tol {
						t.Fatalf("%s %v: entry (%d,%d) = %v%+vi, want %v", c.name, dt, i, j, re, im, want)
					}
				}
			}
		}
	}
}

func TestComplexMulRejectsBadShapes(t *testing.T) {
	g := G.NewGraph()
	odd := G.NewMatrix(g, tensor.Float64, G.WithShape(2, 3), G.WithName("odd"))
	even := G.NewMatrix(g, tensor.Float64, G.WithShape(2, 4), G.WithName("even"))
	other := G.NewMatrix(g, tensor.Float64, G.WithShape(3, 4), G.WithName("other"))
	for _, c := range [][2]*G.Node{{odd, odd}, {even, other}} {
		if _, err := ComplexMul(c[0], c[1], false); err == nil {
			t.Errorf("ComplexMul(%v, %v): no error", c[0].Shape(), c[1].Shape())
		}
	}
}
