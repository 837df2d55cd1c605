package metrics

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gekc/graph" // also routes gonum's matrix products through OpenBLAS
	"gekc/kg"
	"gekc/models"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
)

// TripleFeatures maps triples to feature vectors ψ (one row per triple).
type TripleFeatures func(triples []kg.Triple) *mat.Dense

// ComplExFeatures returns the triple features of the kernel triple distance
// (paper, §6.3): the L2-normalised outputs of the 4d product units of a
// trained ComplEx, re_s·re_r·re_o, im_s·re_r·im_o, re_s·im_r·im_o and
// im_s·im_r·re_o. The model's parameters are read when called.
func ComplExFeatures(m *models.Model) (TripleFeatures, error) {
	if _, ok := m.Score.(models.ComplEx); !ok || m.Semantics == models.NonNegative {
		return nil, fmt.Errorf("metrics.ComplExFeatures: need a ComplEx or ComplEx² model, got %s", m.Name)
	}
	d := m.Sizes.Rank
	return func(ts []kg.Triple) *mat.Dense {
		e, w := graph.Float64s(m.Param("entity")), graph.Float64s(m.Param("relation"))
		f := mat.NewDense(len(ts), 4*d, nil)
		for i, t := range ts {
			s, r, o := e[int(t.S)*2*d:][:2*d], w[int(t.R)*2*d:][:2*d], e[int(t.O)*2*d:][:2*d]
			row := f.RawRowView(i)
			var norm float64
			for j := 0; j < d; j++ {
				rs, is, rr, ir, ro, io := s[j], s[d+j], r[j], r[d+j], o[j], o[d+j]
				row[j], row[d+j], row[2*d+j], row[3*d+j] = rs*rr*ro, is*rr*io, rs*ir*io, is*ir*ro
				for _, v := range []float64{row[j], row[d+j], row[2*d+j], row[3*d+j]} {
					norm += v * v
				}
			}
			if norm > 0 {
				inv := 1 / math.Sqrt(norm)
				for j := range row {
					row[j] *= inv
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
