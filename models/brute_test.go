package models

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"testing"

	"gekc/graph"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// tinySizes is small enough to enumerate all |E|²|R| triples.
var tinySizes = Sizes{Entities: 7, Relations: 3, Rank: 3, RelationRank: 2}

// newTiny builds a float64 model and replaces its parameters by N(0,1)
// draws, so squared models see negative values and non-negative ones see
// log-values of every magnitude.
func newTiny(t testing.TB, name string, seed uint64) *Model {
	t.Helper()
	m, err := New(name, tinySizes, Options{Seed: seed, Dtype: tensor.Float64})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 42))
	for _, n := range m.ParamNames() {
		x := m.Param(n).Data().([]float64)
		for i := range x {
			x[i] = rng.NormFloat64()
		}
	}
	return m
}

// TestMain refuses to run the suite while a registered score function has
// no brute-force reference: every test of it would be meaningless, so the
// binary fails at once with what to do, instead of panicking in the first
// test that needs one.
func TestMain(m *testing.M) {
	var missing []string
	for _, name := range Names() {
		base, sem, err := Lookup(name)
		if err == nil && sem == Energy {
			if _, ok := references[base.Name()]; !ok {
				missing = append(missing, base.Name())
			}
		}
	}
	if len(missing) > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: no brute-force reference for score function %s: register a plain-Go φ in its _test.go file, "+
			"e.g. func init() { references[%q] = refX } (see cp_test.go)\n", strings.Join(missing, ", "), missing[0])
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// refScore is an independent plain-Go evaluation of φ(s,r,o) in linear
// space, from the parameter tensors and the paper's definitions: the
// reference its score function's own _test.go file registers.
func refScore(m *Model, s, r, o int) float64 {
	base, _, _ := Lookup(m.Name)
	return references[base.Name()](refParams{m}, s, r, o) // TestMain checked it is there
}

// references maps a score function's name to its plain-Go φ; each score's
// _test.go file adds its own in init, so a new score function brings its
// reference with it.
var references = map[string]func(p refParams, s, r, o int) float64{}

// refParams reads a tiny float64 model's parameters for a reference φ.
type refParams struct{ m *Model }

// table returns the named parameter table.
func (p refParams) table(name string) []float64 { return p.m.Param(name).Data().([]float64) }

// val maps a parameter to its input-unit value: exp of the stored log-value
// for a non-negative model, the value itself otherwise.
func (p refParams) val(x float64) float64 {
	if p.m.Semantics == NonNegative {
		return math.Exp(x)
	}
	return x
}

// rank and relRank are d and d_r.
func (p refParams) rank() int    { return p.m.Sizes.Rank }
func (p refParams) relRank() int { return p.m.Sizes.relRank() }

// refUnnorm is the unnormalised probability of a triple under the model's
// semantics (exp φ, φ² + ε, or φ ≥ 0).
func refUnnorm(m *Model, s, r, o int) float64 {
	phi := refScore(m, s, r, o)
	switch m.Semantics {
	case Energy:
		return math.Exp(phi)
	case Squared:
		n := float64(m.Sizes.Entities)
		return phi*phi + m.EpsMass/(n*n*float64(m.Sizes.Relations))
	}
	return phi
}

// newBatch binds the index vectors S, R, O as a batch of c in g.
func newBatch(t testing.TB, g *G.ExprGraph, c *Circuit, S, R, O []int) *Batch {
	t.Helper()
	b, err := c.NewBatch(intNode(g, "s", S), intNode(g, "r", R), intNode(g, "o", O))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// allTriples returns index vectors enumerating E×R×E.
func allTriples(sz Sizes) (s, r, o []int) {
	for i := 0; i < sz.Entities; i++ {
		for j := 0; j < sz.Relations; j++ {
			for k := 0; k < sz.Entities; k++ {
				s, r, o = append(s, i), append(r, j), append(o, k)
			}
		}
	}
	return
}

func intNode(g *G.ExprGraph, name string, v []int) *G.Node {
	return G.NewVector(g, tensor.Int, G.WithShape(len(v)), G.WithName(name),
		G.WithValue(tensor.New(tensor.WithShape(len(v)), tensor.WithBacking(append([]int(nil), v...)))))
}

func run(t testing.TB, outs ...*G.Node) {
	t.Helper()
	p, err := graph.Compile(outs...)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Run(); err != nil {
		t.Fatal(err)
	}
}

func vec(n *G.Node) []float64 {
	switch v := n.Value().(type) {
	case *G.F64:
		return []float64{float64(*v)}
	}
	return n.Value().Data().([]float64)
}

func close(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

// TestQueriesMatchBruteForce checks every query of every registered model
// against enumeration over all triples.
func TestQueriesMatchBruteForce(t *testing.T) {
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			m := newTiny(t, name, 11)
			sz := m.Sizes
			g := G.NewGraph()
			c := m.Bind(g)
			S, R, O := allTriples(sz)
			b := newBatch(t, g, c, S, R, O)
			ls, err := c.LogScore(b)
			if err != nil {
				t.Fatal(err)
			}
			outs := G.Nodes{ls}
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
			logZ, zerr := c.LogPartition()
			if m.Semantics == Energy {
				if !errors.Is(zerr, ErrIntractable) {
					t.Fatalf("energy model partition: got %v, want ErrIntractable", zerr)
				}
			} else if zerr != nil {
				t.Fatal(zerr)
			} else {
				outs = append(outs, logZ)
			}
			run(t, outs...)

			var Z float64
			for i := range S {
				Z += refUnnorm(m, S[i], R[i], O[i])
			}
			if m.Semantics != Energy {
				if got := vec(logZ)[0]; !close(got, math.Log(Z)) {
					t.Errorf("log Z = %.12g, brute force %.12g", got, math.Log(Z))
				}
			}
			lsv := vec(ls)
			for i := range S {
				tr := [3]int{S[i], R[i], O[i]}
				want := math.Log(refUnnorm(m, tr[0], tr[1], tr[2]))
				if !close(lsv[i], want) {
					t.Fatalf("log φ%v = %.12g, brute force %.12g", tr, lsv[i], want)
				}
				for _, v := range Vars {
					dom := sz.Entities
					if v == Relation {
						dom = sz.Relations
					}
					var sum float64
					candRow := vec(cand[v])[i*dom : (i+1)*dom]
					for x := 0; x < dom; x++ {
						alt := tr
						alt[v] = x
						u := refUnnorm(m, alt[0], alt[1], alt[2])
						sum += u
						if !close(candRow[x], math.Log(u)) {
							t.Fatalf("candidate %v=%d of %v: %.12g, brute force %.12g", v, x, tr, candRow[x], math.Log(u))
						}
					}
					if got := vec(marg[v])[i]; !close(got, math.Log(sum)) {
						t.Fatalf("log Σ_%v φ at %v = %.12g, brute force %.12g", v, tr, got, math.Log(sum))
					}
					if got := vec(cond[v])[i]; !close(got, want-math.Log(sum)) {
						t.Fatalf("log p(%v | rest) at %v = %.12g, brute force %.12g", v, tr, got, want-math.Log(sum))
					}
				}
			}
			// Conditionals sum to one over each slot's domain.
			for i := 0; i < len(S); i += 17 {
				for _, v := range Vars {
					dom := sz.Entities
					if v == Relation {
						dom = sz.Relations
					}
					var p float64
					row := vec(cand[v])[i*dom : (i+1)*dom]
					for _, x := range row {
						p += math.Exp(x - vec(marg[v])[i])
					}
					if math.Abs(p-1) > 1e-12 {
						t.Fatalf("Σ p(%v | rest) = %.15g at triple %d", v, p, i)
					}
				}
			}
		})
	}
}

// RelationLogMarginals (one graph for all relations) and
// RelationMarginals (squared models: one run per relation, the entity Gram
// matrices passed in) against enumeration; the latter again after every
// parameter changed, so that its Gram inputs are not stale.
func TestRelationLogMarginalsMatchBruteForce(t *testing.T) {
	for _, name := range Names() {
		m := newTiny(t, name, 13)
		g := G.NewGraph()
		c := m.Bind(g)
		lr, err := c.RelationLogMarginals()
		rm, rmErr := c.NewRelationMarginals()
		if m.Semantics == Energy {
			if !errors.Is(err, ErrIntractable) || !errors.Is(rmErr, ErrIntractable) {
				t.Errorf("%s: got %v and %v, want ErrIntractable", name, err, rmErr)
			}
			continue
		}
		if err != nil || rmErr != nil {
			t.Fatalf("%s: %v, %v", name, err, rmErr)
		}
		want := func() []float64 {
			out := make([]float64, m.Sizes.Relations)
			for r := range out {
				var sum float64
				for s := 0; s < m.Sizes.Entities; s++ {
					for o := 0; o < m.Sizes.Entities; o++ {
						sum += refUnnorm(m, s, r, o)
					}
				}
				out[r] = math.Log(sum)
			}
			return out
		}
		check := func(what string, got, want []float64) {
			t.Helper()
			if len(got) != len(want) {
				t.Fatalf("%s: %s has %d values, want %d", name, what, len(got), len(want))
			}
			for r := range want {
				if !close(got[r], want[r]) {
					t.Errorf("%s: %s: log Σ_{s,o} φ(s,%d,o) = %.12g, brute force %.12g", name, what, r, got[r], want[r])
				}
			}
		}
		run(t, lr)
		w := want()
		check("RelationLogMarginals", vec(lr), w)
		got, err := rm.Values()
		if err != nil {
			t.Fatal(err)
		}
		check("RelationMarginals", got, w)
		// A second one on the same circuit has inputs of its own.
		rm2, err := c.NewRelationMarginals()
		if err != nil {
			t.Fatal(err)
		}
		got2, err := rm2.Values()
		if err != nil {
			t.Fatal(err)
		}
		check("a second RelationMarginals", got2, w)
		if got, err = rm.Values(); err != nil {
			t.Fatal(err)
		}
		check("the first RelationMarginals after the second ran", got, w)
		for _, n := range m.ParamNames() {
			x := m.Param(n).Data().([]float64)
			for i := range x {
				x[i] = 0.9*x[i] + 0.05*float64(i%7)
			}
		}
		got, err = rm.Values()
		if err != nil {
			t.Fatal(err)
		}
		check("RelationMarginals after a parameter update", got, want())
	}
}

// The samplers' p(S | r) of an unconstrained GeKC against enumeration,
// log Σ_o φ(s,r,o) (φ² + ε for squared models) for every s and r: the
// closed form s·M_r·sᵀ of squared models, one relation at a time, and the
// all-relations matrix of non-negative ones.
func TestSubjectMarginalsByRelationMatchBruteForce(t *testing.T) {
	for _, name := range Names() {
		m := newTiny(t, name, 17)
		g := G.NewGraph()
		c := m.Bind(g)
		var lm *G.Node
		var setRelation func(r int)
		var err error
		switch m.Semantics {
		case Energy:
			continue
		case NonNegative:
			lm, err = c.nonNegativeSubjectMarginals()
			setRelation = func(int) {}
		case Squared:
			rs := make([]int, 1)
			idx := G.NewVector(g, tensor.Int, G.WithShape(1), G.WithName("r"), G.WithValue(tensor.New(tensor.WithShape(1), tensor.WithBacking(rs))))
			gram, gerr := c.RoleGram(Object)
			if gerr != nil {
				t.Fatal(gerr)
			}
			lm, err = c.squaredSubjectMarginals(idx, gram)
			setRelation = func(r int) {
				for i := range rs {
					rs[i] = r
				}
			}
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		p, err := graph.Compile(lm)
		if err != nil {
			t.Fatal(err)
		}
		ne := m.Sizes.Entities
		for r := 0; r < m.Sizes.Relations; r++ {
			setRelation(r)
			if err := p.Run(); err != nil {
				t.Fatal(err)
			}
			got := vec(lm)
			if m.Semantics == NonNegative {
				got = got[r*ne : (r+1)*ne]
			}
			for s := 0; s < ne; s++ {
				var sum float64
				for o := 0; o < ne; o++ {
					sum += refUnnorm(m, s, r, o)
				}
				if !close(got[s], math.Log(sum)) {
					t.Errorf("%s: log Σ_o φ(%d,%d,o) = %.12g, brute force %.12g", name, s, r, got[s], math.Log(sum))
				}
			}
		}
	}
}

// RelationMarginals keeps the intermediates of one relation, not of all:
// at ComplEx² d = 1000 on FB15k-237 the all-relations graph needed tens of
// GB. Here 64 relations at d = 128 would hold about 170 MB of
// intermediates at once (20-odd d×d float64 buffers each); one relation's
// are under 3 MB.
func TestRelationMarginalsMemoryDoesNotGrowWithRelations(t *testing.T) {
	m, err := New("complex2", Sizes{Entities: 50, Relations: 64, Rank: 128}, Options{Seed: 1, Dtype: tensor.Float64})
	if err != nil {
		t.Fatal(err)
	}
	rm, err := m.Bind(G.NewGraph()).NewRelationMarginals()
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if _, err := rm.Values(); err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > 30<<20 {
		t.Errorf("the live heap grew by %d MB evaluating p(R) of 64 relations; one relation's intermediates are under 3 MB", grew>>20)
	}
}
