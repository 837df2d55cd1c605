package graph

import (
	"fmt"
	"math"
	"math/cmplx"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// RowModulusPowers and its gradient agree with the definition written out:
// complex moduli through math/cmplx for two blocks, absolute values for
// one, Euclidean norms over three, in both dtypes, with zero elements (the
// gradient there is zero for p > 2 and the element itself times 2 for p = 2).
func TestRowModulusPowersMatchesDefinition(t *testing.T) {
	const rows, k = 3, 4
	x := []float64{
		0.5, -1, 0, 2, 0.25, 0, 0, -3, 1, 1, 0, 0,
		-2, 0.1, 0.7, 0, 0, 0, 1.5, 0.5, -0.3, 0, 0, 0.9,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	}
	w := []float64{0.7, -1.3, 2}
	for _, c := range []struct {
		parts int
		p     float64
	}{{1, 3}, {2, 3}, {3, 2}, {2, 2}, {2, 2.5}, {1, 4}} {
		for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
			t.Run(fmt.Sprintf("parts%d/p%g/%v", c.parts, c.p, dt), func(t *testing.T) {
				cols := len(x) / rows
				n := cols / c.parts
				modulus := func(i, j int) float64 {
					switch c.parts {
					case 1:
						return math.Abs(x[i*cols+j])
					case 2:
						return cmplx.Abs(complex(x[i*cols+j], x[i*cols+n+j]))
					}
					s := 0.0
					for b := range c.parts {
						s += x[i*cols+b*n+j] * x[i*cols+b*n+j]
					}
					return math.Sqrt(s)
				}
				g := G.NewGraph()
				xn := G.NewMatrix(g, dt, G.WithShape(rows, cols), G.WithName("x"), G.WithValue(denseOf(dt, x, rows, cols)))
				wd := denseOf(dt, w, rows, 1)
				if err := wd.Reshape(rows); err != nil {
					t.Fatal(err)
				}
				wn := G.NewVector(g, dt, G.WithShape(rows), G.WithName("w"), G.WithValue(wd))
				y := must(RowModulusPowers(xn, c.parts, c.p))
				grads, err := Backward(must(Dot(y, wn)), xn)
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
				tol := 1e-12
				if dt == tensor.Float32 {
					tol = 1e-5
				}
				got, gotGrad := values(y), values(grads[0])
				for i := range rows {
					want := 0.0
					for j := range n {
						m := modulus(i, j)
						want += math.Pow(m, c.p)
						for b := range c.parts {
							// ∂ m^p / ∂x = p·m^(p−1)·x/m.
							wantGrad := 0.0
							if v := x[i*cols+b*n+j]; m > 0 {
								wantGrad = w[i] * c.p * math.Pow(m, c.p-1) * v / m
							}
							if d := gotGrad[i*cols+b*n+j] - wantGrad; math.Abs(d) > tol*(1+math.Abs(wantGrad)) {
								t.Errorf("gradient at (%d, %d): %g, want %g", i, b*n+j, gotGrad[i*cols+b*n+j], wantGrad)
							}
						}
					}
					if math.Abs(got[i]-want) > tol*(1+want) {
						t.Errorf("row %d: %g, want %g", i, got[i], want)
					}
				}
			})
		}
	}
}

func TestRowModulusPowersRefusesBadInput(t *testing.T) {
	g := G.NewGraph()
	x := G.NewMatrix(g, tensor.Float64, G.WithShape(2, 6), G.WithName("x"))
	v := G.NewVector(g, tensor.Float64, G.WithShape(6), G.WithName("v"))
	for _, c := range []struct {
		name  string
		x     *G.Node
		parts int
		p     float64
	}{
		{"nil", nil, 1, 3},
		{"vector", v, 1, 3},
		{"uneven blocks", x, 4, 3},
		{"no blocks", x, 0, 3},
		{"p below 2", x, 2, 1},
		{"p NaN", x, 2, math.NaN()},
		{"p infinite", x, 2, math.Inf(1)},
	} {
		if _, err := RowModulusPowers(c.x, c.parts, c.p); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
}
