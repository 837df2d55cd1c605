package analysis

import (
	"fmt"
	"io"
	"math/rand/v2"

	"gekc/kg"
	"gekc/metrics"
	"gekc/models"
)

// UniformComponents measures what the paper's public code reports as a
// non-negative mixture model's samples (CP+, RESCAL+, TuckER+). That code
// draws the product unit uniformly (torch.randint over the rank), which
// is exact only when every component has the same mass; gekc draws it by
// its mass. It prints the components' perplexity, then the KTD to the
// test triples of n samples drawn each way (ψ from features) and the
// share of them that are training triples.
func UniformComponents(w io.Writer, id string, m *models.Model, ds *kg.Dataset, psi metrics.TripleFeatures, n int, seed uint64) error {
	exact, err := models.NewAncestralSampler(m)
	if err != nil {
		return err
	}
	uniform, err := exact.UniformComponents()
	if err != nil {
		return err
	}
	size := KTDSize(len(ds.Test), n)
	fmt.Fprintf(w, "%s (%s): component perplexity %.1f of %d\n", id, m.Name, exact.ComponentPerplexity(), m.Sizes.Rank)
	for _, c := range []struct {
		name string
		s    *models.AncestralSampler
	}{{"by mass (exact)", exact}, {"uniform (the paper's code)", uniform}} {
		ts, err := c.s.Sample(n, rand.New(rand.NewPCG(seed, 1)))
		if err != nil {
			return err
		}
		st, err := RunKTD(psi, id, ts, ds.Test, size)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "components %s: KTD %.3f ± %.3f over %d draws of %d; %.1f%% of samples are training triples\n",
			c.name, st.Mean, st.Std, st.Draws, size, 100*shareIn(ts, ds.Train))
	}
	return nil
}

// shareIn is the fraction of ts that are triples of set.
func shareIn(ts, set []kg.Triple) float64 {
	in := make(map[kg.Triple]bool, len(set))
	for _, t := range set {
		in[t] = true
	}
	hits := 0
	for _, t := range ts {
		if in[t] {
			hits++
		}
	}
	return float64(hits) / float64(len(ts))
}
