package analysis

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"time"

	"gekc/internal/atomicfile"
	"gekc/kg"
	"gekc/metrics"
	"gekc/report"
	"gekc/resultsdir"
	"gekc/tsne"

	"gonum.org/v1/gonum/mat"
)

// TSNEName is the t-SNE figure of a run (analyze tsne), in its directory.
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

// tsneFigure draws the paper's figure "Sampled triples are close to test
// triples" for every selected finished GeKC run of ψ's data set (others
// are passed over): the product units of ψ's model, unnormalised as the
// paper's code takes them, of the test triples (25,000 drawn where there
// are more) and as many of the run's samples (its stored ones, else drawn
// and written to samples.tsv as the samples analysis does), embedded
// together by Barnes–Hut t-SNE as the paper's code does, into
// runs/<id>/tsne.png (replacing a figure of another ψ). The triples are
// drawn with the run's KTD seed, so a figure is the same however many runs
// an analysis covers.
type tsneFigure struct {
	o   *Options
	ref *resultsdir.Finished // ψ's run
	psi metrics.TripleFeatures
}

func newTSNE(o *Options) (Analysis, error) {
	ref, err := o.features("tsne")
	if err != nil {
		return nil, err
	}
	psi, err := metrics.RawProductUnitFeatures(ref.Model)
	return &tsneFigure{o: o, ref: ref, psi: psi}, err
}

func (a *tsneFigure) Skip(r *Selected) (bool, error) { return !a.o.finishedGeKC(r), nil }

func (a *tsneFigure) Tables(err error) (func() error, error) { return nil, err }

func (a *tsneFigure) Compute(_ context.Context, r *Selected) error {
	fr, err := r.Open()
	if err != nil {
		return err
	}
	if fr.Spec.Dataset != a.ref.Spec.Dataset {
		return nil
	}
	if err := a.draw(fr); err != nil {
		return fmt.Errorf("%s: %w", r.ID, err)
	}
	return nil
}

// draw embeds the run's test and sampled triples and writes the figure.
func (a *tsneFigure) draw(fr *resultsdir.Finished) error {
	samples, err := runSamples(fr, a.o.Samples, a.o.Stderr)
	if err != nil {
		return err
	}
	test := a.ref.Data.Test
	rng := rand.New(rand.NewPCG(KTDRunSeed(fr.ID), 0x75f)) // tsne.Embed's stream is 0x75e
	n := min(tsneTriples, len(test), len(samples))
	if n < 2 {
		return fmt.Errorf("t-SNE of %d test and %d sampled triples: too few", len(test), len(samples))
	}
	drawnTest, drawn := draw(test, n, rng), draw(samples, n, rng)
	start := time.Now()
	var x mat.Dense
	x.Stack(a.psi(drawnTest), a.psi(drawn))
	opt := tsneOptions(KTDRunSeed(fr.ID))
	// The perplexity must stay below the number of points: a third of
	// them on a small data set.
	opt.Perplexity = min(opt.Perplexity, float64(2*n)/3)
	opt.Progress = func(it int, kl float64) {
		if it%1000 == 0 {
			fmt.Fprintf(a.o.Stderr, "%s: t-SNE iteration %d, KL %.3f, %s\n", fr.ID, it, kl, time.Since(start).Round(time.Second))
		}
	}
	res, err := tsne.Embed(&x, opt)
	if err != nil {
		return err
	}
	title := fmt.Sprintf("%s, sampled at its %s\nt-SNE (Barnes–Hut, angle %g) of the product units of %s\nperplexity %g, %d iterations, KL %.3f",
		fr.ID, fr.Record.SampledAt(), opt.Angle, a.ref.ID, opt.Perplexity, res.Iterations, res.KL)
	png, err := report.TSNE(title, res.Y, n)
	if err != nil {
		return err
	}
	path := filepath.Join(fr.Dir, TSNEName)
	if err := atomicfile.WriteFile(path, png, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(a.o.Stderr, "%s: t-SNE of %d test and %d sampled triples, Barnes–Hut at angle %g, perplexity %g, %d iterations, KL %.3f, in %s: %s\n",
		fr.ID, n, n, opt.Angle, opt.Perplexity, res.Iterations, res.KL, time.Since(start).Round(time.Second), path)
	return nil
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
