package sweep

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"time"

	"gekc/analysis"
	"gekc/internal/atomicfile"
	"gekc/kg"
	"gekc/metrics"
	"gekc/report"
	"gekc/tsne"

	"gonum.org/v1/gonum/mat"
)

// TSNEName is the t-SNE figure of a run (-analyze tsne), in its directory.
const TSNEName = "tsne.png"

// tsneTriples is the most test triples, and sampled ones, a figure embeds:
// the paper's code embeds min(25,000, |test|) of each.
const tsneTriples = 25000

// tsneOptions are the paper's: perplexity 50, at most 5000 iterations,
// the rest scikit-learn's defaults (the Barnes–Hut method at angle 0.5).
func tsneOptions(seed uint64) tsne.Options {
	o := tsne.DefaultOptions()
	o.Perplexity, o.Iterations, o.Seed = 50, 5000, seed
	return o
}

// tsne draws the paper's figure "Sampled triples are close to test
// triples" for every selected finished GeKC run of ψ's data set (others
// are passed over): the product units of ψ's model, unnormalised as the
// paper's code takes them, of the test triples (25,000 drawn where there
// are more) and as many of the run's samples (its stored ones, else drawn
// and written to samples.tsv as -analyze samples does), embedded together
// by Barnes–Hut t-SNE as the paper's code does, into runs/<id>/tsne.png
// (replacing a figure of another ψ). The triples are drawn with the run's
// KTD seed, so a figure is the same however many runs an analysis covers.
func (a *Analysis) tsne(ctx context.Context) error {
	ref, _, err := a.features()
	if err != nil {
		return err
	}
	psi, err := metrics.RawProductUnitFeatures(ref.Model)
	if err != nil {
		return err
	}
	ds := ref.Data
	return a.each(ctx, nil, func(fr *Finished) error {
		if fr.Spec.Dataset != ref.Spec.Dataset {
			return nil
		}
		samples, err := runSamples(fr, a.Samples, a.Stderr)
		if err != nil {
			return err
		}
		rng := rand.New(rand.NewPCG(analysis.KTDRunSeed(fr.ID), 0x75f)) // tsne.Embed's stream is 0x75e
		n := min(tsneTriples, len(ds.Test), len(samples))
		if n < 2 {
			return fmt.Errorf("t-SNE of %d test and %d sampled triples: too few", len(ds.Test), len(samples))
		}
		test, sampled := draw(ds.Test, n, rng), draw(samples, n, rng)
		start := time.Now()
		var x mat.Dense
		x.Stack(psi(test), psi(sampled))
		opt := tsneOptions(analysis.KTDRunSeed(fr.ID))
		// The perplexity must stay below the number of points: a third of
		// them on a small data set.
		opt.Perplexity = min(opt.Perplexity, float64(2*n)/3)
		opt.Progress = func(it int, kl float64) {
			if it%1000 == 0 {
				fmt.Fprintf(a.Stderr, "%s: t-SNE iteration %d, KL %.3f, %s\n", fr.ID, it, kl, time.Since(start).Round(time.Second))
			}
		}
		res, err := tsne.Embed(&x, opt)
		if err != nil {
			return err
		}
		title := fmt.Sprintf("%s, sampled at its %s\nt-SNE (Barnes–Hut, angle %g) of the product units of %s\nperplexity %g, %d iterations, KL %.3f",
			fr.ID, sampledAt(fr.Record), opt.Angle, ref.ID, opt.Perplexity, res.Iterations, res.KL)
		png, err := report.TSNE(title, res.Y, n)
		if err != nil {
			return err
		}
		if err := atomicfile.WriteFile(filepath.Join(fr.Dir, TSNEName), png, 0o644); err != nil {
			return err
		}
		fmt.Fprintf(a.Stderr, "%s: t-SNE of %d test and %d sampled triples, Barnes–Hut at angle %g, perplexity %g, %d iterations, KL %.3f, in %s: %s\n",
			fr.ID, n, n, opt.Angle, opt.Perplexity, res.Iterations, res.KL, time.Since(start).Round(time.Second), filepath.Join(fr.Dir, TSNEName))
		return nil
	})
}

// draw returns n of ts chosen uniformly without replacement (all of them,
// in order, when there are no more).
func draw(ts []kg.Triple, n int, rng *rand.Rand) []kg.Triple {
	if n >= len(ts) {
		return ts
	}
	out := make([]kg.Triple, n)
	for i, j := range rng.Perm(len(ts))[:n] {
		out[i] = ts[j]
	}
	return out
}
