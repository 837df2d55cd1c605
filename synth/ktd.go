package synth

import (
	"fmt"
	"math/rand/v2"

	"gekc/kg"
	"gekc/metrics"
	"gekc/models"
)

// KTDToOriginal is the kernel triple distance (paper, §6.3) to the
// original's test triples of the surrogate's test split and, for reference,
// of the original's training split, with ψ the product units of m, the
// model the surrogate was drawn from (metrics.ProductUnitFeatures; the
// paper takes those of a trained energy-based ComplEx). Each is the mean and
// standard deviation over 100 draws of up to 1,000 triples a side, seeded.
func KTDToOriginal(m *models.Model, original *kg.Dataset, d *Sampled, seed uint64) (surrogate, train metrics.KTDStat, err error) {
	psi, err := metrics.ProductUnitFeatures(m)
	if err != nil {
		return surrogate, train, err
	}
	if len(d.Test) == 0 || len(original.Test) == 0 {
		return surrogate, train, fmt.Errorf("synth: KTD needs test triples (surrogate %d, original %d)", len(d.Test), len(original.Test))
	}
	const draws = 100
	rng := rand.New(rand.NewPCG(seed, 0x4b7d))
	size := min(1000, len(original.Test), len(d.Test))
	if surrogate, err = metrics.KTDDraws(psi, d.Test, original.Test, size, draws, rng); err != nil {
		return surrogate, train, err
	}
	train, err = metrics.KTDDraws(psi, original.Train, original.Test, min(size, len(original.Train)), draws, rng)
	return surrogate, train, err
}
