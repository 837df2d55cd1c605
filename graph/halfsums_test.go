package graph

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

var (
	// complexLogPairs are ComplEx's four terms for the subject and
	// relation halves (the query of the object).
	complexLogPairs = [][2]int{{0, 0}, {1, 0}, {0, 1}, {1, 1}}
	// unevenPairs leave a's half 0 unread (its gradient is zero) and read
	// b's half 0 twice.
	unevenPairs = [][2]int{{1, 0}, {1, 1}, {1, 0}}
)

var halfSumsCases = []struct {
	name         string
	rowsA, rowsB int
	pairs        [][2]int
}{
	{"complex", 3, 3, complexLogPairs},
	{"uneven", 3, 3, unevenPairs},
	{"broadcastA", 1, 4, complexLogPairs},
	{"broadcastB", 4, 1, unevenPairs},
	{"broadcastBoth", 1, 1, complexLogPairs},
}

// halfSumsProgram builds y = HalfSums(a, b, pairs) and the gradients of
// Σ w∘y in dtype dt, for matrices a, b of 2k columns and weights w.
type halfSumsProgram struct {
	y, ga, gb *G.Node
	a, b      *tensor.Dense
	run       func() error // the whole program
	fwd       func() error // y only
}

func newHalfSumsProgram(t *testing.T, dt tensor.Dtype, a, b []float64, rowsA, rowsB, k int, pairs [][2]int, w []float64) *halfSumsProgram {
	t.Helper()
	g := G.NewGraph()
	p := &halfSumsProgram{a: denseOf(dt, a, rowsA, 2*k), b: denseOf(dt, b, rowsB, 2*k)}
	an := G.NewMatrix(g, dt, G.WithShape(rowsA, 2*k), G.WithName("a"), G.WithValue(p.a))
	bn := G.NewMatrix(g, dt, G.WithShape(rowsB, 2*k), G.WithName("b"), G.WithValue(p.b))
	p.y = must(HalfSums(an, bn, pairs))
	rows, cols := max(rowsA, rowsB), k*len(pairs)
	if !p.y.Shape().Eq(tensor.Shape{rows, cols}) {
		t.Fatalf("shape %v, want (%d, %d)", p.y.Shape(), rows, cols)
	}
	wn := G.NewMatrix(g, dt, G.WithShape(rows, cols), G.WithName("w"), G.WithValue(denseOf(dt, w, rows, cols)))
	grads, err := Backward(must(Dot(p.y, wn)), an, bn)
	if err != nil {
		t.Fatal(err)
	}
	p.ga, p.gb = grads[0], grads[1]
	all, err := Compile(p.y, p.ga, p.gb)
	if err != nil {
		t.Fatal(err)
	}
	fwd, err := Compile(p.y)
	if err != nil {
		t.Fatal(err)
	}
	p.run, p.fwd = all.Run, fwd.Run
	return p
}

func values(n *G.Node) []float64 { return Float64s(n.Value().(*tensor.Dense)) }

// HalfSums and its gradients agree with plain loops over the blocks, for
// both dtypes, with either operand (or both) broadcast.
func TestHalfSumsMatchesLoop(t *testing.T) {
	const k = 5
	for _, c := range halfSumsCases {
		for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
			t.Run(fmt.Sprintf("%s/%v", c.name, dt), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(2, 3))
				rows, m := max(c.rowsA, c.rowsB), k*len(c.pairs)
				a := randDense(rng, false, c.rowsA, 2*k).Data().([]float64)
				b := randDense(rng, false, c.rowsB, 2*k).Data().([]float64)
				w := randDense(rng, false, rows, m).Data().([]float64)
				p := newHalfSumsProgram(t, dt, a, b, c.rowsA, c.rowsB, k, c.pairs, w)
				if err := p.run(); err != nil {
					t.Fatal(err)
				}
				// at reads half h of row i of x, a single row broadcast.
				at := func(x []float64, rowsX, i, h, j int) float64 {
					if rowsX == 1 {
						i = 0
					}
					return x[i*2*k+h*k+j]
				}
				wantY := make([]float64, rows*m)
				wantGA, wantGB := make([]float64, len(a)), make([]float64, len(b))
				for i := 0; i < rows; i++ {
					ia, ib := i, i
					if c.rowsA == 1 {
						ia = 0
					}
					if c.rowsB == 1 {
						ib = 0
					}
					for blk, pr := range c.pairs {
						for j := 0; j < k; j++ {
							col := i*m + blk*k + j
							wantY[col] = at(a, c.rowsA, i, pr[0], j) + at(b, c.rowsB, i, pr[1], j)
							wantGA[ia*2*k+pr[0]*k+j] += w[col]
							wantGB[ib*2*k+pr[1]*k+j] += w[col]
						}
					}
				}
				tol := 1e-12
				if dt == tensor.Float32 {
					tol = 1e-5
				}
				for _, r := range []struct {
					what      string
					got, want []float64
				}{{"output", values(p.y), wantY}, {"gradient of a", values(p.ga), wantGA}, {"gradient of b", values(p.gb), wantGB}} {
					if len(r.got) != len(r.want) {
						t.Fatalf("%s: %d values, want %d", r.what, len(r.got), len(r.want))
					}
					for i := range r.want {
						if math.Abs(r.got[i]-r.want[i]) > tol*(1+math.Abs(r.want[i])) {
							t.Fatalf("%s %d = %v, want %v", r.what, i, r.got[i], r.want[i])
						}
					}
				}
			})
		}
	}
}

// In float32 too, the gradients match central differences of Σ w∘y (y
// from the float32 op, the sum in float64). TestGradients checks float64.
func TestHalfSumsGradientFloat32(t *testing.T) {
	const k, h = 4, 1e-2
	for _, c := range halfSumsCases {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(4, 5))
			rows, m := max(c.rowsA, c.rowsB), k*len(c.pairs)
			a := randDense(rng, false, c.rowsA, 2*k).Data().([]float64)
			b := randDense(rng, false, c.rowsB, 2*k).Data().([]float64)
			w := randDense(rng, false, rows, m).Data().([]float64)
			p := newHalfSumsProgram(t, tensor.Float32, a, b, c.rowsA, c.rowsB, k, c.pairs, w)
			if err := p.run(); err != nil {
				t.Fatal(err)
			}
			analytic := [][]float64{values(p.ga), values(p.gb)}
			cost := func() float64 {
				if err := p.fwd(); err != nil {
					t.Fatal(err)
				}
				var s float64
				for i, y := range values(p.y) {
					s += w[i] * y
				}
				return s
			}
			for pi, x := range []*tensor.Dense{p.a, p.b} {
				checkCentralDiff32(t, string(rune('a'+pi)), x.Data().([]float32), analytic[pi], cost, h, 1e-3)
			}
		})
	}
}

func TestHalfSumsRejectsBadInput(t *testing.T) {
	g := G.NewGraph()
	odd := G.NewMatrix(g, tensor.Float64, G.WithShape(2, 3), G.WithName("odd"))
	even := G.NewMatrix(g, tensor.Float64, G.WithShape(2, 4), G.WithName("even"))
	other := G.NewMatrix(g, tensor.Float64, G.WithShape(3, 4), G.WithName("other"))
	wide := G.NewMatrix(g, tensor.Float64, G.WithShape(2, 6), G.WithName("wide"))
	vec := G.NewVector(g, tensor.Float64, G.WithShape(4), G.WithName("vec"))
	for _, c := range []struct {
		name  string
		a, b  *G.Node
		pairs [][2]int
	}{
		{"odd columns", odd, odd, complexLogPairs},
		{"rows do not broadcast", even, other, complexLogPairs},
		{"columns differ", even, wide, complexLogPairs},
		{"vector", vec, even, complexLogPairs},
		{"nil operand", nil, even, complexLogPairs},
		{"no pairs", even, even, nil},
		{"half 2", even, even, [][2]int{{0, 2}}},
		{"half -1", even, even, [][2]int{{-1, 0}}},
	} {
		if _, err := HalfSums(c.a, c.b, c.pairs); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
}
