package tsne

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// clusters returns k clusters of m points each in dim dimensions, centres
// 10 apart on the axes and spread 0.5, with each point's cluster.
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
					v += 10
				}
				x.Set(row, j, v)
			}
		}
	}
	return x, label
}

// Every conditional distribution has the perplexity asked for: entropy
// log(perplexity), summing to one, none on the point itself.
func TestConditionalPerplexity(t *testing.T) {
	x, _ := clusters(3, 20, 5, 1)
	d := squaredDistances(x)
	n := 60
	for _, perp := range []float64{2, 10, 30} {
		for i := range n {
			row := make([]float64, n)
			if err := conditional(d[i*n:(i+1)*n], i, perp, row); err != nil {
				t.Fatal(err)
			}
			var sum, h float64
			for _, v := range row {
				sum += v
				if v > 0 {
					h -= v * math.Log(v)
				}
			}
			if row[i] != 0 || math.Abs(sum-1) > 1e-12 || math.Abs(h-math.Log(perp)) > 1e-4 {
				t.Fatalf("perplexity %v, point %d: self %v, sum %v, entropy %v want %v", perp, i, row[i], sum, h, math.Log(perp))
			}
		}
	}
}

// The squared distances are those of the coordinates.
func TestSquaredDistances(t *testing.T) {
	x := mat.NewDense(3, 2, []float64{0, 0, 3, 4, -1, 1})
	want := []float64{0, 25, 2, 25, 0, 25, 2, 25, 0}
	for i, v := range squaredDistances(x) {
		if math.Abs(v-want[i]) > 1e-12 {
			t.Errorf("entry %d: %v, want %v", i, v, want[i])
		}
	}
}

// The gradient is that of KL(P‖Q) (exaggeration 1) by central differences.
func TestGradientFiniteDifferences(t *testing.T) {
	x, _ := clusters(2, 4, 3, 2)
	p, err := affinities(squaredDistances(x), 3)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	y := make([]float64, 16)
	for i := range y {
		y[i] = rng.NormFloat64()
	}
	num, grad := make([]float64, 64), make([]float64, 16)
	gradient(p, y, 1, num, grad)
	const h = 1e-6
	for i := range y {
		keep := y[i]
		y[i] = keep + h
		up := divergence(p, y, num)
		y[i] = keep - h
		down := divergence(p, y, num)
		y[i] = keep
		if fd := (up - down) / (2 * h); math.Abs(fd-grad[i]) > 1e-6*math.Max(1, math.Abs(fd)) {
			t.Errorf("coordinate %d: gradient %v, finite difference %v", i, grad[i], fd)
		}
	}
}

// Well-separated clusters stay apart: each point's nearest neighbour in
// the plane is of its own cluster, the divergence is low, and the same
// seed gives the same embedding.
func TestEmbedSeparatesClusters(t *testing.T) {
	x, label := clusters(4, 25, 10, 5)
	opt := DefaultOptions()
	opt.Perplexity, opt.Iterations, opt.Seed = 15, 500, 7
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
		t.Errorf("%d of %d nearest neighbours of another cluster; KL %v", wrong, n, res.KL)
	}
	again, err := Embed(x, opt)
	if err != nil || !mat.Equal(again.Y, res.Y) || again.KL != res.KL {
		t.Errorf("the same seed gave another embedding (%v)", err)
	}
	opt.Seed++
	if other, err := Embed(x, opt); err != nil || mat.Equal(other.Y, res.Y) {
		t.Errorf("another seed gave the same embedding (%v)", err)
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
	same := mat.NewDense(6, 2, nil) // all points equal: no Gaussian has the perplexity
	def := DefaultOptions()
	with := func(f func(*Options)) Options { o := def; o.Perplexity = 3; f(&o); return o }
	for _, tc := range []struct {
		name string
		x    *mat.Dense
		opt  Options
		want string
	}{
		{"one point", mat.NewDense(1, 2, nil), def, "1 points"},
		{"perplexity of all points", x, with(func(o *Options) { o.Perplexity = 10 }), "perplexity 10"},
		{"zero perplexity", x, with(func(o *Options) { o.Perplexity = 0 }), "perplexity 0"},
		{"no iterations", x, with(func(o *Options) { o.Iterations = 0 }), "iterations"},
		{"exaggeration below one", x, with(func(o *Options) { o.Exaggeration = 0.5 }), "exaggeration"},
		{"negative learning rate", x, with(func(o *Options) { o.LearningRate = -1 }), "learning rate"},
		{"NaN", nan, with(func(*Options) {}), "point 3 coordinate 1 is NaN"},
		{"equal points", same, with(func(*Options) {}), "too many equal points"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Embed(tc.x, tc.opt); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// BenchmarkEmbed2000 is the paper's figure's size: 1000 test and 1000
// sampled triples (here 2000 points of 40 dimensions), 100 of the
// figure's 5000 iterations, so ns/op × 50 is a figure's descent.
func BenchmarkEmbed2000(b *testing.B) {
	x, _ := clusters(20, 100, 40, 11)
	opt := DefaultOptions()
	opt.Perplexity, opt.Iterations = 50, 100
	for b.Loop() {
		if _, err := Embed(x, opt); err != nil {
			b.Fatal(err)
		}
	}
}
