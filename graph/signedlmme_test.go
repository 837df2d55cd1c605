package graph

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// signedLMMEOperands returns a (3×5) and b (4×5) for SignedLogMatMulExp
// with 2 negative inner indices, stored transposed when aT or bT: positive
// inner terms of order 1 and negative ones of order e^−3, so every entry
// is defined.
func signedLMMEOperands(aT, bT bool) [][]float64 {
	const m, n, k, neg = 3, 4, 5, 2
	rng := rand.New(rand.NewPCG(10, 11))
	fill := func(rows int, trans bool) []float64 {
		x := make([]float64, rows*k)
		for i := 0; i < rows; i++ {
			for l := 0; l < k; l++ {
				v := 0.5 * rng.NormFloat64()
				if l >= k-neg {
					v = -1.5 + 0.3*rng.NormFloat64()
				}
				if trans {
					x[l*rows+i] = v
				} else {
					x[i*k+l] = v
				}
			}
		}
		return x
	}
	return [][]float64{fill(m, aT), fill(n, bT)}
}

// SignedLogMatMulExp and its gradients match a plain loop over the inner
// index, in both dtypes and for each transposition, on entries with
// cancellation and on rows of a shifted by ±80 (float32) or ±700
// (float64); untransposed, as the models call it, they also match the
// composite of sliced LogMatMulExps it replaces.
func TestSignedLogMatMulExpMatchesLoop(t *testing.T) {
	const m, n, k, neg = 4, 6, 7, 3
	for _, c := range []struct {
		dt    tensor.Dtype
		shift float64
		eps   float64
	}{{tensor.Float64, 700, 0x1p-52}, {tensor.Float32, 80, 0x1p-23}} {
		for _, tr := range [][2]bool{{false, true}, {true, false}, {false, false}} {
			t.Run(fmt.Sprintf("%v/transA=%v,transB=%v", c.dt, tr[0], tr[1]), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(12, 13))
				// A[i][l] and B[l][j] in the logical (untransposed) layout.
				A, B := make([]float64, m*k), make([]float64, k*n)
				for i := range A {
					A[i] = rng.NormFloat64()
				}
				for i := range B {
					B[i] = rng.NormFloat64()
				}
				for l := k - neg; l < k; l++ { // heavier negative terms: some cancel closely
					for i := 0; i < m; i++ {
						A[i*k+l] -= 0.5
					}
				}
				for l := 0; l < k; l++ {
					A[1*k+l] += c.shift
					A[2*k+l] -= c.shift
				}
				A, B = roundTo(c.dt, A), roundTo(c.dt, B)
				w := make([]float64, m*n)
				for i := range w {
					w[i] = rng.NormFloat64()
				}
				w = roundTo(c.dt, w)
				// Stored operands: a is m×k or k×m, b is k×n or n×k.
				a, b := A, B
				ashape, bshape := []int{m, k}, []int{k, n}
				if tr[0] {
					a, ashape = transposed(A, m, k), []int{k, m}
				}
				if tr[1] {
					b, bshape = transposed(B, k, n), []int{n, k}
				}
				g := G.NewGraph()
				an := G.NewMatrix(g, c.dt, G.WithShape(ashape...), G.WithName("a"), G.WithValue(denseOf(c.dt, a, ashape[0], ashape[1])))
				bn := G.NewMatrix(g, c.dt, G.WithShape(bshape...), G.WithName("b"), G.WithValue(denseOf(c.dt, b, bshape[0], bshape[1])))
				wn := G.NewMatrix(g, c.dt, G.WithShape(m, n), G.WithName("w"), G.WithValue(denseOf(c.dt, w, m, n)))
				y := must(SignedLogMatMulExp(an, bn, tr[0], tr[1], neg))
				grads, err := Backward(must(Dot(y, wn)), an, bn)
				if err != nil {
					t.Fatal(err)
				}
				outs := G.Nodes{y, grads[0], grads[1]}
				var old *G.Node
				if !tr[0] && tr[1] {
					p := must(LogMatMulExp(must(SliceCols(an, 0, k-neg)), must(SliceCols(bn, 0, k-neg)), false, true))
					q := must(LogMatMulExp(must(SliceCols(an, k-neg, k)), must(SliceCols(bn, k-neg, k)), false, true))
					old = must(Add(p, must(Log1mExp(must(Sub(q, p))))))
					outs = append(outs, old)
				}
				runScalar(t, outs...)

				// The loop, in float64 with the shift by each entry's max term.
				wantY, cond := make([]float64, m*n), make([]float64, m*n)
				wantA, wantB := make([]float64, m*k), make([]float64, k*n)
				defined := 0
				for i := 0; i < m; i++ {
					for j := 0; j < n; j++ {
						mx := math.Inf(-1)
						for l := 0; l < k; l++ {
							mx = math.Max(mx, A[i*k+l]+B[l*n+j])
						}
						var sp, sn float64
						for l := 0; l < k; l++ {
							if e := math.Exp(A[i*k+l] + B[l*n+j] - mx); l < k-neg {
								sp += e
							} else {
								sn += e
							}
						}
						yv := mx + math.Log(sp-sn)
						wantY[i*n+j], cond[i*n+j] = yv, (sp+sn)/(sp-sn)
						if math.IsNaN(yv) {
							continue
						}
						defined++
						for l := 0; l < k; l++ {
							s := 1.0
							if l >= k-neg {
								s = -1
							}
							d := w[i*n+j] * s * math.Exp(A[i*k+l]+B[l*n+j]-yv)
							wantA[i*k+l] += d
							wantB[l*n+j] += d
						}
					}
				}
				if defined == m*n || defined < m*n/2 {
					t.Fatalf("%d of %d entries defined; want some but not all NaN", defined, m*n)
				}
				gotY := values(y)
				for i, want := range wantY {
					if math.IsNaN(want) {
						if !math.IsNaN(gotY[i]) {
							t.Errorf("y[%d] = %v, want NaN", i, gotY[i])
						}
						continue
					}
					if tol := 16 * c.eps * (1 + math.Abs(want)) * (1 + cond[i]); !(math.Abs(gotY[i]-want) <= tol) {
						t.Errorf("y[%d] = %.17g, loop %.17g", i, gotY[i], want)
					}
					if old != nil {
						o := values(old)[i]
						if tol := 16 * c.eps * (1 + math.Abs(want)) * (1 + cond[i]); !(math.Abs(gotY[i]-o) <= tol) {
							t.Errorf("y[%d] = %.17g, composite %.17g", i, gotY[i], o)
						}
					}
				}
				// Entries that are NaN contribute no gradient, in the loop as
				// in the op (LogMatMulExp's backward skips C ≤ 0).
				gotA, gotB := values(grads[0]), values(grads[1])
				if tr[0] {
					gotA = transposed(gotA, k, m)
				}
				if tr[1] {
					gotB = transposed(gotB, n, k)
				}
				maxCond := 0.0
				for _, v := range cond {
					if !math.IsNaN(v) && v > 0 {
						maxCond = math.Max(maxCond, v)
					}
				}
				gtol := 64 * c.eps * (1 + c.shift) * (1 + maxCond)
				for i := 0; i < m; i++ {
					for l := 0; l < k; l++ {
						if d := math.Abs(gotA[i*k+l] - wantA[i*k+l]); !(d <= gtol*(1+math.Abs(wantA[i*k+l]))) {
							t.Errorf("d/dA[%d,%d] = %.10g, loop %.10g", i, l, gotA[i*k+l], wantA[i*k+l])
						}
					}
				}
				for j := 0; j < n; j++ {
					for l := 0; l < k; l++ {
						if d := math.Abs(gotB[l*n+j] - wantB[l*n+j]); !(d <= gtol*(1+math.Abs(wantB[l*n+j]))) {
							t.Errorf("d/dB[%d,%d] = %.10g, loop %.10g", l, j, gotB[l*n+j], wantB[l*n+j])
						}
					}
				}
			})
		}
	}
}

// transposed returns the cols×rows transpose of the row-major rows×cols x.
func transposed(x []float64, rows, cols int) []float64 {
	out := make([]float64, len(x))
	for i := 0; i < rows; i++ {
		for j := 0; j < cols; j++ {
			out[j*rows+i] = x[i*cols+j]
		}
	}
	return out
}

// A NaN operand entry makes NaN every entry of the result it enters (its
// row of op(a), its column of op(b)), with and without negative inner
// indices, in both dtypes; the other entries stay finite.
func TestLogMatMulExpNaNOperand(t *testing.T) {
	const m, n, k = 3, 4, 5
	for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
		for _, neg := range []int{0, 2} {
			t.Run(fmt.Sprintf("%v/neg=%d", dt, neg), func(t *testing.T) {
				ops := signedLMMEOperands(false, true) // a is m×k, b is n×k: positive terms dominate
				a, b := ops[0], ops[1]
				a[1*k+3] = math.NaN() // row 1 of a
				b[2*k+0] = math.NaN() // row 2 of b: column 2 of the result
				g := G.NewGraph()
				an := G.NewMatrix(g, dt, G.WithShape(m, k), G.WithName("a"), G.WithValue(denseOf(dt, a, m, k)))
				bn := G.NewMatrix(g, dt, G.WithShape(n, k), G.WithName("b"), G.WithValue(denseOf(dt, b, n, k)))
				y := must(SignedLogMatMulExp(an, bn, false, true, neg))
				g2 := G.NewTapeMachine(g)
				defer g2.Close()
				if err := g2.RunAll(); err != nil {
					t.Fatal(err)
				}
				got := y.Value().Data()
				for i := 0; i < m; i++ {
					for j := 0; j < n; j++ {
						var v float64
						switch d := got.(type) {
						case []float64:
							v = d[i*n+j]
						case []float32:
							v = float64(d[i*n+j])
						}
						if want := i == 1 || j == 2; math.IsNaN(v) != want {
							t.Errorf("y[%d][%d] = %v; want NaN: %v", i, j, v, want)
						}
					}
				}
			})
		}
	}
}
