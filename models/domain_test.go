package models

import (
	"math"
	"math/rand/v2"
	"testing"

	"gekc/graph"

	G "gorgonia.org/gorgonia"
)

// tinyDomain types the 7 entities of tinySizes with 3 types; relations 0
// and 1 share the pair (0, 1), relation 2 goes from type 2 to type 0.
func tinyDomain(t testing.TB) *Domain {
	d, err := NewDomain([]int32{0, 0, 1, 1, 2, 2, 0}, []int32{0, 0, 2}, []int32{1, 1, 0}, 3)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func refUnnormK(m *Model, d *Domain, s, r, o int) float64 {
	if !d.Consistent(s, r, o) {
		return 0
	}
	return refUnnorm(m, s, r, o)
}

// TestConstrainedQueriesMatchBruteForce checks every query of every GeKC
// multiplied by a domain constraint against enumeration over only the
// consistent triples.
func TestConstrainedQueriesMatchBruteForce(t *testing.T) {
	d := tinyDomain(t)
	for _, name := range Names() {
		m := newTiny(t, name, 17)
		g := G.NewGraph()
		c, err := m.BindConstrained(g, d)
		if m.Semantics == Energy {
			if err == nil {
				t.Errorf("%s: constrained energy model accepted", name)
			}
			continue
		}
		t.Run(name, func(t *testing.T) {
			if err != nil {
				t.Fatal(err)
			}
			sz := m.Sizes
			S, R, O := allTriples(sz)
			b := newBatch(t, g, c, S, R, O)
			ls, err := c.LogScore(b)
			if err != nil {
				t.Fatal(err)
			}
			logZ, err := c.LogPartition()
			if err != nil {
				t.Fatal(err)
			}
			relMarg, err := c.RelationLogMarginals()
			if err != nil {
				t.Fatal(err)
			}
			outs := G.Nodes{ls, logZ, relMarg}
			var marg, cond, cand [3]*G.Node
			for _, v := range Vars {
				if marg[v], err = c.LogMarginal(b, v); err != nil {
					t.Fatal(err)
				}
				if cond[v], err = c.LogConditional(b, v); err != nil {
					t.Fatal(err)
				}
				if cand[v], err = c.Candidates(b, v); err != nil {
					t.Fatal(err)
				}
				outs = append(outs, marg[v], cond[v], cand[v])
			}
			run(t, outs...)
			var Z float64
			relZ := make([]float64, sz.Relations)
			for i := range S {
				u := refUnnormK(m, d, S[i], R[i], O[i])
				Z += u
				relZ[R[i]] += u
			}
			if got := vec(logZ)[0]; !close(got, math.Log(Z)) {
				t.Errorf("log Z_K = %.12g, brute force %.12g", got, math.Log(Z))
			}
			for r, z := range relZ {
				if got := vec(relMarg)[r]; !close(got, math.Log(z)) {
					t.Errorf("log Σ_{s,o} φc_K(s,%d,o) = %.12g, brute force %.12g", r, got, math.Log(z))
				}
			}
			lsv := vec(ls)
			for i := range S {
				tr := [3]int{S[i], R[i], O[i]}
				consistent := d.Consistent(tr[0], tr[1], tr[2])
				want := math.Log(refUnnormK(m, d, tr[0], tr[1], tr[2]))
				if consistent && !close(lsv[i], want) || !consistent && !math.IsInf(lsv[i], -1) {
					t.Fatalf("log φc_K%v = %.12g, brute force %.12g", tr, lsv[i], want)
				}
				for _, v := range Vars {
					dom := sz.Entities
					if v == Relation {
						dom = sz.Relations
					}
					var sum float64
					row := vec(cand[v])[i*dom : (i+1)*dom]
					for x := 0; x < dom; x++ {
						alt := tr
						alt[v] = x
						u := refUnnormK(m, d, alt[0], alt[1], alt[2])
						sum += u
						// A candidate may violate the constraint through the
						// other slots only; only the ranked slot is masked.
						okV := true
						switch v {
						case Subject:
							okV = d.EntityType[x] == d.SubjectType[tr[1]]
						case Object:
							okV = d.EntityType[x] == d.ObjectType[tr[1]]
						default:
							okV = d.EntityType[tr[0]] == d.SubjectType[x] && d.EntityType[tr[2]] == d.ObjectType[x]
						}
						if okV != !math.IsInf(row[x], -1) {
							t.Fatalf("candidate %v=%d of %v: score %v, admissible %v", v, x, tr, row[x], okV)
						}
						if okV && u > 0 && !close(row[x], math.Log(u)) {
							t.Fatalf("candidate %v=%d of %v: %.12g, brute force %.12g", v, x, tr, row[x], math.Log(u))
						}
					}
					if !consistent {
						continue
					}
					if got := vec(marg[v])[i]; !close(got, math.Log(sum)) {
						t.Fatalf("log Σ_%v φc_K at %v = %.12g, brute force %.12g", v, tr, got, math.Log(sum))
					}
					if got := vec(cond[v])[i]; !close(got, want-math.Log(sum)) {
						t.Fatalf("log p_K(%v | rest) at %v = %.12g, brute force %.12g", v, tr, got, want-math.Log(sum))
					}
				}
			}
		})
	}
}

func TestConstrainedGradients(t *testing.T) {
	d := tinyDomain(t)
	for _, name := range Names() {
		if _, sem, _ := Lookup(name); sem == Energy {
			continue // cannot be constrained
		}
		t.Run(name, func(t *testing.T) {
			m := newTiny(t, name, 19)
			g := G.NewGraph()
			c, err := m.BindConstrained(g, d)
			if err != nil {
				t.Fatal(err)
			}
			// consistent triples only, as in training
			S, R, O := []int{0, 1, 4, 6}, []int{0, 1, 2, 0}, []int{2, 3, 6, 3}
			b := newBatch(t, g, c, S, R, O)
			var cost *G.Node
			for _, v := range Vars {
				lc, err := c.LogConditional(b, v)
				if err != nil {
					t.Fatal(err)
				}
				sum, err := graph.Sum(lc)
				if err != nil {
					t.Fatal(err)
				}
				if cost == nil {
					cost = sum
				} else if cost, err = graph.Add(cost, sum); err != nil {
					t.Fatal(err)
				}
			}
			z, err := c.LogPartition()
			if err != nil {
				t.Fatal(err)
			}
			if cost, err = graph.Add(cost, z); err != nil {
				t.Fatal(err)
			}
			checkModelGradients(t, m, c, cost)
		})
	}
}

func TestConstrainedSamplerNeverViolates(t *testing.T) {
	d := tinyDomain(t)
	for _, name := range []string{"cp2", "complex2", "complex+", "tucker+"} {
		m := newTiny(t, name, 23)
		s, err := NewConstrainedSampler(m, d, 1000)
		if err != nil {
			t.Fatal(err)
		}
		samples, err := s.Sample(gofSamples, rand.New(rand.NewPCG(6, 6)))
		if err != nil {
			t.Fatal(err)
		}
		for _, tr := range samples {
			if !d.Consistent(int(tr.S), int(tr.R), int(tr.O)) {
				t.Fatalf("%s: sampled inconsistent triple %v", name, tr)
			}
		}
		if p := chiSquareK(t, m, d, samples); p <= 1e-3 {
			t.Errorf("%s: constrained sampler χ² p-value %.3g", name, p)
		}
	}
}
