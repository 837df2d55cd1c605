package graph

import (
	"math"
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// BackwardFrom seeded with U equals Backward of the scalar ⟨U, out⟩, for
// a Gram matrix and for column log-sum-exps; and the Gram's program does
// not compute the Gram again.
func TestBackwardFromMatchesBackwardOfInnerProduct(t *testing.T) {
	fill := func(n int, seed uint64) []float64 { // the same values for the same seed
		rng := rand.New(rand.NewPCG(seed, 1))
		x := make([]float64, n)
		for i := range x {
			x[i] = rng.NormFloat64()
		}
		return x
	}
	for _, c := range []struct {
		name string
		op   func(*G.Node) (*G.Node, error)
	}{{"gram", Gram}, {"col-log-sum-exp", ColLogSumExp}} {
		xs := fill(7*3, 3)
		grads := make([][]float64, 2)
		for i, seeded := range []bool{false, true} {
			g := G.NewGraph()
			x := G.NewMatrix(g, tensor.Float64, G.WithShape(7, 3), G.WithName("x"), G.WithValue(tensor.New(tensor.WithShape(7, 3), tensor.WithBacking(xs))))
			out, err := c.op(x)
			if err != nil {
				t.Fatal(err)
			}
			us := fill(out.Shape().TotalSize(), 5)
			up := G.NewMatrix(g, tensor.Float64, G.WithShape(out.Shape()...), G.WithName("u"), G.WithValue(tensor.New(tensor.WithShape(out.Shape()...), tensor.WithBacking(us))))
			var gr G.Nodes
			if seeded {
				gr, err = BackwardFrom(out, up, x)
			} else {
				var e Builder
				cost := e.Sum(e.Mul(up, out))
				if err := e.Err(); err != nil {
					t.Fatal(err)
				}
				gr, err = Backward(cost, x)
			}
			if err != nil {
				t.Fatal(err)
			}
			if seeded && c.name == "gram" {
				for _, n := range g.ExactSubgraphRoots(gr[0]).AllNodes() {
					if n == out {
						t.Errorf("the Gram's gradient program computes the Gram")
					}
				}
			}
			prog, err := Compile(gr[0])
			if err != nil {
				t.Fatal(err)
			}
			if err := prog.Run(); err != nil {
				t.Fatal(err)
			}
			grads[i] = append([]float64(nil), Float64s(gr[0].Value())...)
		}
		for j := range grads[0] {
			if math.Abs(grads[0][j]-grads[1][j]) > 1e-12*math.Max(1, math.Abs(grads[0][j])) {
				t.Fatalf("%s: entry %d: %g seeded, %g from the inner product", c.name, j, grads[1][j], grads[0][j])
			}
		}
	}
	g := G.NewGraph()
	x := G.NewMatrix(g, tensor.Float64, G.WithShape(2, 2), G.WithName("x"))
	wrong := G.NewMatrix(g, tensor.Float64, G.WithShape(3, 3), G.WithName("u"))
	out, _ := Gram(x)
	if _, err := BackwardFrom(out, wrong, x); err == nil {
		t.Error("an upstream of another shape was accepted")
	}
}
