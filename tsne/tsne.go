package tsne

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// Options are the settings of an embedding; DefaultOptions gives
// scikit-learn's defaults (version 1.2 on).
type Options struct {
	// Perplexity is the effective number of neighbours of each point's
	// Gaussian affinities, at most the number of points less one.
	Perplexity float64
	// Iterations is the most iterations of gradient descent, the
	// exaggerated ones included; the descent stops earlier when the
	// divergence has not fallen for NoProgress iterations or the gradient
	// has vanished (both checked every 50 iterations, as scikit-learn does).
	Iterations, NoProgress int
	// LearningRate of the descent; 0 is scikit-learn's "auto",
	// max(n / Exaggeration / 4, 50) (Belkina et al. 2019).
	LearningRate float64
	// Exaggeration multiplies the affinities for the first
	// ExaggerationIterations, which run with momentum 0.5 (0.8 after).
	Exaggeration           float64
	ExaggerationIterations int
	// Angle is the Barnes–Hut trade-off θ: a quadtree cell whose width is
	// under θ times its distance to a point repels it from its centre of
	// mass, and affinities are kept only to each point's ⌊3·perplexity + 1⌋
	// nearest neighbours; O(n log n) a step. 0 is the exact method, O(n²)
	// a step and n² of memory: a few thousand points at most.
	Angle float64
	// Progress, where set, is called at each check of the descent (every
	// 50 iterations) with the iterations run and the divergence there.
	Progress func(iterations int, kl float64)
	// Seed seeds the start of the principal-component iteration (and the
	// random start of data without spread).
	Seed uint64
}

// DefaultOptions returns perplexity 30, at most 1000 iterations stopping
// after 300 without progress, the automatic learning rate, exaggeration
// 12 for 250 iterations and the Barnes–Hut method at angle 0.5, as
// scikit-learn's TSNE has them.
func DefaultOptions() Options {
	return Options{Perplexity: 30, Iterations: 1000, NoProgress: 300, Exaggeration: 12, ExaggerationIterations: 250, Angle: 0.5}
}

// objective is the divergence a method descends: its gradient (and, with
// withKL, its value, as at the descent's checks) with P multiplied by
// exaggeration, and its value at the end.
type objective interface {
	gradient(y []float64, exaggeration float64, grad []float64, withKL bool) float64
	divergence(y []float64) float64
}

// exact is the exact method's objective over the dense affinities p.
type exact struct{ p []float64 }

func (e exact) gradient(y []float64, exaggeration float64, grad []float64, withKL bool) float64 {
	return gradient(e.p, y, exaggeration, grad, withKL)
}

func (e exact) divergence(y []float64) float64 { return divergence(e.p, y) }

// Result is an embedding: Y holds a point's coordinates per row, KL the
// Kullback–Leibler divergence of the final low-dimensional affinities from
// the input's (what the descent minimises; lower is better), Iterations
// the iterations run.
type Result struct {
	Y          *mat.Dense
	KL         float64
	Iterations int
}

// Embed embeds the rows of x (n points of any dimension) in the plane,
// starting from their first two principal components scaled to a standard
// deviation of 10⁻⁴ on the first, as scikit-learn's init="pca" does. With
// a positive opt.Angle it descends the Barnes–Hut approximation, and
// Result.KL is that approximation's divergence (over the neighbours'
// affinities, Q normalised by the quadtree's sum).
func Embed(x *mat.Dense, opt Options) (Result, error) {
	if x == nil || x.IsEmpty() {
		return Result{}, errors.New("tsne: no points")
	}
	n, dim := x.Dims()
	switch {
	case n < 2:
		return Result{}, fmt.Errorf("tsne: %d points, want at least 2", n)
	case !(opt.Perplexity > 0) || opt.Perplexity > float64(n-1):
		return Result{}, fmt.Errorf("tsne: perplexity %v, want one in (0, %d], at most the number of points less one", opt.Perplexity, n-1)
	case opt.Iterations < 1:
		return Result{}, fmt.Errorf("tsne: %d iterations, want at least one", opt.Iterations)
	case opt.NoProgress < 1:
		return Result{}, fmt.Errorf("tsne: NoProgress %d, want at least one iteration", opt.NoProgress)
	case !(opt.LearningRate >= 0) || math.IsInf(opt.LearningRate, 0):
		return Result{}, fmt.Errorf("tsne: learning rate %v, want a finite non-negative one (0: automatic)", opt.LearningRate)
	case !(opt.Exaggeration >= 1) || math.IsInf(opt.Exaggeration, 0) || opt.ExaggerationIterations < 0:
		return Result{}, fmt.Errorf("tsne: exaggeration %v for %d iterations, want a finite one of at least 1", opt.Exaggeration, opt.ExaggerationIterations)
	case !(opt.Angle >= 0 && opt.Angle <= 1):
		return Result{}, fmt.Errorf("tsne: angle %v, want one in [0, 1] (0: the exact method)", opt.Angle)
	}
	for i := range n {
		for j := range dim {
			if v := x.At(i, j); math.IsNaN(v) || math.IsInf(v, 0) {
				return Result{}, fmt.Errorf("tsne: point %d coordinate %d is %v", i, j, v)
			}
		}
	}
	eta := opt.LearningRate
	if eta == 0 {
		eta = math.Max(float64(n)/opt.Exaggeration/4, 50)
	}
	rng := rand.New(rand.NewPCG(opt.Seed, 0x75e))
	var (
		obj objective
		y   []float64
	)
	if opt.Angle == 0 {
		g := gram(x)
		p := affinities(squaredDistances(g, n), opt.Perplexity)
		obj, y = exact{p}, principalStart(centredGram(g, n), n, rng)
	} else {
		obj, y = &barnesHut{p: sparseAffinities(x, opt.Perplexity), theta: opt.Angle}, principalStart(centredData(x), n, rng)
	}
	grad, update, gains := make([]float64, 2*n), make([]float64, 2*n), make([]float64, 2*n)
	// Two phases, as scikit-learn's: exaggerated affinities with momentum
	// 0.5, then the true ones with 0.8, each from zero steps and unit gains.
	it := 0
	for _, phase := range []struct {
		until                  int
		exaggeration, momentum float64
		noProgress             int
	}{
		{min(opt.ExaggerationIterations, opt.Iterations), opt.Exaggeration, 0.5, opt.ExaggerationIterations},
		{opt.Iterations, 1, 0.8, opt.NoProgress},
	} {
		clear(update)
		for i := range gains {
			gains[i] = 1
		}
		best, bestIt := math.Inf(1), it
		for ; it < phase.until; it++ {
			check := (it+1)%50 == 0
			kl := obj.gradient(y, phase.exaggeration, grad, check)
			var norm float64
			for i, g := range grad {
				// Delta-bar-delta gains: grow where the gradient keeps the
				// sign it had when the last step was taken against it.
				if update[i]*g < 0 {
					gains[i] += 0.2
				} else {
					gains[i] = math.Max(gains[i]*0.8, 0.01)
				}
				update[i] = phase.momentum*update[i] - eta*gains[i]*g
				y[i] += update[i]
				norm += gains[i] * g * gains[i] * g // scikit-learn's norm: of the gained gradient
			}
			if check { // both rules only where scikit-learn checks them
				if opt.Progress != nil {
					opt.Progress(it+1, kl)
				}
				if kl < best {
					best, bestIt = kl, it
				} else if it-bestIt > phase.noProgress {
					it++
					break
				}
				if math.Sqrt(norm) <= 1e-7 {
					it++
					break
				}
			}
		}
	}
	for i, v := range y {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return Result{}, fmt.Errorf("tsne: the descent diverged (coordinate %d of point %d is %v by iteration %d); try a lower learning rate", i%2, i/2, v, it)
		}
	}
	return Result{Y: mat.NewDense(n, 2, y), KL: obj.divergence(y), Iterations: it}, nil
}

// gram returns x·xᵀ, row-major.
func gram(x *mat.Dense) []float64 {
	n, _ := x.Dims()
	g := mat.NewDense(n, n, nil)
	g.Mul(x, x.T())
	return g.RawMatrix().Data
}

// squaredDistances returns the n×n squared Euclidean distances of the
// points whose Gram matrix is g, row-major.
func squaredDistances(g []float64, n int) []float64 {
	d := make([]float64, n*n)
	for i := range n {
		for j := range n {
			if i != j {
				d[i*n+j] = math.Max(g[i*n+i]+g[j*n+j]-2*g[i*n+j], 0)
			}
		}
	}
	return d
}

// centredGram is the doubly centred Gram matrix H·G·H of the points whose
// Gram matrix is g (n×n, row-major): the centred points' Gram matrix.
func centredGram(g []float64, n int) gramOperator {
	rowMean := make([]float64, n)
	var mean float64
	for i := range n {
		for j := range n {
			rowMean[i] += g[i*n+j]
		}
		rowMean[i] /= float64(n)
		mean += rowMean[i] / float64(n)
	}
	k := mat.NewSymDense(n, nil)
	for i := range n {
		for j := i; j < n; j++ {
			k.SetSym(i, j, g[i*n+j]-rowMean[i]-rowMean[j]+mean)
		}
	}
	return gramOperator{mul: func(dst, v *mat.Dense) { dst.Mul(k, v) }, mean: mean}
}

// centredData is the centred points' Gram matrix (X − 1x̄ᵀ)(X − 1x̄ᵀ)ᵀ as
// products with X, never formed: for more points than an n×n matrix fits.
func centredData(x *mat.Dense) gramOperator {
	n, dim := x.Dims()
	xbar := mat.NewVecDense(dim, nil)
	for i := range n {
		xbar.AddScaledVec(xbar, 1/float64(n), x.RowView(i))
	}
	ones := mat.NewVecDense(n, nil)
	for i := range n {
		ones.SetVec(i, 1)
	}
	return gramOperator{mul: func(dst, v *mat.Dense) {
		var w, sums, outer mat.Dense
		w.Mul(x.T(), v) // (X − 1x̄ᵀ)ᵀ v = Xᵀv − x̄(1ᵀv)
		sums.Mul(ones.T(), v)
		outer.Mul(xbar, &sums)
		w.Sub(&w, &outer)
		dst.Mul(x, &w) // (X − 1x̄ᵀ) w = Xw − 1(x̄ᵀw)
		sums.Reset()
		sums.Mul(xbar.T(), &w)
		outer.Reset()
		outer.Mul(ones, &sums)
		dst.Sub(dst, &outer)
	}, mean: mat.Dot(xbar, xbar)}
}

// gramOperator multiplies by a centred Gram matrix; mean is the mean entry
// of the uncentred one, the scale below which the points have no spread.
type gramOperator struct {
	mul  func(dst, v *mat.Dense)
	mean float64
}

// principalStart returns the points' first two principal-component scores
// (of the centred Gram matrix k, by randomised subspace iteration as
// scikit-learn's PCA computes them for such sizes: 10 extra vectors, 7
// iterations, started from rng), scaled so that the first has standard
// deviation 10⁻⁴ (over n, as numpy's), each component's largest entry
// positive; points without spread start at N(0, (10⁻⁴)²) each coordinate.
func principalStart(k gramOperator, n int, rng *rand.Rand) []float64 {
	mean := k.mean
	block := min(n, 12)
	v := mat.NewDense(n, block, nil)
	for i := range n {
		for c := range block {
			v.Set(i, c, rng.NormFloat64())
		}
	}
	orthonormalColumns(v)
	var w mat.Dense
	for range 7 {
		k.mul(&w, v)
		v.Copy(&w)
		orthonormalColumns(v)
	}
	k.mul(&w, v)
	var t mat.Dense
	t.Mul(v.T(), &w)
	small := mat.NewSymDense(block, nil)
	for a := range block {
		for b := a; b < block; b++ {
			small.SetSym(a, b, (t.At(a, b)+t.At(b, a))/2)
		}
	}
	var eig mat.EigenSym
	y := make([]float64, 2*n)
	if !eig.Factorize(small, true) {
		return randomStart(y, rng)
	}
	values := eig.Values(nil) // ascending
	var vecs, comps mat.Dense
	eig.VectorsTo(&vecs)
	comps.Mul(v, &vecs)
	if !(values[block-1] > 1e-12*math.Max(1, math.Abs(mean))) { // no spread
		return randomStart(y, rng)
	}
	for c := range 2 {
		col := block - 1 - c
		big := 0
		for i := range n {
			if math.Abs(comps.At(i, col)) > math.Abs(comps.At(big, col)) {
				big = i
			}
		}
		scale := math.Sqrt(math.Max(values[col], 0))
		if comps.At(big, col) < 0 {
			scale = -scale
		}
		for i := range n {
			y[2*i+c] = comps.At(i, col) * scale
		}
	}
	var m, ss float64
	for i := range n {
		m += y[2*i] / float64(n)
	}
	for i := range n {
		ss += (y[2*i] - m) * (y[2*i] - m)
	}
	scale := 1e-4 / math.Sqrt(ss/float64(n)) // numpy's std: over n
	for i := range y {
		y[i] *= scale
	}
	return y
}

// orthonormalColumns makes v's columns orthonormal by modified
// Gram–Schmidt, twice over for accuracy; a column that vanishes stays zero.
func orthonormalColumns(v *mat.Dense) {
	_, c := v.Dims()
	for range 2 {
		for a := range c {
			col := v.ColView(a).(*mat.VecDense)
			for b := range a {
				col.AddScaledVec(col, -mat.Dot(col, v.ColView(b)), v.ColView(b))
			}
			if norm := mat.Norm(col, 2); norm > 0 {
				col.ScaleVec(1/norm, col)
			}
		}
	}
}

// randomStart fills y with N(0, (10⁻⁴)²) coordinates.
func randomStart(y []float64, rng *rand.Rand) []float64 {
	for i := range y {
		y[i] = 1e-4 * rng.NormFloat64()
	}
	return y
}

// affinities returns the symmetric joint affinities p_ij = (p_j|i + p_i|j)
// / 2n of the squared distances d (n×n, row-major), each conditional
// p_·|i a Gaussian whose precision is found by bisection to give entropy
// log(perplexity) (the closest one found where none does, as when many
// points coincide).
func affinities(d []float64, perplexity float64) []float64 {
	n := int(math.Round(math.Sqrt(float64(len(d)))))
	cond := make([]float64, n*n)
	for i := range n {
		conditional(d[i*n:(i+1)*n], i, perplexity, cond[i*n:(i+1)*n])
	}
	p := make([]float64, n*n)
	for i := range n {
		for j := range n {
			if i != j {
				p[i*n+j] = math.Max((cond[i*n+j]+cond[j*n+i])/float64(2*n), 1e-12)
			}
		}
	}
	return p
}

// conditional writes into row the Gaussian affinities p_j|i of point i,
// given its squared distances di to every point, at the precision β whose
// entropy is log(perplexity) within 10⁻⁵ nats, or the last of 100
// bisection steps (scikit-learn's rule too). It returns that entropy.
func conditional(di []float64, i int, perplexity float64, row []float64) float64 {
	target := math.Log(perplexity)
	// Distances relative to the nearest other point keep exp in range.
	nearest := math.Inf(1)
	for j, v := range di {
		if j != i {
			nearest = math.Min(nearest, v)
		}
	}
	entropy := func(beta float64) float64 {
		var sum, mean float64
		for j, v := range di {
			row[j] = 0
			if j != i {
				row[j] = math.Exp(-beta * (v - nearest))
				sum += row[j]
				mean += row[j] * (v - nearest)
			}
		}
		for j := range row {
			row[j] /= sum
		}
		return math.Log(sum) + beta*mean/sum
	}
	lo, hi, beta := 0.0, math.Inf(1), 1.0
	var h float64
	for range 100 {
		if h = entropy(beta); math.Abs(h-target) < 1e-5 {
			break
		}
		if h > target { // too flat: sharpen
			lo = beta
			if math.IsInf(hi, 1) {
				beta *= 2
			} else {
				beta = (beta + hi) / 2
			}
		} else {
			hi = beta
			beta = (beta + lo) / 2
		}
	}
	return h
}

// gradient writes into grad the gradient of KL(P‖Q) with respect to the
// positions y (n×2, row-major), P multiplied by exaggeration:
// 4 Σ_j (e·p_ij − q_ij) (y_i − y_j) / (1 + |y_i − y_j|²). With withKL it
// also returns that divergence, KL(e·P‖Q) (logarithms of every pair: only
// when the descent checks its progress). P is symmetric, so each pair is
// visited once, and Q's kernel is recomputed rather than kept: two passes
// over n²/2 pairs and no n² scratch.
func gradient(p, y []float64, exaggeration float64, grad []float64, withKL bool) float64 {
	n := len(y) / 2
	z := normaliser(y)
	clear(grad)
	var kl float64
	for i := range n {
		xi, yi := y[2*i], y[2*i+1]
		row := p[i*n : (i+1)*n]
		var gx, gy float64
		for j := i + 1; j < n; j++ {
			dx, dy := xi-y[2*j], yi-y[2*j+1]
			k := 1 / (1 + dx*dx + dy*dy)
			q, pij := k/z, exaggeration*row[j]
			if withKL {
				kl += 2 * pij * math.Log(pij/math.Max(q, 1e-12))
			}
			w := (pij - q) * k
			gx, gy = gx+w*dx, gy+w*dy
			grad[2*j] -= w * dx
			grad[2*j+1] -= w * dy
		}
		grad[2*i] += gx
		grad[2*i+1] += gy
	}
	for i := range grad {
		grad[i] *= 4
	}
	return kl
}

// normaliser is Σ_{i≠j} 1/(1 + |y_i − y_j|²), the normaliser of Q.
func normaliser(y []float64) float64 {
	n := len(y) / 2
	var sum float64
	for i := range n {
		xi, yi := y[2*i], y[2*i+1]
		for j := i + 1; j < n; j++ {
			dx, dy := xi-y[2*j], yi-y[2*j+1]
			sum += 1 / (1 + dx*dx + dy*dy)
		}
	}
	return 2 * sum
}

// divergence is KL(P‖Q) of the positions y.
func divergence(p, y []float64) float64 {
	n := len(y) / 2
	z := normaliser(y)
	var kl float64
	for i := range n {
		for j := range n {
			if j != i {
				dx, dy := y[2*i]-y[2*j], y[2*i+1]-y[2*j+1]
				q := 1 / (1 + dx*dx + dy*dy) / z
				kl += p[i*n+j] * math.Log(p[i*n+j]/math.Max(q, 1e-12))
			}
		}
	}
	return kl
}
