package analysis

import (
	"bytes"
	"fmt"
	"math/rand/v2"

	"gekc/kg"
	"gekc/metrics"
	"gekc/report"
)

const (
	// KTDDraws is how many draws the KTD is averaged over.
	KTDDraws = 100
	// KTDDrawSize is the triples per draw, as in the paper.
	KTDDrawSize = 1000
	// KTDTSVName and KTDMarkdownName are the tables of the KTD analysis,
	// written next to results.tsv.
	KTDTSVName      = "ktd.tsv"
	KTDMarkdownName = "ktd.md"
)

// KTDSize is the triples per draw: KTDDrawSize, fewer when the test split
// or the samples per model are fewer.
func KTDSize(tests, samples int) int { return min(KTDDrawSize, tests, samples) }

// KTDRow is one line of the KTD tables: a model's samples (Run names the
// run), or a baseline (Model "training set" or "uniform", no Objective or
// Run).
type KTDRow struct {
	Dataset, Model, Objective, Run string
	Stat                           metrics.KTDStat
}

// KTD is the kernel triple distance of ts to the test triples, with
// features psi: KTDDraws draws of size triples from each, using rng.
func KTD(psi metrics.TripleFeatures, ts, test []kg.Triple, size int, rng *rand.Rand) (metrics.KTDStat, error) {
	return metrics.KTDDraws(psi, ts, test, size, KTDDraws, rng)
}

// KTDBaselines returns the rows of the two references every model is
// compared with: the training triples and samples uniform triples drawn
// with rng, each against the test triples of ds. On error the rows so far
// are returned with it.
func KTDBaselines(psi metrics.TripleFeatures, dataset string, ds *kg.Dataset, size, samples int, rng *rand.Rand) ([]KTDRow, error) {
	var rows []KTDRow
	baseline := func(name string, ts []kg.Triple) error {
		st, err := KTD(psi, ts, ds.Test, size, rng)
		rows = append(rows, KTDRow{Dataset: dataset, Model: name, Stat: st})
		return err
	}
	if err := baseline("training set", ds.Train); err != nil {
		return rows, err
	}
	return rows, baseline("uniform", metrics.UniformTriples(samples, ds.Entities.Len(), ds.Relations.Len(), rng))
}

// KTDTables renders the KTD rows as ktd.tsv and ktd.md; features names the
// run whose product units give ψ, size and samples are the triples per
// draw and per model.
func KTDTables(rows []KTDRow, features string, size, samples int) (tsv, md []byte, err error) {
	var t, m bytes.Buffer
	fmt.Fprintf(&t, "dataset\tmodel\tobjective\trun\tktd_mean\tktd_std\tdraws\n")
	for _, r := range rows {
		fmt.Fprintf(&t, "%s\t%s\t%s\t%s\t%.6g\t%.6g\t%d\n", r.Dataset, r.Model, r.Objective, r.Run, r.Stat.Mean, r.Stat.Std, r.Stat.Draws)
	}
	fmt.Fprintf(&m, "# Kernel triple distance to the test triples\n\nψ: product units of `%s`; k(x,y) = (xᵀy+1)³; unbiased MMD² over %d draws of %d sampled and %d test triples (mean ± std); %d samples per model. Lower is better.\n\n",
		features, KTDDraws, size, size, samples)
	var cells [][]string
	for _, r := range rows {
		cells = append(cells, []string{r.Dataset, r.Model, r.Objective, fmt.Sprintf("%.3f ± %.3f", r.Stat.Mean, r.Stat.Std), r.Run})
	}
	if err := report.MarkdownTable(&m, []string{"dataset", "model", "objective", "KTD", "run"}, cells); err != nil {
		return nil, nil, err
	}
	return t.Bytes(), m.Bytes(), nil
}
