package tsne

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"testing"

	"gonum.org/v1/gonum/floats"
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
// is within 1% of the exact one, and no worker count changes a
// bit of it.
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
	// Another number of workers, the same bits.
	bh := &barnesHut{p: p, theta: 0.5}
	one, many := make([]float64, 2*n), make([]float64, 2*n)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	bh.gradient(y, 1, one, false)
	runtime.GOMAXPROCS(4)
	bh.gradient(y, 1, many, false)
	if !slices.Equal(one, many) {
		t.Errorf("one worker and four gave other gradients")
	}
}

// The two methods embed the same clusters alike: Barnes–Hut's divergence
// is within 5% of the exact method's, each measured by its own.
func TestEmbedMethodsAgree(t *testing.T) {
	x, _ := clusters(5, 40, 8, 26)
	var kl [2]float64
	for m, angle := range []float64{0, 0.5} {
		opt := DefaultOptions()
		opt.Perplexity, opt.Iterations, opt.Seed, opt.Angle = 20, 600, 3, angle
		res, err := Embed(x, opt)
		if err != nil {
			t.Fatal(err)
		}
		kl[m] = res.KL
	}
	if math.Abs(kl[1]-kl[0]) > 0.05*kl[0] {
		t.Errorf("divergence exact %v, Barnes–Hut %v", kl[0], kl[1])
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
