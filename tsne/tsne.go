package tsne

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// Options are the settings of an embedding; DefaultOptions gives
// scikit-learn's defaults.
type Options struct {
	// Perplexity is the effective number of neighbours of each point's
	// Gaussian affinities; it must be below the number of points.
	Perplexity float64
	// Iterations of gradient descent, the early-exaggeration ones included.
	Iterations int
	// LearningRate of the descent; 0 is scikit-learn's "auto",
	// max(n / Exaggeration / 4, 50) (Belkina et al. 2019).
	LearningRate float64
	// Exaggeration multiplies the affinities for the first
	// ExaggerationIterations, which then run with momentum 0.5 (0.8 after).
	Exaggeration           float64
	ExaggerationIterations int
	// Seed seeds the initial positions, N(0, 10⁻⁴) each.
	Seed uint64
}

// DefaultOptions returns perplexity 30, 1000 iterations, the automatic
// learning rate and exaggeration 12 for 250 iterations, as scikit-learn's
// TSNE has them.
func DefaultOptions() Options {
	return Options{Perplexity: 30, Iterations: 1000, Exaggeration: 12, ExaggerationIterations: 250}
}

// Result is an embedding: Y holds a point's coordinates per row, KL the
// Kullback–Leibler divergence of the final low-dimensional affinities from
// the input's (what the descent minimises; lower is better).
type Result struct {
	Y  *mat.Dense
	KL float64
}

// Embed embeds the rows of x (n points of any dimension) in the plane.
func Embed(x *mat.Dense, opt Options) (Result, error) {
	n, dim := x.Dims()
	switch {
	case n < 2:
		return Result{}, fmt.Errorf("tsne: %d points, want at least 2", n)
	case !(opt.Perplexity > 0) || opt.Perplexity >= float64(n):
		return Result{}, fmt.Errorf("tsne: perplexity %v, want one in (0, %d), below the number of points", opt.Perplexity, n)
	case opt.Iterations < 1 || opt.ExaggerationIterations < 0 || !(opt.Exaggeration >= 1) || opt.LearningRate < 0 || math.IsInf(opt.LearningRate, 0):
		return Result{}, fmt.Errorf("tsne: options %+v: want iterations ≥ 1, exaggeration ≥ 1 and a non-negative learning rate", opt)
	}
	for i := range n {
		for j := range dim {
			if v := x.At(i, j); math.IsNaN(v) || math.IsInf(v, 0) {
				return Result{}, fmt.Errorf("tsne: point %d coordinate %d is %v", i, j, v)
			}
		}
	}
	p, err := affinities(squaredDistances(x), opt.Perplexity)
	if err != nil {
		return Result{}, err
	}
	eta := opt.LearningRate
	if eta == 0 {
		eta = math.Max(float64(n)/opt.Exaggeration/4, 50)
	}
	rng := rand.New(rand.NewPCG(opt.Seed, 0x75e))
	y := make([]float64, 2*n)
	for i := range y {
		y[i] = 1e-4 * rng.NormFloat64()
	}
	grad, update, gains := make([]float64, 2*n), make([]float64, 2*n), make([]float64, 2*n)
	for i := range gains {
		gains[i] = 1
	}
	num := make([]float64, n*n)
	for it := range opt.Iterations {
		exaggeration, momentum := 1.0, 0.8
		if it < opt.ExaggerationIterations {
			exaggeration, momentum = opt.Exaggeration, 0.5
		}
		gradient(p, y, exaggeration, num, grad)
		for i, g := range grad {
			// Delta-bar-delta gains: grow where the gradient turned
			// against the last step.
			if update[i]*g < 0 {
				gains[i] += 0.2
			} else {
				gains[i] = math.Max(gains[i]*0.8, 0.01)
			}
			update[i] = momentum*update[i] - eta*gains[i]*g
			y[i] += update[i]
		}
	}
	kl := divergence(p, y, num)
	if math.IsNaN(kl) || math.IsInf(kl, 0) {
		return Result{}, errors.New("tsne: the descent diverged (non-finite divergence); try a lower learning rate")
	}
	return Result{Y: mat.NewDense(n, 2, y), KL: kl}, nil
}

// squaredDistances returns the n×n squared Euclidean distances between
// the rows of x, row-major, through one product x·xᵀ.
func squaredDistances(x *mat.Dense) []float64 {
	n, _ := x.Dims()
	var g mat.Dense
	g.Mul(x, x.T())
	d := make([]float64, n*n)
	for i := range n {
		for j := range n {
			if i != j {
				d[i*n+j] = math.Max(g.At(i, i)+g.At(j, j)-2*g.At(i, j), 0)
			}
		}
	}
	return d
}

// affinities returns the symmetric joint affinities p_ij = (p_j|i + p_i|j)
// / 2n of the squared distances d (n×n, row-major), each conditional
// p_·|i a Gaussian whose precision is found by bisection to give entropy
// log(perplexity).
func affinities(d []float64, perplexity float64) ([]float64, error) {
	n := int(math.Sqrt(float64(len(d))))
	cond := make([]float64, n*n)
	for i := range n {
		if err := conditional(d[i*n:(i+1)*n], i, perplexity, cond[i*n:(i+1)*n]); err != nil {
			return nil, fmt.Errorf("tsne: point %d: %w", i, err)
		}
	}
	p := make([]float64, n*n)
	for i := range n {
		for j := range n {
			if i != j {
				p[i*n+j] = math.Max((cond[i*n+j]+cond[j*n+i])/float64(2*n), 1e-12)
			}
		}
	}
	return p, nil
}

// conditional writes into row the Gaussian affinities p_j|i of point i,
// given its squared distances di to every point, at the precision β whose
// entropy is log(perplexity) (within 10⁻⁵ nats).
func conditional(di []float64, i int, perplexity float64, row []float64) error {
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
	for range 200 {
		h := entropy(beta)
		if math.Abs(h-target) < 1e-5 {
			return nil
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
	if h := entropy(beta); math.Abs(h-target) > 1e-3 {
		return fmt.Errorf("no Gaussian of perplexity %v (entropy %.4f, want %.4f): too many equal points?", perplexity, h, target)
	}
	return nil
}

// gradient writes into grad the gradient of KL(P‖Q) with respect to the
// positions y (n×2, row-major), P multiplied by exaggeration:
// 4 Σ_j (e·p_ij − q_ij) (y_i − y_j) / (1 + |y_i − y_j|²). num is scratch
// of n² entries.
func gradient(p, y []float64, exaggeration float64, num, grad []float64) {
	n := len(y) / 2
	sum := kernel(y, num)
	for i := range n {
		var gx, gy float64
		for j := range n {
			w := (exaggeration*p[i*n+j] - num[i*n+j]/sum) * num[i*n+j]
			gx += w * (y[2*i] - y[2*j])
			gy += w * (y[2*i+1] - y[2*j+1])
		}
		grad[2*i], grad[2*i+1] = 4*gx, 4*gy
	}
}

// kernel writes the Student-t kernel 1/(1 + |y_i − y_j|²) of every pair
// into num (0 on the diagonal) and returns its sum, the normaliser of Q.
func kernel(y, num []float64) float64 {
	n := len(y) / 2
	var sum float64
	for i := range n {
		num[i*n+i] = 0
		for j := i + 1; j < n; j++ {
			dx, dy := y[2*i]-y[2*j], y[2*i+1]-y[2*j+1]
			k := 1 / (1 + dx*dx + dy*dy)
			num[i*n+j], num[j*n+i] = k, k
			sum += 2 * k
		}
	}
	return sum
}

// divergence is KL(P‖Q) of the positions y.
func divergence(p, y, num []float64) float64 {
	sum := kernel(y, num)
	var kl float64
	for ij, pij := range p {
		if pij > 0 && num[ij] > 0 {
			kl += pij * math.Log(pij/math.Max(num[ij]/sum, 1e-12))
		}
	}
	return kl
}
