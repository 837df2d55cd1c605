package metrics

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gekc/graph"
	"gekc/kg"
	"gekc/models"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
)

// TripleFeatures maps triples to feature vectors ψ (one row per triple).
type TripleFeatures func(triples []kg.Triple) *mat.Dense

// ProductUnitFeatures returns the triple features of the kernel triple
// distance (paper, §6.3): the L2-normalised values of the product units of
// a trained model in linear space, e.g. ComplEx's 4d units re_s·re_r·re_o,
// im_s·re_r·im_o, re_s·im_r·im_o and im_s·im_r·re_o, as the paper uses. The
// score function declares its units (models.ProductUnitScore); the model's
// parameters are read when called.
func ProductUnitFeatures(m *models.Model) (TripleFeatures, error) {
	return productUnits(m, true)
}

// RawProductUnitFeatures is ProductUnitFeatures without the normalisation:
// what the paper's code embeds for its t-SNE figure.
func RawProductUnitFeatures(m *models.Model) (TripleFeatures, error) {
	return productUnits(m, false)
}

func productUnits(m *models.Model, normalise bool) (TripleFeatures, error) {
	pu, ok := m.Score.(models.ProductUnitScore)
	if !ok || m.Semantics == models.NonNegative {
		return nil, fmt.Errorf("metrics: product units need an energy-based or squared model whose score declares its product units (e.g. complex, complex2), got %s", m.Name)
	}
	lay, sz := m.Layout, m.Sizes
	n := pu.ProductUnits(sz)
	return func(ts []kg.Triple) *mat.Dense {
		tables := [3][]float64{graph.Float64s(m.Param(lay.Subject)), graph.Float64s(m.Param(lay.Relation)), graph.Float64s(m.Param(lay.Object))}
		var width [3]int
		for v, name := range [3]string{lay.Subject, lay.Relation, lay.Object} {
			width[v] = m.Param(name).Shape()[1]
		}
		row := func(v, i int) []float64 { return tables[v][i*width[v]:][:width[v]] }
		f := mat.NewDense(len(ts), n, nil)
		for i, t := range ts {
			out := f.RawRowView(i)
			pu.ProductUnitValues(sz, row(0, int(t.S)), row(1, int(t.R)), row(2, int(t.O)), out)
			if !normalise {
				continue
			}
			var norm float64
			for _, v := range out {
				norm += v * v
			}
			if norm > 0 {
				inv := 1 / math.Sqrt(norm)
				for j := range out {
					out[j] *= inv
				}
			}
		}
		return f
	}, nil
}

// KTD returns the unbiased estimate of the squared MMD between the feature
// rows of x and y under the polynomial kernel k(a,b) = (aᵀb + 1)³
// (paper, definition 3 and appendix F.3).
func KTD(x, y *mat.Dense) float64 {
	m, _ := x.Dims()
	n, _ := y.Dims()
	if m < 2 || n < 2 {
		return math.NaN()
	}
	kxx := kernelSum(x, x, true)
	kyy := kernelSum(y, y, true)
	kxy := kernelSum(x, y, false)
	return kxx/float64(m*(m-1)) + kyy/float64(n*(n-1)) - 2*kxy/float64(m*n)
}

// kernelSum returns Σ k(a_i, b_j) over all pairs, skipping i == j when
// offDiagonal.
func kernelSum(a, b *mat.Dense, offDiagonal bool) float64 {
	var g mat.Dense
	g.Mul(a, b.T())
	r, c := g.Dims()
	var s float64
	for i := 0; i < r; i++ {
		row := g.RawRowView(i)
		for j := 0; j < c; j++ {
			if offDiagonal && i == j {
				continue
			}
			v := row[j] + 1
			s += v * v * v
		}
	}
	return s
}

// KTDStat is the mean and standard deviation of KTD over random draws.
type KTDStat struct {
	Mean, Std float64
	Draws     int
}

// KTDDraws estimates KTD between two triple sets as in the paper: the mean
// and standard deviation over `draws` pairs of random subsets of size n
// (drawn without replacement from each set).
func KTDDraws(psi TripleFeatures, a, b []kg.Triple, n, draws int, rng *rand.Rand) (KTDStat, error) {
	if len(a) < n || len(b) < n {
		return KTDStat{}, fmt.Errorf("metrics.KTDDraws: need %d triples per set, have %d and %d", n, len(a), len(b))
	}
	if draws < 1 || n < 2 {
		return KTDStat{}, errors.New("metrics.KTDDraws: need at least one draw of two triples")
	}
	fa, fb := psi(a), psi(b)
	vals := make([]float64, draws)
	for i := range vals {
		vals[i] = KTD(rowsOf(fa, rng.Perm(len(a))[:n]), rowsOf(fb, rng.Perm(len(b))[:n]))
	}
	mean, std := stat.MeanStdDev(vals, nil)
	return KTDStat{Mean: mean, Std: std, Draws: draws}, nil
}

func rowsOf(f *mat.Dense, idx []int) *mat.Dense {
	_, c := f.Dims()
	out := mat.NewDense(len(idx), c, nil)
	for i, j := range idx {
		copy(out.RawRowView(i), f.RawRowView(j))
	}
	return out
}

// UniformTriples draws n triples uniformly from E×R×E: KTD's baseline.
func UniformTriples(n, entities, relations int, rng *rand.Rand) []kg.Triple {
	out := make([]kg.Triple, n)
	for i := range out {
		out[i] = kg.Triple{S: int32(rng.IntN(entities)), R: int32(rng.IntN(relations)), O: int32(rng.IntN(entities))}
	}
	return out
}
