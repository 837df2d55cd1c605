// Command ktd-uniform-components measures what the paper's public code
// reports as a CP+ model's samples. That code draws CP+'s product unit
// uniformly (torch.randint over the rank), which is exact only when every
// component has the same mass; gekc draws it by its mass. For a finished
// non-negative mixture run (cp+, rescal+, tucker+) it prints the kernel
// triple distance to the test triples of samples drawn both ways, with ψ
// from a finished ComplEx run (as -analyze ktd computes it), and the
// perplexity of the components' masses.
//
//	go run ./scripts/ktd-uniform-components -run DIR -features DIR [-data ROOT] [-samples N]
//
// The run is sampled at the parameters its samples come from
// (checkpoint-ll.npz when it was trained with sample_from = "ll").
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"

	"gekc/analysis"
	_ "gekc/graph/openblas"
	"gekc/kg"
	"gekc/metrics"
	"gekc/models"
	"gekc/sweep"
)

func main() {
	run := flag.String("run", "", "finished run `directory` of a non-negative mixture model")
	features := flag.String("features", "", "finished ComplEx run `directory` giving ψ")
	data := flag.String("data", "../shared/data", "data `root`")
	n := flag.Int("samples", 25000, "samples drawn each way")
	flag.Parse()
	if err := measure(*run, *features, *data, *n); err != nil {
		fmt.Fprintln(os.Stderr, "ktd-uniform-components:", err)
		os.Exit(1)
	}
}

func measure(run, features, data string, n int) error {
	if run == "" || features == "" {
		return fmt.Errorf("-run and -features are required")
	}
	fr, err := sweep.LoadFinished(run, data)
	if err != nil {
		return err
	}
	if err := fr.LoadSampledParameters(); err != nil {
		return err
	}
	ref, err := sweep.LoadFinished(features, data)
	if err != nil {
		return err
	}
	psi, err := metrics.ProductUnitFeatures(ref.Model)
	if err != nil {
		return err
	}
	exact, err := models.NewAncestralSampler(fr.Model)
	if err != nil {
		return err
	}
	uniform, err := exact.UniformComponents()
	if err != nil {
		return err
	}
	test := fr.Data.Test
	size := analysis.KTDSize(len(test), n)
	fmt.Printf("%s (%s): component perplexity %.1f of %d\n", fr.ID, fr.Spec.Model, exact.ComponentPerplexity(), fr.Model.Sizes.Rank)
	for _, c := range []struct {
		name string
		s    *models.AncestralSampler
	}{{"by mass (exact)", exact}, {"uniform (the paper's code)", uniform}} {
		ts, err := c.s.Sample(n, rand.New(rand.NewPCG(uint64(fr.Spec.Seed), 1)))
		if err != nil {
			return err
		}
		st, err := analysis.RunKTD(psi, fr.ID, ts, test, size)
		if err != nil {
			return err
		}
		fmt.Printf("components %s: KTD %.3f ± %.3f over %d draws of %d; %.1f%% of samples are training triples\n",
			c.name, st.Mean, st.Std, st.Draws, size, 100*share(ts, fr.Data.Train))
	}
	return nil
}

// share is the fraction of ts that are triples of set.
func share(ts, set []kg.Triple) float64 {
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
