package models

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/stat/distuv"
)

// Default initialisation scales (paper, appendix F.4).
const (
	// EnergyInitStd is the standard deviation of the normal initialisation
	// of energy-based CP and ComplEx (as in kbc).
	EnergyInitStd = 1e-3
	// DirichletConcentration parametrises the initial categorical
	// distributions of non-negative models.
	DirichletConcentration = 1e3
	// LogNormalSigma is the σ of the log-normal initialisation of squared
	// models.
	LogNormalSigma = 1e-3
	// GateInitStd initialises ComplEx+'s reparametrisation gates θ, γ.
	GateInitStd = 1e-2
)

// InitNormal fills x with N(0, std²) draws.
func InitNormal(x []float64, std float64, rng *rand.Rand) {
	for i := range x {
		x[i] = std * rng.NormFloat64()
	}
}

// InitLogDirichletColumns fills the rows×cols table x with log-values such
// that each column, exponentiated, is a draw from a symmetric Dirichlet over
// the rows: each embedding dimension starts as a categorical distribution
// over entities (or relations), as the non-negative models interpret it.
func InitLogDirichletColumns(x []float64, rows, cols int, alpha float64, rng *rand.Rand) {
	g := distuv.Gamma{Alpha: alpha, Beta: 1, Src: rand.NewPCG(rng.Uint64(), rng.Uint64())}
	for j := 0; j < cols; j++ {
		var sum float64
		for i := 0; i < rows; i++ {
			v := g.Rand()
			x[i*cols+j] = v
			sum += v
		}
		ls := math.Log(sum)
		for i := 0; i < rows; i++ {
			x[i*cols+j] = math.Log(x[i*cols+j]) - ls
		}
	}
}

// InitLogNormal fills x with draws of LN(μ, σ²) where μ centres the initial
// log-scores near zero: a score that sums `terms` products of `factors`
// such values is about terms·exp(factors·μ + factors·σ²/2) (Fenton-Wilkinson),
// which is 1 for μ = −log(terms)/factors − σ²/2. For CP terms = d and
// factors = 3, giving the paper's μ = −log(d)/3 − σ²/2.
func InitLogNormal(x []float64, terms float64, factors int, sigma float64, rng *rand.Rand) {
	mu := -math.Log(terms)/float64(factors) - sigma*sigma/2
	for i := range x {
		x[i] = math.Exp(mu + sigma*rng.NormFloat64())
	}
}

// DefaultInit initialises an embedding table the way the paper does for
// each semantics: normal for energy models, log-Dirichlet columns for
// non-negative ones, log-normal for squared ones. terms and factors describe
// the score for the log-normal centring (see InitLogNormal).
func DefaultInit(sem Semantics, t TableSpec, x []float64, rng *rand.Rand, scale, terms float64, factors int) {
	switch sem {
	case Energy:
		InitNormal(x, or(scale, EnergyInitStd), rng)
	case NonNegative:
		InitLogDirichletColumns(x, t.Rows, t.Cols, or(scale, DirichletConcentration), rng)
	case Squared:
		InitLogNormal(x, terms, factors, or(scale, LogNormalSigma), rng)
	}
}

func or(v, def float64) float64 {
	if v > 0 {
		return v
	}
	return def
}
