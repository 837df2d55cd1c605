package tsne

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
)

// clusters returns k clusters of m points each in dim dimensions, centres
// 4 apart on the axes and spread 0.5, with each point's cluster.
func clusters(k, m, dim int, seed uint64) (*mat.Dense, []int) {
	rng := rand.New(rand.NewPCG(seed, 1))
	x := mat.NewDense(k*m, dim, nil)
	label := make([]int, k*m)
	for c := range k {
		for i := range m {
			row := c*m + i
			label[row] = c
			for j := range dim {
				v := 0.5 * rng.NormFloat64()
				if j == c {
					v += 4
				}
				x.Set(row, j, v)
			}
		}
	}
	return x, label
}

// Every conditional distribution has the perplexity asked for: entropy
// log(perplexity), summing to one, none on the point itself; the joint
// affinities are symmetric, sum to one, and have none on the diagonal.
func TestAffinities(t *testing.T) {
	x, _ := clusters(3, 20, 5, 1)
	n, _ := x.Dims()
	d := squaredDistances(gram(x), n)
	for _, perp := range []float64{2, 10, 30} {
		for i := range n {
			row := make([]float64, n)
			got := conditional(d[i*n:(i+1)*n], i, perp, row)
			var sum, h float64
			for _, v := range row {
				sum += v
				if v > 0 {
					h -= v * math.Log(v)
				}
			}
			if row[i] != 0 || math.Abs(sum-1) > 1e-12 || math.Abs(h-math.Log(perp)) > 1e-4 || math.Abs(got-h) > 1e-9 {
				t.Fatalf("perplexity %v, point %d: self %v, sum %v, entropy %v (said %v), want %v", perp, i, row[i], sum, h, got, math.Log(perp))
			}
		}
		p := affinities(d, perp)
		var sum float64
		for i := range n {
			for j := range n {
				sum += p[i*n+j]
				if p[i*n+j] != p[j*n+i] || (i == j) != (p[i*n+j] == 0) {
					t.Fatalf("perplexity %v: p[%d,%d] = %v, p[%d,%d] = %v", perp, i, j, p[i*n+j], j, i, p[j*n+i])
				}
			}
		}
		if math.Abs(sum-1) > 1e-8 { // the floor of 10⁻¹² on each of n² entries
			t.Errorf("perplexity %v: the affinities sum to %v", perp, sum)
		}
	}
	// Coinciding points have no Gaussian of perplexity 3: each of six is
	// as near to the five others, at entropy log 5, and that is kept, not
	// a failure.
	row := make([]float64, 6)
	if h := conditional(make([]float64, 6), 0, 3, row); math.Abs(h-math.Log(5)) > 1e-12 || row[0] != 0 || math.Abs(row[1]-0.2) > 1e-15 {
		t.Errorf("six equal points at perplexity 3: entropy %v, row %v; want log 5, uniform", h, row)
	}
}

// The squared distances are those of the coordinates.
func TestSquaredDistances(t *testing.T) {
	x := mat.NewDense(3, 2, []float64{0, 0, 3, 4, -1, 1})
	want := []float64{0, 25, 2, 25, 0, 25, 2, 25, 0}
	for i, v := range squaredDistances(gram(x), 3) {
		if math.Abs(v-want[i]) > 1e-12 {
			t.Errorf("entry %d: %v, want %v", i, v, want[i])
		}
	}
}

// The gradient is that of KL(P‖Q) by central differences, and its
// divergence is divergence's. Exaggeration e multiplies the attraction
// alone, as in every t-SNE (so the exaggerated step is not a gradient of
// KL(e·P‖Q)): the gradient is affine in e.
func TestGradientFiniteDifferences(t *testing.T) {
	x, _ := clusters(2, 4, 3, 2)
	p := affinities(squaredDistances(gram(x), 8), 3)
	rng := rand.New(rand.NewPCG(3, 4))
	y := make([]float64, 16)
	for i := range y {
		y[i] = rng.NormFloat64()
	}
	grad := func(e float64) ([]float64, float64) {
		g := make([]float64, 16)
		kl := gradient(p, y, e, g, true)
		return g, kl
	}
	g1, kl := grad(1)
	if want := divergence(p, y); math.Abs(kl-want) > 1e-12 {
		t.Errorf("divergence %v, want %v", kl, want)
	}
	if g := make([]float64, 16); gradient(p, y, 1, g, false) != 0 || !slices.Equal(g, g1) {
		t.Errorf("without the divergence: another gradient %v, want %v", g, g1)
	}
	const h = 1e-6
	for i := range y {
		keep := y[i]
		y[i] = keep + h
		up := divergence(p, y)
		y[i] = keep - h
		down := divergence(p, y)
		y[i] = keep
		if fd := (up - down) / (2 * h); math.Abs(fd-g1[i]) > 1e-6*math.Max(1, math.Abs(fd)) {
			t.Errorf("coordinate %d: gradient %v, finite difference %v", i, g1[i], fd)
		}
	}
	g2, _ := grad(2)
	g12, _ := grad(12)
	for i := range y {
		if want := g1[i] + 11*(g2[i]-g1[i]); math.Abs(g12[i]-want) > 1e-9*math.Max(1, math.Abs(want)) {
			t.Errorf("coordinate %d: exaggerated 12 gradient %v, want %v", i, g12[i], want)
		}
	}
}

// The start is the first two principal components: on points spread along
// two axes (variance 100 on the third coordinate, 4 on the first, 0.01
// elsewhere), the start's first column follows the third coordinate and
// its second the first, with standard deviation 10⁻⁴ (over n, as numpy's)
// on the first.
func TestPrincipalStart(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	n := 200
	x := mat.NewDense(n, 4, nil)
	for i := range n {
		x.Set(i, 0, 2*rng.NormFloat64())
		x.Set(i, 1, 0.1*rng.NormFloat64())
		x.Set(i, 2, 10*rng.NormFloat64()+3)
		x.Set(i, 3, 0.1*rng.NormFloat64())
	}
	y := principalStart(centredGram(gram(x), n), n, rand.New(rand.NewPCG(1, 1)))
	// The Barnes–Hut method's operator, by products with the points, gives
	// the same start.
	if fromData := principalStart(centredData(x), n, rand.New(rand.NewPCG(1, 1))); !floats.EqualApprox(fromData, y, 1e-12) {
		t.Errorf("start from the points differs from the start from their Gram matrix")
	}
	col := func(v []float64, c, stride int) []float64 {
		out := make([]float64, n)
		for i := range n {
			out[i] = v[i*stride+c]
		}
		return out
	}
	for _, tc := range []struct{ ycol, xcol int }{{0, 2}, {1, 0}} {
		if r := math.Abs(stat.Correlation(col(y, tc.ycol, 2), col(x.RawMatrix().Data, tc.xcol, 4), nil)); r < 0.99 {
			t.Errorf("start column %d against coordinate %d: |correlation| %v", tc.ycol, tc.xcol, r)
		}
	}
	if sd := stat.PopStdDev(col(y, 0, 2), nil); math.Abs(sd-1e-4) > 1e-10 {
		t.Errorf("first column's standard deviation %v, want 1e-4", sd)
	}
	// scikit-learn's svd_flip: each component's largest entry is positive.
	for c := range 2 {
		v := col(y, c, 2)
		big := 0
		for i := range v {
			if math.Abs(v[i]) > math.Abs(v[big]) {
				big = i
			}
		}
		if v[big] < 0 {
			t.Errorf("start column %d: its largest entry %v is negative", c, v[big])
		}
	}
	// Points without spread start at random, still small.
	flat := principalStart(centredGram(gram(mat.NewDense(5, 3, nil)), 5), 5, rand.New(rand.NewPCG(1, 1)))
	for _, v := range flat {
		if v == 0 || math.Abs(v) > 1e-3 {
			t.Errorf("start of equal points %v", flat)
			break
		}
	}
}

// Well-separated clusters stay apart: each point's nearest neighbour in
// the plane is of its own cluster, the divergence is low, and the same
// seed gives the same embedding.
func TestEmbedSeparatesClusters(t *testing.T) {
	for _, angle := range []float64{0, 0.5} {
		x, label := clusters(4, 25, 10, 5)
		opt := DefaultOptions()
		opt.Perplexity, opt.Iterations, opt.Seed, opt.Angle = 15, 500, 7, angle
		res, err := Embed(x, opt)
		if err != nil {
			t.Fatal(err)
		}
		n, _ := x.Dims()
		wrong := 0
		for i := range n {
			best, bestD := -1, math.Inf(1)
			for j := range n {
				if j == i {
					continue
				}
				dx, dy := res.Y.At(i, 0)-res.Y.At(j, 0), res.Y.At(i, 1)-res.Y.At(j, 1)
				if d := dx*dx + dy*dy; d < bestD {
					best, bestD = j, d
				}
			}
			if label[best] != label[i] {
				wrong++
			}
		}
		if wrong > 0 || !(res.KL < 1) {
			t.Errorf("angle %v: %d of %d nearest neighbours of another cluster; KL %v", angle, wrong, n, res.KL)
		}
		again, err := Embed(x, opt)
		if err != nil || !mat.Equal(again.Y, res.Y) || again.KL != res.KL {
			t.Errorf("angle %v: the same seed gave another embedding (%v)", angle, err)
		}
		opt.Seed++
		if other, err := Embed(x, opt); err != nil || mat.Equal(other.Y, res.Y) {
			t.Errorf("angle %v: another seed gave the same embedding (%v)", angle, err)
		}
	}
}

// The descent lowers the divergence well below the random start's.
func TestEmbedLowersDivergence(t *testing.T) {
	x, _ := clusters(3, 15, 6, 8)
	opt := DefaultOptions()
	opt.Perplexity, opt.Seed = 10, 1
	var kl []float64
	for _, iters := range []int{1, 1000} {
		opt.Iterations = iters
		res, err := Embed(x, opt)
		if err != nil {
			t.Fatal(err)
		}
		kl = append(kl, res.KL)
	}
	t.Logf("KL after 1 and 1000 iterations: %v", kl)
	if !(kl[1] < kl[0]/2) {
		t.Errorf("KL after 1 and 1000 iterations: %v", kl)
	}
}

func TestEmbedErrors(t *testing.T) {
	x, _ := clusters(2, 5, 3, 9)
	nan := mat.DenseCopyOf(x)
	nan.Set(3, 1, math.NaN())
	def := DefaultOptions()
	with := func(f func(*Options)) Options { o := def; o.Perplexity = 3; f(&o); return o }
	for _, tc := range []struct {
		name string
		x    *mat.Dense
		opt  Options
		want string
	}{
		{"nil", nil, def, "no points"},
		{"one point", mat.NewDense(1, 2, nil), def, "1 points"},
		{"perplexity above n-1", x, with(func(o *Options) { o.Perplexity = 9.5 }), "perplexity 9.5, want one in (0, 9]"},
		{"zero perplexity", x, with(func(o *Options) { o.Perplexity = 0 }), "perplexity 0"},
		{"no iterations", x, with(func(o *Options) { o.Iterations = 0 }), "0 iterations"},
		{"no patience", x, with(func(o *Options) { o.NoProgress = 0 }), "NoProgress 0"},
		{"exaggeration below one", x, with(func(o *Options) { o.Exaggeration = 0.5 }), "exaggeration 0.5"},
		{"infinite exaggeration", x, with(func(o *Options) { o.Exaggeration = math.Inf(1) }), "exaggeration +Inf"},
		{"negative learning rate", x, with(func(o *Options) { o.LearningRate = -1 }), "learning rate -1"},
		{"NaN learning rate", x, with(func(o *Options) { o.LearningRate = math.NaN() }), "learning rate NaN"},
		{"negative angle", x, with(func(o *Options) { o.Angle = -0.1 }), "angle -0.1, want one in [0, 1]"},
		{"angle above one", x, with(func(o *Options) { o.Angle = 1.5 }), "angle 1.5"},
		{"NaN angle", x, with(func(o *Options) { o.Angle = math.NaN() }), "angle NaN"},
		{"NaN", nan, with(func(*Options) {}), "point 3 coordinate 1 is NaN"},
		{"diverging", x, with(func(o *Options) { o.LearningRate = 1e300 }), "diverged"},
		{"diverging, exact", x, with(func(o *Options) { o.LearningRate, o.Angle = 1e300, 0 }), "diverged"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Embed(tc.x, tc.opt); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
	// Equal points embed (at the closest perplexity their distances allow).
	for _, angle := range []float64{0, 0.5} {
		if res, err := Embed(mat.NewDense(6, 2, nil), with(func(o *Options) { o.Angle = angle })); err != nil || res.Y == nil {
			t.Errorf("six equal points, angle %v: %v", angle, err)
		}
	}
}

// The descent stops as scikit-learn's does, at checks every 50
// iterations: after NoProgress iterations whose divergence is no lower
// than the best, and when the gradient has vanished.
func TestEmbedStopsEarly(t *testing.T) {
	for _, angle := range []float64{0, 0.5} {
		x, _ := clusters(2, 10, 3, 12)
		opt := DefaultOptions()
		opt.Perplexity, opt.Iterations, opt.Angle = 5, 5000, angle
		// A step too small to move a point: the exaggerated phase runs its
		// 250 iterations, and the next stops at the first check more than
		// 300 iterations after its first (at iteration 300): at 650.
		opt.LearningRate = 1e-300
		if res, err := Embed(x, opt); err != nil || res.Iterations != 650 {
			t.Errorf("angle %v, no progress: %d iterations (%v), want 650", angle, res.Iterations, err)
		}
		// Two points: Q is P whatever the positions, so past the
		// exaggerated 250 iterations the gradient is zero, and the descent
		// stops at the first check, iteration 300.
		opt = DefaultOptions()
		opt.Perplexity, opt.Angle = 1, angle
		if res, err := Embed(mat.NewDense(2, 3, []float64{0, 0, 0, 1, 2, 3}), opt); err != nil || res.Iterations != 300 {
			t.Errorf("angle %v, two points: %d iterations (%v), want 300", angle, res.Iterations, err)
		}
	}
}

// BenchmarkEmbed2000 is the exact method at the size of 1000 test and 1000
// sampled triples (here 2000 points of 40 dimensions), the affinities, the
// start and 100 of the figure's at most 5000 iterations.
func BenchmarkEmbed2000(b *testing.B) {
	x, _ := clusters(20, 100, 40, 11)
	opt := DefaultOptions()
	opt.Perplexity, opt.Iterations, opt.Angle = 50, 100, 0
	for b.Loop() {
		if _, err := Embed(x, opt); err != nil {
			b.Fatal(err)
		}
	}
}

// Progress hears every check, every 50 iterations, with the divergence the
// stopping rule sees there.
func TestEmbedProgress(t *testing.T) {
	x, _ := clusters(2, 10, 3, 13)
	opt := DefaultOptions()
	opt.Perplexity, opt.Iterations = 5, 420
	var its []int
	opt.Progress = func(it int, kl float64) {
		its = append(its, it)
		if !(kl > 0) {
			t.Errorf("iteration %d: divergence %v", it, kl)
		}
	}
	res, err := Embed(x, opt)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{50, 100, 150, 200, 250, 300, 350, 400}; !slices.Equal(its, want) || res.Iterations != 420 {
		t.Errorf("checks at %v of %d iterations, want %v of 420", its, res.Iterations, want)
	}
}

// The descent's two phases step by step, written out from scikit-learn's
// rules: exaggerated affinities with momentum 0.5 for
// ExaggerationIterations, then the true ones with momentum 0.8, each phase
// from zero steps and unit gains; delta-bar-delta gains (+0.2 where the
// gradient opposes the last step, ×0.8 down to 0.01 elsewhere).
func TestEmbedPhasesStepByStep(t *testing.T) {
	x, _ := clusters(2, 5, 3, 21)
	n := 10
	opt := DefaultOptions()
	opt.Perplexity, opt.Angle, opt.LearningRate, opt.Seed = 3, 0, 40, 4
	opt.Exaggeration, opt.ExaggerationIterations, opt.Iterations = 6, 3, 7
	g := gram(x)
	p := affinities(squaredDistances(g, n), opt.Perplexity)
	y := principalStart(centredGram(g, n), n, rand.New(rand.NewPCG(opt.Seed, 0x75e)))
	grad := make([]float64, 2*n)
	for _, phase := range []struct {
		iters                  int
		exaggeration, momentum float64
	}{{3, 6, 0.5}, {4, 1, 0.8}} {
		update, gains := make([]float64, 2*n), slices.Repeat([]float64{1}, 2*n)
		for range phase.iters {
			gradient(p, y, phase.exaggeration, grad, false)
			for i, gi := range grad {
				if update[i]*gi < 0 {
					gains[i] += 0.2
				} else {
					gains[i] = math.Max(gains[i]*0.8, 0.01)
				}
				update[i] = phase.momentum*update[i] - opt.LearningRate*gains[i]*gi
				y[i] += update[i]
			}
		}
	}
	res, err := Embed(x, opt)
	if err != nil {
		t.Fatal(err)
	}
	if res.Iterations != 7 {
		t.Errorf("%d iterations, want 7", res.Iterations)
	}
	for i := range n {
		for j := range 2 {
			if got, want := res.Y.At(i, j), y[2*i+j]; math.Abs(got-want) > 1e-9*(1+math.Abs(want)) {
				t.Fatalf("point %d coordinate %d: %v, want %v", i, j, got, want)
			}
		}
	}
}

// The exaggerated phase ends at Iterations too: a descent of fewer
// iterations than ExaggerationIterations stops there.
func TestEmbedShorterThanExaggeration(t *testing.T) {
	x, _ := clusters(2, 5, 3, 22)
	opt := DefaultOptions()
	opt.Perplexity, opt.Iterations = 3, 100
	for _, angle := range []float64{0, 0.5} {
		opt.Angle = angle
		res, err := Embed(x, opt)
		if err != nil || res.Iterations != 100 {
			t.Errorf("angle %v: %d iterations (%v), want 100 of the 250 exaggerated ones", angle, res.Iterations, err)
		}
	}
}
