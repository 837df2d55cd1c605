package models

import (
	"math"
	"math/rand/v2"
	"testing"

	"gekc/graph"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestGradientsMatchFiniteDifferences differentiates, for every model, a
// cost touching every query (the three log-conditionals, the log-score and,
// when tractable, log Z) and compares with central differences.
func TestGradientsMatchFiniteDifferences(t *testing.T) {
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			m := newTiny(t, name, 5)
			g := G.NewGraph()
			c := m.Bind(g)
			rng := rand.New(rand.NewPCG(2, 3))
			var S, R, O []int
			for i := 0; i < 6; i++ {
				S, R, O = append(S, rng.IntN(7)), append(R, rng.IntN(3)), append(O, rng.IntN(7))
			}
			b := newBatch(t, g, c, S, R, O)
			w := G.NewVector(g, tensor.Float64, G.WithShape(6), G.WithName("w"),
				G.WithValue(tensor.New(tensor.WithShape(6), tensor.WithBacking([]float64{0.3, -0.2, 0.5, 0.1, 0.7, -0.4}))))
			terms := G.Nodes{}
			ls, err := c.LogScore(b)
			if err != nil {
				t.Fatal(err)
			}
			terms = append(terms, ls)
			for _, v := range Vars {
				lc, err := c.LogConditional(b, v)
				if err != nil {
					t.Fatal(err)
				}
				terms = append(terms, lc)
			}
			var cost *G.Node
			for _, term := range terms {
				d, err := graph.Dot(term, w)
				if err != nil {
					t.Fatal(err)
				}
				if cost == nil {
					cost = d
				} else if cost, err = graph.Add(cost, d); err != nil {
					t.Fatal(err)
				}
			}
			if z, err := c.LogPartition(); err == nil {
				if cost, err = graph.Add(cost, z); err != nil {
					t.Fatal(err)
				}
			}
			checkModelGradients(t, m, c, cost)
		})
	}
}

// checkModelGradients compares Backward's gradients of cost with respect to
// every parameter of m with central differences.
func checkModelGradients(t *testing.T, m *Model, c *Circuit, cost *G.Node) {
	t.Helper()
	grads, err := graph.Backward(cost, c.Params()...)
	if err != nil {
		t.Fatal(err)
	}
	prog, err := graph.Compile(append(G.Nodes{cost}, grads...)...)
	if err != nil {
		t.Fatal(err)
	}
	fwd, err := graph.Compile(cost)
	if err != nil {
		t.Fatal(err)
	}
	if err := prog.Run(); err != nil {
		t.Fatal(err)
	}
	eval := func() float64 {
		if err := fwd.Run(); err != nil {
			t.Fatal(err)
		}
		return vec(cost)[0]
	}
	const h = 1e-6
	for pi, pn := range m.ParamNames() {
		an := append([]float64(nil), grads[pi].Value().Data().([]float64)...)
		x := m.Param(pn).Data().([]float64)
		for j := range x {
			old := x[j]
			x[j] = old + h
			up := eval()
			x[j] = old - h
			down := eval()
			x[j] = old
			num := (up - down) / (2 * h)
			if math.Abs(num-an[j]) > 1e-5*math.Max(1, math.Abs(num)) {
				t.Fatalf("∂cost/∂%s[%d]: analytic %.9g, numeric %.9g", pn, j, an[j], num)
			}
		}
	}
}
