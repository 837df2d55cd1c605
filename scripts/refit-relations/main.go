// Command refit-relations measures what a squared GeKC's relation marginal
// p(R) costs it. Pseudo-log-likelihood never scores p(R), so a PLL-trained
// model may put its mass on the relations in other proportions than the
// data (analysis.RelationFit). When the score is linear in the relation's
// embedding row, as CP², ComplEx², RESCAL² and TuckER²'s are, scaling row
// r by c_r scales every triple of r by c_r², which leaves p(s | r, o) and
// p(o | s, r), and so every subject and object ranking, as they are;
// c_r² ∝ f(r) / p(r) makes p(R) the training frequencies f(R), the
// maximum-likelihood scales with everything else held. It prints, before
// and after that refit, the relation marginal's distance to f(R), the test
// log-likelihood and, with -features, the kernel triple distance of the
// model's samples to the test triples (ψ from a finished ComplEx run, as
// -analyze ktd computes it). First it prints how far the mean of
// p(r | s, o) over -pairs training pairs is from f(R): PLL's relation term
// is stationary in each relation's scale when that mean is f(r), so a
// model that PLL has trained to convergence has it near f(R) whatever its
// p(R).
//
//	go run ./scripts/refit-relations -run DIR [-features DIR] [-data ROOT] [-samples N] [-pairs N]
//
// The run is measured at the parameters its samples come from
// (checkpoint-ll.npz when it was trained with sample_from = "ll"). Nothing
// is written.
package main

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"

	"gekc/analysis"
	_ "gekc/graph/openblas"
	"gekc/kg"
	"gekc/metrics"
	"gekc/models"
	"gekc/query"
	"gekc/sweep"

	"gonum.org/v1/gonum/floats"
)

func main() {
	run := flag.String("run", "", "finished squared GeKC run `directory`")
	features := flag.String("features", "", "finished ComplEx run `directory` giving ψ (none: no KTD)")
	data := flag.String("data", "../shared/data", "data `root`")
	n := flag.Int("samples", 25000, "samples drawn for the KTD")
	pairs := flag.Int("pairs", 3000, "training pairs drawn to average p(r | s, o) over")
	flag.Parse()
	if err := refit(*run, *features, *data, *n, *pairs); err != nil {
		fmt.Fprintln(os.Stderr, "refit-relations:", err)
		os.Exit(1)
	}
}

func refit(run, features, data string, n, pairs int) error {
	if run == "" {
		return fmt.Errorf("-run is required")
	}
	fr, err := sweep.LoadFinished(run, data)
	if err != nil {
		return err
	}
	if fr.Model.Semantics != models.Squared {
		return fmt.Errorf("%s is %s, not a squared GeKC", fr.ID, fr.Spec.Model)
	}
	if err := fr.LoadSampledParameters(); err != nil {
		return err
	}
	dom, err := sweep.Constraint(fr.Spec, fr.Data)
	if err != nil {
		return err
	}
	var psi metrics.TripleFeatures
	if features != "" {
		ref, err := sweep.LoadFinished(features, data)
		if err != nil {
			return err
		}
		if psi, err = metrics.ProductUnitFeatures(ref.Model); err != nil {
			return err
		}
	}
	m, batch, ds := fr.Model, fr.Spec.Eval.BatchSize, fr.Data
	fmt.Printf("%s (%s, %s), %d test triples\n", fr.ID, fr.Spec.Model, fr.Spec.Objective, len(ds.Test))
	for pass, label := range []string{"as trained", "refit once", "refit twice"} {
		// A new querier each pass: the parameters changed.
		q, err := query.New(m, dom, batch)
		if err != nil {
			return err
		}
		if pass == 0 && pairs > 0 {
			tv, err := pairCalibration(q, ds, pairs, uint64(fr.Spec.Seed))
			if err != nil {
				return err
			}
			fmt.Printf("as trained   mean p(r | s, o) over %d training pairs: TV to f(R) %.4f\n", pairs, tv)
		}
		lm, fit, ll, err := measure(q, ds)
		if err != nil {
			return err
		}
		fmt.Printf("%-11s  p(R) TV to f(R) %.4f  test LL of R %.4f (f(R)'s %.4f)  test LL %.4f\n", label, fit.TV, fit.TestLL, fit.TestLLTrain, ll)
		if psi != nil && pass != 1 {
			ts, _, err := analysis.Sample(m, dom, n, uint64(fr.Spec.Seed))
			if err != nil {
				return err
			}
			size := analysis.KTDSize(len(ds.Test), n)
			st, err := analysis.RunKTD(psi, fr.ID, ts, ds.Test, size)
			if err != nil {
				return err
			}
			fmt.Printf("%-11s  KTD %.3f ± %.3f over %d draws of %d triples\n", label, st.Mean, st.Std, st.Draws, size)
		}
		// Twice: the uniform ε mass, which the scales do not move, leaves
		// the first refit a hair from f(R).
		if pass < 2 {
			if err := refitRelations(q, lm, batch, ds); err != nil {
				return err
			}
		}
	}
	return nil
}

// pairCalibration returns the total variation between f(R) and the mean
// of p(r | s, o) over n training triples drawn uniformly.
func pairCalibration(q *query.Querier, ds *kg.Dataset, n int, seed uint64) (float64, error) {
	nr := ds.Relations.Len()
	freq, err := analysis.TrainRelationFrequencies(ds, nr)
	if err != nil {
		return 0, err
	}
	mean := make([]float64, nr)
	rng := rand.New(rand.NewPCG(seed, 0x9a17))
	for range n {
		t := ds.Train[rng.IntN(len(ds.Train))]
		lp, err := q.Conditional([3]int{int(t.S), int(t.R), int(t.O)}, models.Relation)
		if err != nil {
			return 0, err
		}
		for r, v := range lp {
			mean[r] += math.Exp(v) / float64(n)
		}
	}
	var tv float64
	for r := range nr {
		tv += math.Abs(mean[r]-freq[r]) / 2
	}
	return tv, nil
}

// measure returns the unnormalised log relation marginals, the relation
// fit and the mean test log-likelihood of q's model on ds.
func measure(q *query.Querier, ds *kg.Dataset) ([]float64, *analysis.RelationFit, float64, error) {
	lm, err := q.RelationLogMarginals()
	if err != nil {
		return nil, nil, 0, err
	}
	fit, err := analysis.FitRelations(lm, ds)
	if err != nil {
		return nil, nil, 0, err
	}
	lps, err := q.LogJoint(triples(ds.Test))
	if err != nil {
		return nil, nil, 0, err
	}
	var ll float64
	for _, lp := range lps {
		ll += lp / float64(len(lps))
	}
	return lm, fit, ll, nil
}

// refitRelations multiplies each row r of the relation table of q's model
// by √(f(r) / p(r)), f the relation frequencies of ds's training triples
// and lm the model's unnormalised log relation marginals, which q gave.
// It checks on up to 5 test triples that p(o | s, r) and p(s | r, o) did
// not move, as they do not when the score is linear in the relation row
// (few: each conditional of a squared model pays for a Gram matrix).
func refitRelations(q *query.Querier, lm []float64, batch int, ds *kg.Dataset) error {
	m, dom := q.Model(), q.Domain()
	before, err := conditionals(q, ds.Test)
	if err != nil {
		return err
	}
	lz := floats.LogSumExp(lm)
	freq, err := analysis.TrainRelationFrequencies(ds, len(lm))
	if err != nil {
		return err
	}
	name := m.Layout.Relation
	table := m.Param(name)
	rows := table.Shape()[0]
	w, ok := table.Data().([]float32)
	if rows != len(lm) || !ok {
		return fmt.Errorf("relation table %q: %d rows of %T for %d relations", name, rows, table.Data(), len(lm))
	}
	cols := len(w) / rows
	for r := range rows {
		c := float32(math.Sqrt(freq[r] / math.Exp(lm[r]-lz)))
		for j := r * cols; j < (r+1)*cols; j++ {
			w[j] *= c
		}
	}
	if q, err = query.New(m, dom, batch); err != nil {
		return err
	}
	after, err := conditionals(q, ds.Test)
	if err != nil {
		return err
	}
	for i := range before {
		if d := math.Abs(after[i] - before[i]); !(d < 1e-3) {
			return fmt.Errorf("a conditional of a test triple moved by %v nats: %s's score is not linear in the relation row", d, name)
		}
	}
	return nil
}

// conditionals returns log p(o | s, r) and log p(s | r, o) of up to 5 of
// the triples.
func conditionals(q *query.Querier, ts []kg.Triple) ([]float64, error) {
	var out []float64
	for _, t := range ts[:min(5, len(ts))] {
		x := [3]int{int(t.S), int(t.R), int(t.O)}
		for _, v := range []models.Var{models.Object, models.Subject} {
			lp, err := q.Conditional(x, v)
			if err != nil {
				return nil, err
			}
			out = append(out, lp[x[v]])
		}
	}
	return out, nil
}

func triples(ts []kg.Triple) [][3]int {
	out := make([][3]int, len(ts))
	for i, t := range ts {
		out[i] = [3]int{int(t.S), int(t.R), int(t.O)}
	}
	return out
}
