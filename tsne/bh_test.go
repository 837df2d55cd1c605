package tsne

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// dense expands sparse affinities to an n×n row-major matrix.
func (p sparseP) dense(n int) []float64 {
	d := make([]float64, n*n)
	for i := range n {
		for e := p.start[i]; e < p.start[i+1]; e++ {
			d[i*n+int(p.col[e])] = p.val[e]
		}
	}
	return d
}

// With every other point a neighbour (3·perplexity + 1 ≥ n − 1), the
// sparse affinities are the exact ones (but for the exact method's floor of
// 10⁻¹²).
func TestSparseAffinitiesAllNeighbours(t *testing.T) {
	x, _ := clusters(3, 10, 4, 21)
	n, _ := x.Dims()
	const perp = 10 // ⌊31⌋ ≥ 29 neighbours
	if k := neighbourCount(n, perp); k != n-1 {
		t.Fatalf("%d neighbours, want %d", k, n-1)
	}
	got := sparseAffinities(x, perp).dense(n)
	want := affinities(squaredDistances(gram(x), n), perp)
	for i := range got {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Fatalf("entry (%d, %d): %v, exact %v", i/n, i%n, got[i], want[i])
		}
	}
}

// With fewer neighbours, each point's are its k nearest by brute force,
// the affinities are symmetric, sum to one, and each row's conditional has
// entropy log(perplexity) over the neighbours alone.
func TestSparseAffinitiesNeighbours(t *testing.T) {
	x, _ := clusters(4, 30, 6, 22)
	n, _ := x.Dims()
	const perp = 5
	k := neighbourCount(n, perp)
	if k != 16 {
		t.Fatalf("%d neighbours, want ⌊3·5 + 1⌋ = 16", k)
	}
	idx, dist := nearestNeighbours(x, k)
	d := squaredDistances(gram(x), n)
	for i := range n {
		others := make([]int, 0, n-1)
		for j := range n {
			if j != i {
				others = append(others, j)
			}
		}
		sort.SliceStable(others, func(a, b int) bool { return d[i*n+others[a]] < d[i*n+others[b]] })
		for m := range k {
			if int(idx[i*k+m]) != others[m] || math.Abs(dist[i*k+m]-d[i*n+others[m]]) > 1e-9 {
				t.Fatalf("point %d, neighbour %d: %d at %v, want %d at %v", i, m, idx[i*k+m], dist[i*k+m], others[m], d[i*n+others[m]])
			}
		}
		row := make([]float64, k)
		if h := conditional(dist[i*k:(i+1)*k], -1, perp, row); math.Abs(h-math.Log(perp)) > 1e-4 || math.Abs(floats.Sum(row)-1) > 1e-12 {
			t.Fatalf("point %d: entropy %v, sum %v", i, h, floats.Sum(row))
		}
	}
	p := sparseAffinities(x, perp)
	pd := p.dense(n)
	for i := range n {
		for j := range n {
			if pd[i*n+j] != pd[j*n+i] || (i == j && pd[i*n+j] != 0) {
				t.Fatalf("p[%d,%d] = %v, p[%d,%d] = %v", i, j, pd[i*n+j], j, i, pd[j*n+i])
			}
		}
		if !slices.IsSorted(p.col[p.start[i]:p.start[i+1]]) {
			t.Fatalf("row %d's columns not sorted", i)
		}
	}
	if s := floats.Sum(p.val); math.Abs(s-1) > 1e-12 {
		t.Errorf("the affinities sum to %v", s)
	}
}

// Every point is in exactly one leaf, inside its cell; a node's count and
// centre of mass are those of its points, its children's counts add up to
// its own; coincident points share a leaf.
func TestQuadtree(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 1))
	n := 500
	y := make([]float64, 2*n)
	for i := range n {
		y[2*i], y[2*i+1] = rng.NormFloat64()*10, rng.NormFloat64()
	}
	for i := 450; i < n; i++ { // 50 points at one place
		y[2*i], y[2*i+1] = 1.5, -0.25
	}
	var tree quadtree
	tree.build(y)
	seen := make([]int, n)
	for id, nd := range tree.nodes {
		var mx, my float64
		for _, p := range tree.perm[nd.lo:nd.hi] {
			mx, my = mx+y[2*p]/float64(nd.count), my+y[2*p+1]/float64(nd.count)
			if math.Abs(y[2*p]-nd.cx) > nd.half || math.Abs(y[2*p+1]-nd.cy) > nd.half {
				t.Fatalf("node %d: point %d at (%v, %v) outside its cell", id, p, y[2*p], y[2*p+1])
			}
		}
		if nd.count != int(nd.hi-nd.lo) || math.Abs(mx-nd.mx) > 1e-9 || math.Abs(my-nd.my) > 1e-9 {
			t.Fatalf("node %d: count %d of %d points, centre (%v, %v), want (%v, %v)", id, nd.count, nd.hi-nd.lo, nd.mx, nd.my, mx, my)
		}
		if nd.leaf() {
			for _, p := range tree.perm[nd.lo:nd.hi] {
				seen[p]++
			}
			continue
		}
		sum := 0
		for _, c := range nd.child {
			if c >= 0 {
				sum += tree.nodes[c].count
			}
		}
		if sum != nd.count {
			t.Fatalf("node %d: children hold %d of its %d points", id, sum, nd.count)
		}
	}
	for p, c := range seen {
		if c != 1 {
			t.Fatalf("point %d in %d leaves", p, c)
		}
	}
	if tree.nodes[0].count != n {
		t.Errorf("root holds %d of %d points", tree.nodes[0].count, n)
	}
}

// At angle 0 no cell is summarised, and the Barnes–Hut gradient and
// divergence over all neighbours are the exact ones; at 0.5 the gradient
// is within 1% of the exact one.
func TestBarnesHutGradient(t *testing.T) {
	x, _ := clusters(4, 25, 5, 24)
	n, _ := x.Dims()
	p := sparseAffinities(x, float64(n)/3)
	exactP := p.dense(n)
	rng := rand.New(rand.NewPCG(25, 1))
	y := make([]float64, 2*n)
	for i := range y {
		y[i] = 3 * rng.NormFloat64()
	}
	want := make([]float64, 2*n)
	wantKL := gradient(exactP, y, 4, want, true)
	for _, tc := range []struct {
		theta, tol float64
	}{{0, 1e-12}, {0.5, 0.01}} {
		bh := &barnesHut{p: p, theta: tc.theta}
		got := make([]float64, 2*n)
		kl := bh.gradient(y, 4, got, true)
		diff := make([]float64, 2*n)
		floats.SubTo(diff, got, want)
		if rel := floats.Norm(diff, 2) / floats.Norm(want, 2); !(rel <= tc.tol) {
			t.Errorf("angle %v: gradient's relative error %v, want at most %v", tc.theta, rel, tc.tol)
		}
		if rel := math.Abs(kl-wantKL) / wantKL; !(rel <= tc.tol) {
			t.Errorf("angle %v: divergence %v, exact %v", tc.theta, kl, wantKL)
		}
		if tc.theta == 0 {
			if d, w := bh.divergence(y), divergence(exactP, y); math.Abs(d-w) > 1e-12*w {
				t.Errorf("divergence %v, exact %v", d, w)
			}
		}
	}
}

// No number of workers changes a bit of the neighbours, the gradient or
// the embedding: points past three chunks, under one worker and four.
func TestBarnesHutWorkers(t *testing.T) {
	x, _ := clusters(4, 200, 6, 28)
	n, _ := x.Dims()
	if n < 3*chunk {
		t.Fatalf("%d points, want more than three chunks of %d", n, chunk)
	}
	opt := DefaultOptions()
	opt.Perplexity, opt.Iterations = 10, 60
	type out struct {
		idx  []int32
		dist []float64
		grad []float64
		y    *mat.Dense
	}
	run := func(procs int) out {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		idx, dist := nearestNeighbours(x, 20)
		bh := &barnesHut{p: sparseAffinities(x, 10), theta: 0.5}
		y := make([]float64, 2*n)
		for i := range y {
			y[i] = float64(i%97) - 48
		}
		grad := make([]float64, 2*n)
		bh.gradient(y, 12, grad, true)
		res, err := Embed(x, opt)
		if err != nil {
			t.Fatal(err)
		}
		return out{idx, dist, grad, res.Y}
	}
	one, four := run(1), run(4)
	if !slices.Equal(one.idx, four.idx) || !slices.Equal(one.dist, four.dist) || !slices.Equal(one.grad, four.grad) || !mat.Equal(one.y, four.y) {
		t.Error("one worker and four gave other results")
	}
}

// Equal points are exactly 0 apart and each other's nearest, in index
// order, though their Gram products round.
func TestNearestNeighboursDuplicates(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 1))
	const dim = 37
	x := mat.NewDense(40, dim, nil)
	for g := range 10 { // ten groups of four equal rows, rows g, g+10, g+20, g+30
		row := make([]float64, dim)
		for c := range row {
			row[c] = rng.NormFloat64() * 3
		}
		for r := g; r < 40; r += 10 {
			x.SetRow(r, row)
		}
	}
	idx, dist := nearestNeighbours(x, 5)
	for i := range 40 {
		var want []int32
		for r := i % 10; r < 40; r += 10 {
			if r != i {
				want = append(want, int32(r))
			}
		}
		if !slices.Equal(idx[i*5:i*5+3], want) || !slices.Equal(dist[i*5:i*5+3], []float64{0, 0, 0}) || !(dist[i*5+3] > 0) {
			t.Fatalf("row %d: neighbours %v at %v, want %v at 0 first", i, idx[i*5:i*5+5], dist[i*5:i*5+5], want)
		}
	}
}

// Well-separated clusters smaller than the neighbour count have
// affinities that underflow to zero: the divergence stays finite and the
// descent is not stopped by it.
func TestBarnesHutSeparatedClusters(t *testing.T) {
	x, _ := clusters(4, 20, 4, 30)
	for r := range 80 { // clusters 200 apart, spread 0.5
		x.Set(r, r/20, x.At(r, r/20)+196)
	}
	opt := DefaultOptions()
	opt.Perplexity, opt.Iterations = 10, 1000
	var kls []float64
	opt.Progress = func(_ int, kl float64) { kls = append(kls, kl) }
	res, err := Embed(x, opt)
	if err != nil {
		t.Fatal(err)
	}
	zeros := 0
	for _, v := range sparseAffinities(x, 10).val {
		if v == 0 {
			zeros++
		}
	}
	if zeros == 0 {
		t.Fatal("no affinity underflowed: the case is not tested")
	}
	for _, kl := range kls {
		if math.IsNaN(kl) || math.IsInf(kl, 0) {
			t.Fatalf("divergences at the checks: %v", kls)
		}
	}
	if res.Iterations != 1000 || math.IsNaN(res.KL) {
		t.Errorf("%d of 1000 iterations, KL %v", res.Iterations, res.KL)
	}
}

// The normaliser is within a few per cent of the exact one up to the
// widest angle, 1, and a point never repels itself, not even from a cell
// it shares with one other point.
func TestBarnesHutWideAngle(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 1))
	n := 2000
	y := make([]float64, 2*n)
	for i := range y {
		y[i] = 20 * rng.NormFloat64()
	}
	var tree quadtree
	tree.build(y)
	want := normaliser(y)
	// The centre of mass stands in for a cell's points: an error growing
	// as θ² (measured: 0.1%, 1.1%, 3.4%, 5.6% at 0.2, 0.5, 0.8, 1).
	for _, tc := range []struct{ theta, tol float64 }{{0, 1e-12}, {0.5, 0.02}, {1, 0.1}} {
		var z float64
		var stack []int32
		for i := range n {
			var zi float64
			zi, _, _, stack = tree.repulsion(int32(i), y, tc.theta, stack)
			z += zi
		}
		if math.Abs(z-want) > tc.tol*want {
			t.Errorf("angle %v: normaliser %v, exact %v", tc.theta, z, want)
		}
	}
	two := []float64{0, 0, 3, 4}
	tree.build(two)
	if zi, fx, fy, _ := tree.repulsion(0, two, 1, nil); math.Abs(zi-1.0/26) > 1e-15 || math.Abs(fx+3.0/676) > 1e-15 || math.Abs(fy+4.0/676) > 1e-15 {
		t.Errorf("two points: z %v, force (%v, %v), want 1/26, (−3/676, −4/676)", zi, fx, fy)
	}
}

// The two methods embed the same clusters alike: over four seeds, the
// mean divergence of Barnes–Hut's layouts, measured exactly, is within 5%
// of the exact method's (one seed's varies by a few per cent either way).
func TestEmbedMethodsAgree(t *testing.T) {
	x, _ := clusters(5, 40, 8, 26)
	n, _ := x.Dims()
	const perp = 20
	exactP := affinities(squaredDistances(gram(x), n), perp)
	var kl [2]float64
	for m, angle := range []float64{0, 0.5} {
		for seed := range uint64(4) {
			opt := DefaultOptions()
			opt.Perplexity, opt.Iterations, opt.Seed, opt.Angle = perp, 600, seed, angle
			res, err := Embed(x, opt)
			if err != nil {
				t.Fatal(err)
			}
			kl[m] += divergence(exactP, res.Y.RawMatrix().Data) / 4
		}
	}
	if math.Abs(kl[1]-kl[0]) > 0.05*kl[0] {
		t.Errorf("mean divergence exact %v, Barnes–Hut %v", kl[0], kl[1])
	}
}

// BenchmarkEmbedBarnesHut10000 is a tenth of the paper's figure's 2 ×
// 25,000 triples (here 10,000 points of 40 dimensions): the neighbours,
// the affinities, the start and 100 iterations.
func BenchmarkEmbedBarnesHut10000(b *testing.B) {
	x, _ := clusters(20, 500, 40, 27)
	opt := DefaultOptions()
	opt.Perplexity, opt.Iterations = 50, 100
	for b.Loop() {
		if _, err := Embed(x, opt); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBarnesHutGradient40000 is one descent step's gradient at the
// paper's figure's size (2 × 20,466 FB15k-237 test and sampled triples:
// about 41,000 points), on a spread-out layout, neighbours of perplexity 50.
func BenchmarkBarnesHutGradient40000(b *testing.B) {
	x, _ := clusters(40, 1000, 10, 32)
	bh := &barnesHut{p: sparseAffinities(x, 50), theta: 0.5}
	rng := rand.New(rand.NewPCG(33, 1))
	y := make([]float64, 2*40000)
	for i := range y {
		y[i] = 30 * rng.NormFloat64()
	}
	grad := make([]float64, len(y))
	for b.Loop() {
		bh.gradient(y, 1, grad, false)
	}
}
