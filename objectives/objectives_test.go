package objectives_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gekc/graph"
	"gekc/models"
	"gekc/objectives"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// bruteLogP returns log p(s,r,o) of every triple by enumeration, reading
// the model's own log-scores (whose exactness the models tests establish).
func enumerate(t *testing.T, m *models.Model) (logp []float64, S, R, O []int) {
	sz := m.Sizes
	for i := 0; i < sz.Entities; i++ {
		for j := 0; j < sz.Relations; j++ {
			for k := 0; k < sz.Entities; k++ {
				S, R, O = append(S, i), append(R, j), append(O, k)
			}
		}
	}
	g := G.NewGraph()
	c := m.Bind(g)
	b, err := c.NewBatch(ints(g, "s", S), ints(g, "r", R), ints(g, "o", O))
	if err != nil {
		t.Fatal(err)
	}
	ls, err := c.LogScore(b)
	if err != nil {
		t.Fatal(err)
	}
	p, err := graph.Compile(ls)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Run(); err != nil {
		t.Fatal(err)
	}
	logp = append([]float64(nil), ls.Value().Data().([]float64)...)
	lz := math.Inf(-1)
	for _, v := range logp {
		lz = math.Max(lz, v) + math.Log1p(math.Exp(-math.Abs(lz-v)))
	}
	for i := range logp {
		logp[i] -= lz
	}
	return logp, S, R, O
}

func ints(g *G.ExprGraph, name string, v []int) *G.Node {
	return G.NewVector(g, tensor.Int, G.WithShape(len(v)), G.WithName(name),
		G.WithValue(tensor.New(tensor.WithShape(len(v)), tensor.WithBacking(append([]int(nil), v...)))))
}

func TestLossesMatchEnumeration(t *testing.T) {
	sz := models.Sizes{Entities: 5, Relations: 2, Rank: 3}
	w := objectives.Weights{Subject: 0.5, Relation: 2, Object: 1}
	for _, name := range []string{"cp", "complex", "cp+", "complex+", "cp2", "complex2", "rescal2", "tucker+"} {
		t.Run(name, func(t *testing.T) {
			m, err := models.New(name, sz, models.Options{Seed: 3, Dtype: tensor.Float64, InitScale: 0.5})
			if err != nil {
				t.Fatal(err)
			}
			logp, S, R, O := enumerate(t, m)
			index := func(s, r, o int) int { return (s*sz.Relations+r)*sz.Entities + o }
			rng := rand.New(rand.NewPCG(1, 1))
			var bs, br, bo []int
			for i := 0; i < 4; i++ {
				k := rng.IntN(len(S))
				bs, br, bo = append(bs, S[k]), append(br, R[k]), append(bo, O[k])
			}
			// Two real triples and padding weighted zero.
			weights := []float64{0.25, 0.25, 0.5, 0}
			// Brute-force conditionals from the joint.
			cond := func(v, i int) float64 {
				tr := [3]int{bs[i], br[i], bo[i]}
				dom := sz.Entities
				if v == 1 {
					dom = sz.Relations
				}
				num := logp[index(tr[0], tr[1], tr[2])]
				den := math.Inf(-1)
				for x := 0; x < dom; x++ {
					a := tr
					a[v] = x
					l := logp[index(a[0], a[1], a[2])]
					den = math.Max(den, l) + math.Log1p(math.Exp(-math.Abs(den-l)))
				}
				return num - den
			}
			var wantPLL, wantMLE float64
			for i := range bs {
				wantPLL -= weights[i] * (w.Subject*cond(0, i) + w.Relation*cond(1, i) + w.Object*cond(2, i))
				wantMLE -= weights[i] * logp[index(bs[i], br[i], bo[i])]
			}
			var pen2, pen3 float64 // Σ_i w_i Σ_v ‖x_v‖_p^p
			for i := range bs {
				pen2 += weights[i] * rowPenalty(m, bs[i], br[i], bo[i], 2)
				pen3 += weights[i] * rowPenalty(m, bs[i], br[i], bo[i], 3)
			}
			want := map[string]float64{"pll": wantPLL, "mle": wantMLE,
				"pll+n3+f2": wantPLL + 0.3*pen3 + 0.2*pen2, "mle+n3": wantMLE + 0.1*pen3}
			for _, obj := range []objectives.Objective{objectives.PLL{Weights: w}, objectives.MLE{},
				objectives.Regularized{Objective: objectives.PLL{Weights: w}, N3: 0.3, F2: 0.2},
				objectives.Regularized{Objective: objectives.MLE{}, N3: 0.1}} {
				label := obj.Name()
				if r, ok := obj.(objectives.Regularized); ok {
					label += map[bool]string{true: "+n3"}[r.N3 > 0] + map[bool]string{true: "+f2"}[r.F2 > 0]
				}
				g := G.NewGraph()
				c := m.Bind(g)
				b, err := c.NewBatch(ints(g, "s", bs), ints(g, "r", br), ints(g, "o", bo))
				if err != nil {
					t.Fatal(err)
				}
				wn := G.NewVector(g, tensor.Float64, G.WithShape(4), G.WithName("w"),
					G.WithValue(tensor.New(tensor.WithShape(4), tensor.WithBacking(weights))))
				loss, err := obj.Loss(c, b, wn)
				if m.Semantics == models.Energy && obj.Name() == "mle" {
					if !errors.Is(err, models.ErrIntractable) {
						t.Fatalf("energy MLE: got %v, want ErrIntractable", err)
					}
					continue
				}
				if _, ok := obj.(objectives.Regularized); ok && m.Semantics == models.NonNegative {
					if err == nil {
						t.Errorf("%s of a non-negative model: no error", label)
					}
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				p, err := graph.Compile(loss)
				if err != nil {
					t.Fatal(err)
				}
				if err := p.Run(); err != nil {
					t.Fatal(err)
				}
				got := float64(*loss.Value().(*G.F64))
				if want := want[label]; math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
					t.Errorf("%s loss = %.12g, enumeration %.12g", label, got, want)
				}
			}
		})
	}
}

func TestRegularizedNeedsAnObjective(t *testing.T) {
	m, err := models.New("cp2", models.Sizes{Entities: 3, Relations: 1, Rank: 2}, models.Options{Dtype: tensor.Float64})
	if err != nil {
		t.Fatal(err)
	}
	g := G.NewGraph()
	c := m.Bind(g)
	b, err := c.NewBatch(ints(g, "s", []int{0}), ints(g, "r", []int{0}), ints(g, "o", []int{1}))
	if err != nil {
		t.Fatal(err)
	}
	w := G.NewVector(g, tensor.Float64, G.WithShape(1), G.WithName("w"), G.WithValue(tensor.New(tensor.WithShape(1), tensor.WithBacking([]float64{1}))))
	for _, r := range []objectives.Regularized{{N3: 0.1}, {Objective: objectives.MLE{}, F2: -1}, {Objective: objectives.MLE{}, N3: math.NaN()}} {
		if _, err := r.Loss(c, b, w); err == nil {
			t.Errorf("%+v: no error", r)
		}
	}
	if _, err := (objectives.Regularized{Objective: objectives.MLE{}, N3: 0.1}).Loss(c, b, w); err != nil {
		t.Errorf("a valid regularised MLE: %v", err)
	}
}

// rowPenalty is Σ_v Σ_j |x_{v,j}|^p over the rows of triple (s, r, o) in
// the model's tables, ComplEx's [re | im] entries by their complex modulus.
func rowPenalty(m *models.Model, s, r, o int, p float64) float64 {
	var sum float64
	for _, slot := range []struct {
		table string
		row   int
	}{{m.Layout.Subject, s}, {m.Layout.Relation, r}, {m.Layout.Object, o}} {
		t := m.Param(slot.table)
		cols := t.Shape()[1]
		x := t.Data().([]float64)[slot.row*cols : (slot.row+1)*cols]
		if strings.HasPrefix(m.Name, "complex") {
			for j := range cols / 2 {
				sum += math.Pow(math.Hypot(x[j], x[cols/2+j]), p)
			}
			continue
		}
		for _, v := range x {
			sum += math.Pow(math.Abs(v), p)
		}
	}
	return sum
}
