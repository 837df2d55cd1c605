package models

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"gekc/graph"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// moduli are, per score function whose rows pack the parts of one number
// (ComplEx's [re | im], QuatE's four), how many parts: each score's
// _test.go declares its own beside its reference φ, rather than the test
// reading ModulusParts, so that a missing or wrong hook is caught.
var moduli = map[string]int{}

// LpPenalty is, for every energy and squared model, the sum over a
// triple's three parameter rows of |entry|^p, the entries of a number of
// several parts (moduli) by its modulus.
func TestLpPenaltyMatchesRows(t *testing.T) {
	S, R, O := []int{0, 3, 6, 2}, []int{1, 0, 2, 1}, []int{5, 3, 0, 6}
	for _, name := range Names() {
		base, sem, err := Lookup(name)
		if err != nil || sem == NonNegative {
			continue
		}
		for _, p := range []float64{2, 3} {
			m := newTiny(t, name, 5)
			g := G.NewGraph()
			c := m.Bind(g)
			b := newBatch(t, g, c, S, R, O)
			pen, err := c.LpPenalty(b, p)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			run(t, pen)
			got := vec(pen)
			for i := range S {
				want := 0.0
				for _, v := range Vars {
					row := [3]int{S[i], R[i], O[i]}[v]
					tab := m.Param(m.Layout.TableOf(v))
					cols := tab.Shape()[1]
					x := tab.Data().([]float64)[row*cols : (row+1)*cols]
					if n := moduli[base.Name()]; n > 1 {
						k := cols / n
						for j := range k {
							var sq float64
							for part := range n {
								sq += x[part*k+j] * x[part*k+j]
							}
							want += math.Pow(math.Sqrt(sq), p)
						}
						continue
					}
					for _, xj := range x {
						want += math.Pow(math.Abs(xj), p)
					}
				}
				if !close(got[i], want) {
					t.Errorf("%s, p = %g, triple %d: penalty %.12g, want %.12g", name, p, i, got[i], want)
				}
			}
		}
	}
}

func TestLpPenaltyRefusesNonNegativeModels(t *testing.T) {
	m := newTiny(t, "complex+", 1)
	g := G.NewGraph()
	c := m.Bind(g)
	b, err := c.NewBatch(intNode(g, "s", []int{0}), intNode(g, "r", []int{0}), intNode(g, "o", []int{1}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.LpPenalty(b, 3); err == nil || !strings.Contains(err.Error(), "log-values") {
		t.Errorf("complex+: %v, want a refusal naming its log-values", err)
	}
}

// The penalties' gradients, beside a conditional that reads the same
// gathered rows, match finite differences for every energy and squared
// model, unconstrained and (squared) constrained.
func TestLpPenaltyGradients(t *testing.T) {
	for _, name := range Names() {
		_, sem, err := Lookup(name)
		if err != nil || sem == NonNegative {
			continue
		}
		for _, constrained := range []bool{false, true} {
			if constrained && sem == Energy {
				continue
			}
			t.Run(fmt.Sprintf("%s/constrained=%v", name, constrained), func(t *testing.T) {
				m := newTiny(t, name, 9)
				g := G.NewGraph()
				c := m.Bind(g)
				if constrained {
					if c, err = m.BindConstrained(g, tinyDomain(t)); err != nil {
						t.Fatal(err)
					}
				}
				S, R, O := []int{0, 3, 6, 2}, []int{1, 0, 2, 1}, []int{5, 3, 0, 6}
				b := newBatch(t, g, c, S, R, O)
				w := G.NewVector(g, tensor.Float64, G.WithShape(4), G.WithName("w"),
					G.WithValue(tensor.New(tensor.WithShape(4), tensor.WithBacking([]float64{0.5, 0.25, 0.25, 0}))))
				var e graph.Builder
				cost := e.AddAll(
					e.Dot(e.Use(c.LogConditional(b, Object)), w),
					e.Scale(e.Dot(e.Use(c.LpPenalty(b, 3)), w), 0.3),
					e.Scale(e.Dot(e.Use(c.LpPenalty(b, 2)), w), 0.2))
				if err := e.Err(); err != nil {
					t.Fatal(err)
				}
				checkModelGradients(t, m, c, cost)
			})
		}
	}
}
