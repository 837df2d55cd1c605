package nnmfaug

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gekc/kg"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"
)

// greedyWard merges the cheapest pair of clusters until k are left, by
// brute force over all pairs: the definition the chain must agree with.
func greedyWard(x []float64, n, d, k int) []int32 {
	type cluster struct {
		members []int
		cent    []float64
	}
	cs := make([]*cluster, n)
	for i := range cs {
		cs[i] = &cluster{[]int{i}, slices.Clone(x[i*d : (i+1)*d])}
	}
	// The chain's distance, so that the two are compared on their merge
	// order, not on how a sum rounds.
	cost := func(a, b *cluster) float64 {
		na, nb := float64(len(a.members)), float64(len(b.members))
		return na * nb / (na + nb) * sqDist(a.cent, b.cent)
	}
	for len(cs) > k {
		bi, bj, best := -1, -1, math.Inf(1)
		for i := range cs {
			for j := i + 1; j < len(cs); j++ {
				if c := cost(cs[i], cs[j]); c < best {
					bi, bj, best = i, j, c
				}
			}
		}
		a, b := cs[bi], cs[bj]
		na, nb := float64(len(a.members)), float64(len(b.members))
		for j := range a.cent {
			a.cent[j] = (na*a.cent[j] + nb*b.cent[j]) / (na + nb)
		}
		a.members = append(a.members, b.members...)
		cs = append(cs[:bj], cs[bj+1:]...)
	}
	root := make([]int, n)
	for ci, c := range cs {
		for _, m := range c.members {
			root[m] = ci
		}
	}
	return labelsByFirstAppearance(n, func(i int) int { return root[i] })
}

func TestWardMatchesGreedy(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		n, d := 10+rng.IntN(40), 1+rng.IntN(9) // up to two rounds of sqDist's four lanes, and a rest
		if seed%2 == 0 {
			d = 30 + rng.IntN(70) // searches that stop early, every 32 entries
		}
		x := make([]float64, n*d)
		for i := range x {
			x[i] = rng.NormFloat64()
		}
		for _, k := range []int{1, 2, 3, n / 3, n - 1, n} {
			want := greedyWard(x, n, d, k)
			// More workers than clusters are left at the end: their
			// chunks of the search are empty.
			for _, workers := range []int{1, 3, 8} {
				if got := wardClusters(x, n, d, k, workers); !slices.Equal(got, want) {
					t.Errorf("seed %d, %d points in %d dimensions, k = %d, %d workers:\n got  %v\n want %v", seed, n, d, k, workers, got, want)
				}
			}
		}
	}
}

// Points that coincide (entities with the same features, such as those
// never seen in training) tie at cost zero, where the chain may take
// another tie first than the greedy order: coinciding points must still
// share a cluster while k is at most the number of distinct points.
func TestWardDuplicates(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 7))
	const n, d, distinct = 60, 3, 12
	x, of := pointsAround(rng, n, d, distinct, rng.NormFloat64, func(c float64) float64 { return c })
	for k := 1; k <= distinct; k++ {
		got := wardClusters(x, n, d, k, 1)
		if par := wardClusters(x, n, d, k, 5); !slices.Equal(par, got) {
			t.Errorf("k = %d: five workers give %v, one %v", k, par, got)
		}
		if c := slices.Max(got) + 1; int(c) != k {
			t.Errorf("k = %d: %d clusters", k, c)
		}
		for i := 0; i < n; i++ {
			for j := 0; j < i; j++ {
				if of[i] == of[j] && got[i] != got[j] {
					t.Errorf("k = %d: points %d and %d coincide but are in clusters %d and %d", k, j, i, got[j], got[i])
				}
			}
		}
	}
}

// randomCounts returns an n × m matrix of small counts.
func randomCounts(rng *rand.Rand, n, m int) *mat.Dense {
	x := mat.NewDense(n, m, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < m; j++ {
			if rng.IntN(3) == 0 {
				x.Set(i, j, float64(1+rng.IntN(4)))
			}
		}
	}
	return x
}

func TestFactorize(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	h, tt := randomCounts(rng, 15, 4), randomCounts(rng, 15, 4)
	var x mat.Dense
	x.Mul(h, tt.T())
	explicit := func(w, v *mat.Dense) float64 {
		var wv, diff mat.Dense
		wv.Mul(w, v)
		diff.Sub(&x, &wv)
		return mat.Norm(&diff, 2) * mat.Norm(&diff, 2)
	}
	f := factorize(h, tt, 3, 500, 0, rand.New(rand.NewPCG(1, 1)))
	for i := 1; i < len(f.Errors); i++ {
		if f.Errors[i] > f.Errors[i-1]*(1+1e-12) {
			t.Errorf("error rose from %g to %g at measurement %d", f.Errors[i-1], f.Errors[i], i)
		}
	}
	if first, last := f.Errors[0], f.Errors[len(f.Errors)-1]; !(last < first/2) {
		t.Errorf("the factorisation did not fit: error %g at the start, %g at the end", first, last)
	}
	for _, m := range []*mat.Dense{f.W, f.V} {
		if mat.Min(m) < 0 {
			t.Errorf("a negative factor entry %g", mat.Min(m))
		}
	}
	// With an infinite tolerance it stops at the second measurement,
	// taken from the factors it returns: the error through H and T is
	// the error of the matrix X itself.
	g := factorize(h, tt, 3, 500, math.Inf(1), rand.New(rand.NewPCG(1, 1)))
	if g.Iters != 10 || len(g.Errors) != 2 {
		t.Fatalf("stopped after %d iterations with %d errors; want 10 and 2", g.Iters, len(g.Errors))
	}
	if got, want := g.Errors[1], explicit(g.W, g.V); math.Abs(got-want) > 1e-9*want {
		t.Errorf("error through H and T %g; of X itself %g", got, want)
	}
}

// factorize stops at the first measurement (every ten iterations) whose
// fall in ‖X − W·V‖_F since the last is under tol times the first's value,
// or after maxIter iterations, as scikit-learn's solver: checked against
// the error sequence of a run that never stops early.
func TestFactorizeStoppingRule(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	h, tt := randomCounts(rng, 15, 4), randomCounts(rng, 15, 4)
	full := factorize(h, tt, 3, 300, math.Inf(-1), rand.New(rand.NewPCG(1, 1)))
	if full.Iters != 300 || len(full.Errors) != 30 {
		t.Fatalf("tol -Inf: %d iterations, %d errors; want 300 and 30", full.Iters, len(full.Errors))
	}
	fall := make([]float64, len(full.Errors)) // fall[i]: relative fall from measurement i-1 to i
	for i := 1; i < len(fall); i++ {
		fall[i] = (math.Sqrt(full.Errors[i-1]) - math.Sqrt(full.Errors[i])) / math.Sqrt(full.Errors[0])
	}
	for _, at := range []int{1, 2, 5, 12} {
		tol := fall[at] * 1.0001 // the first measurement at or after at with a smaller fall stops it
		want := 0
		for i := 1; i < len(fall) && want == 0; i++ {
			if fall[i] < tol {
				want = i
			}
		}
		f := factorize(h, tt, 3, 300, tol, rand.New(rand.NewPCG(1, 1)))
		if f.Iters != 10*want || len(f.Errors) != want+1 {
			t.Errorf("tol %.4g: stopped after %d iterations with %d errors; want %d and %d", tol, f.Iters, len(f.Errors), 10*want, want+1)
		}
	}
	// maxIter between measurements: it ends there.
	if f := factorize(h, tt, 3, 37, 0, rand.New(rand.NewPCG(1, 1))); f.Iters != 37 || len(f.Errors) != 4 {
		t.Errorf("maxIter 37: %d iterations, %d errors; want 37 and 4", f.Iters, len(f.Errors))
	}
}

// Fit counts each entity's triples per relation as a subject (H) and as
// an object (T), apart: on a graph whose subjects and objects differ, H
// holds only subjects and T only objects.
func TestFitCountsSubjectsAndObjectsApart(t *testing.T) {
	train := []kg.Triple{{S: 0, R: 0, O: 1}, {S: 0, R: 0, O: 1}, {S: 2, R: 1, O: 3}}
	opt := tinyOptions()
	opt.Components, opt.Clusters = 1, 1
	m, err := Fit(train, 4, 2, opt)
	if err != nil {
		t.Fatal(err)
	}
	wantHead := []float64{2, 0, 0, 0, 0, 1, 0, 0} // [entity][relation]
	wantTail := []float64{0, 0, 2, 0, 0, 0, 0, 1}
	if !slices.Equal(m.head, wantHead) || !slices.Equal(m.tail, wantTail) {
		t.Errorf("H %v, T %v; want %v, %v", m.head, m.tail, wantHead, wantTail)
	}
}

// The factorisation starts as scikit-learn's "random" initialisation:
// entries √(mean X / k)·|N(0, 1)|, whose mean is √(mean X / k)·√(2/π).
func TestFactorizeStart(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	h, tt := randomCounts(rng, 300, 4), randomCounts(rng, 300, 4)
	var x mat.Dense
	x.Mul(h, tt.T())
	const k = 3
	f := factorize(h, tt, k, 0, 0, rand.New(rand.NewPCG(1, 1)))
	want := math.Sqrt(mat.Sum(&x)/(300*300)/k) * math.Sqrt(2/math.Pi)
	got := (mat.Sum(f.W) + mat.Sum(f.V)) / (2 * 300 * k)
	if math.Abs(got/want-1) > 0.08 {
		t.Errorf("mean initial factor entry %v, want %v (within 8%%)", got, want)
	}
}

// tinyGraph is a graph of 8 entities and 3 relations with 30 triples.
func tinyGraph() (train []kg.Triple, entities, relations int) {
	rng := rand.New(rand.NewPCG(5, 5))
	for len(train) < 30 {
		train = append(train, kg.Triple{S: int32(rng.IntN(8)), R: int32(rng.IntN(3)), O: int32(rng.IntN(8))})
	}
	return train, 8, 3
}

func tinyOptions() Options {
	o := DefaultOptions()
	o.Components, o.Clusters, o.Alpha = 2, 3, 0.5
	return o
}

func TestLogProbIsADistribution(t *testing.T) {
	train, ne, nr := tinyGraph()
	m, err := Fit(train, ne, nr, tinyOptions())
	if err != nil {
		t.Fatal(err)
	}
	if m.Clusters() != 3 {
		t.Fatalf("%d clusters; want 3", m.Clusters())
	}
	var sum float64
	zero := 0
	for s := int32(0); s < int32(ne); s++ {
		for r := int32(0); r < int32(nr); r++ {
			for o := int32(0); o < int32(ne); o++ {
				tr := kg.Triple{S: s, R: r, O: o}
				lp, paper := m.LogProb(tr), m.PaperLogProb(tr)
				sum += math.Exp(lp)
				switch {
				case math.IsInf(lp, -1):
					zero++
					if m.Cluster[s] == m.Cluster[o] || math.IsInf(paper, 0) || math.IsNaN(paper) {
						t.Errorf("%v: log p −∞ with clusters %d and %d, paper's %g", tr, m.Cluster[s], m.Cluster[o], paper)
					}
				case lp != paper:
					t.Errorf("%v: log p %g but the paper's %g within one cluster", tr, lp, paper)
				}
			}
		}
	}
	if math.Abs(sum-1) > 1e-12 {
		t.Errorf("probabilities sum to %.15f", sum)
	}
	if zero == 0 {
		t.Error("no triple across clusters: the test does not check them")
	}
}

// LogProb and PaperLogProb against values worked by hand, on a model whose
// counts differ between roles and whose clusters differ in size.
func TestLogProbByHand(t *testing.T) {
	m := &Model{Entities: 3, Relations: 2, Cluster: []int32{0, 0, 1}, members: [][]int32{{0, 1}, {2}},
		head:  []float64{1, 2, 0, 1, 3, 0}, // H: subject counts, rows (e, r)
		tail:  []float64{2, 0, 1, 3, 0, 1}, // T: object counts
		alpha: 0.5}
	for _, c := range []struct {
		t           kg.Triple
		want, paper float64
	}{
		// (0, 1, 1): cluster 0 of two; weights H[0]·T[1] + α = (1.5, 6.5).
		{kg.Triple{S: 0, R: 1, O: 1}, -3*math.Ln2 + math.Log(6.5/8), -3*math.Ln2 + math.Log(6.5/8)},
		{kg.Triple{S: 1, R: 0, O: 0}, -4 * math.Ln2, -4 * math.Ln2}, // H[1]·T[0] + α = (0.5, 0.5)
		// (2, 0, 0) crosses clusters: the paper's code uses the subject's
		// cluster, of one entity; weights H[2]·T[0] + α = (6.5, 0.5).
		{kg.Triple{S: 2, R: 0, O: 0}, math.Inf(-1), -math.Ln2 + math.Log(6.5/7)},
	} {
		if got := m.LogProb(c.t); math.Abs(got-c.want) > 1e-12 && got != c.want {
			t.Errorf("LogProb%v = %g, want %g", c.t, got, c.want)
		}
		if got := m.PaperLogProb(c.t); math.Abs(got-c.paper) > 1e-12 {
			t.Errorf("PaperLogProb%v = %g, want %g", c.t, got, c.paper)
		}
	}
	if got := m.Sample(-1, rand.New(rand.NewPCG(1, 1))); len(got) != 0 {
		t.Errorf("Sample(-1): %d triples", len(got))
	}
}

func TestSampleMatchesLogProb(t *testing.T) {
	train, ne, nr := tinyGraph()
	m, err := Fit(train, ne, nr, tinyOptions())
	if err != nil {
		t.Fatal(err)
	}
	const n = 200_000
	counts := map[kg.Triple]float64{}
	for _, tr := range m.Sample(n, rand.New(rand.NewPCG(9, 9))) {
		counts[tr]++
	}
	var chi2 float64
	df := -1
	for s := int32(0); s < int32(ne); s++ {
		for r := int32(0); r < int32(nr); r++ {
			for o := int32(0); o < int32(ne); o++ {
				tr := kg.Triple{S: s, R: r, O: o}
				e := n * math.Exp(m.LogProb(tr))
				if e == 0 {
					if counts[tr] > 0 {
						t.Fatalf("%v sampled %g times with probability zero", tr, counts[tr])
					}
					continue
				}
				chi2 += (counts[tr] - e) * (counts[tr] - e) / e
				df++
			}
		}
	}
	if p := (distuv.ChiSquared{K: float64(df)}).Survival(chi2); p < 1e-3 {
		t.Errorf("χ² %g with %d degrees of freedom: p = %g", chi2, df, p)
	}
}

func TestFitRefuses(t *testing.T) {
	train, ne, nr := tinyGraph()
	for _, c := range []struct {
		name   string
		mutate func(*Options, *[]kg.Triple, *int)
		want   string
	}{
		{"no triples", func(_ *Options, tr *[]kg.Triple, _ *int) { *tr = nil }, "no training triples"},
		{"entity out of range", func(_ *Options, tr *[]kg.Triple, _ *int) { *tr = append(slices.Clone(*tr), kg.Triple{S: 8}) }, "outside 8 entities"},
		{"no entities", func(_ *Options, _ *[]kg.Triple, e *int) { *e = 0 }, "0 entities"},
		{"too many clusters", func(o *Options, _ *[]kg.Triple, _ *int) { o.Clusters = 9 }, "9 clusters of 8 entities"},
		{"no components", func(o *Options, _ *[]kg.Triple, _ *int) { o.Components = 0 }, "0 components"},
		{"zero alpha", func(o *Options, _ *[]kg.Triple, _ *int) { o.Alpha = 0 }, "α 0"},
		{"NaN tolerance", func(o *Options, _ *[]kg.Triple, _ *int) { o.Tolerance = math.NaN() }, "tolerance NaN"},
	} {
		o, tr, e := tinyOptions(), train, ne
		c.mutate(&o, &tr, &e)
		_, err := Fit(tr, e, nr, o)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v; want one naming %q", c.name, err, c.want)
		}
	}
}

// BenchmarkWard clusters 2,000 points of NNMFAug's 256 features, drawn
// around 50 centres, into 50, on one worker: the nearest-neighbour
// searches dominate NNMFAug's fit on a benchmark's tens of thousands of
// entities.
func BenchmarkWard(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 7))
	const n, d, k = 2000, 256, 50
	x, _ := pointsAround(rng, n, d, k, rng.ExpFloat64, func(c float64) float64 { return max(0, c+0.3*rng.NormFloat64()) })
	for b.Loop() {
		wardClusters(x, n, d, k, 1)
	}
}

// pointsAround returns n points of d coordinates, each at one of k centres
// (their coordinates drawn by coord) moved by near, and each point's
// centre.
func pointsAround(rng *rand.Rand, n, d, k int, coord func() float64, near func(centre float64) float64) ([]float64, []int) {
	centres := make([]float64, k*d)
	for i := range centres {
		centres[i] = coord()
	}
	x := make([]float64, n*d)
	of := make([]int, n)
	for i := range n {
		of[i] = rng.IntN(k)
		for j := range d {
			x[i*d+j] = near(centres[of[i]*d+j])
		}
	}
	return x, of
}
