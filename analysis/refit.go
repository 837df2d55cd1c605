package analysis

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"

	"gekc/kg"
	"gekc/metrics"
	"gekc/models"
	"gekc/query"
	"gekc/resultsdir"

	"gonum.org/v1/gonum/floats"
)

// A Refit measures what a squared GeKC's relation marginal p(R) costs it.
// Pseudo-log-likelihood never scores p(R), so a PLL-trained model may put
// its mass on the relations in other proportions than the data
// (RelationFit). When the score is linear in the relation's embedding row,
// as CP², ComplEx², RESCAL² and TuckER²'s are, scaling row r by c_r
// scales every triple of r by c_r², which leaves p(s | r, o) and
// p(o | s, r), and so every subject and object ranking, as they are;
// c_r² ∝ f(r) / p(r) makes p(R) the training frequencies f(R), the
// maximum-likelihood scales with everything else held.
type Refit struct {
	ID       string
	Model    *models.Model // changed in place: its relation rows are rescaled
	Domain   *models.Domain
	Data     *kg.Dataset
	Batch    int                    // the querier's batch
	Pairs    int                    // training pairs drawn to average p(r | s, o) over (0: none)
	Seed     uint64                 // of those draws and of the samples
	Features metrics.TripleFeatures // ψ of the KTD before and after (nil: no KTD)
	Samples  int                    // samples drawn for the KTD
}

// Run prints, before and after the refit (done twice: the uniform ε mass,
// which the scales do not move, leaves the first a hair from f(R)), the
// relation marginal's distance to f(R), the test log-likelihood and, with
// Features, the KTD of the model's samples to the test triples. First it
// prints how far the mean of p(r | s, o) over Pairs training pairs is from
// f(R): PLL's relation term is stationary in each relation's scale when
// that mean is f(r), so a model that PLL trained to convergence has it
// near f(R) whatever its p(R).
func (rf *Refit) Run(w io.Writer) error {
	ds := rf.Data
	fmt.Fprintf(w, "%s (%s), %d test triples\n", rf.ID, rf.Model.Name, len(ds.Test))
	for pass, label := range []string{"as trained", "refit once", "refit twice"} {
		q, err := query.New(rf.Model, rf.Domain, rf.Batch) // anew: the parameters changed
		if err != nil {
			return err
		}
		if pass == 0 && rf.Pairs > 0 {
			tv, err := PairCalibration(q, ds, rf.Pairs, rf.Seed)
			if err != nil {
				return err
			}
			fmt.Fprintf(w, "as trained   mean p(r | s, o) over %d training pairs: TV to f(R) %.4f\n", rf.Pairs, tv)
		}
		lm, fit, ll, err := MeasureRelations(q, ds)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "%-11s  p(R) TV to f(R) %.4f  test LL of R %.4f (f(R)'s %.4f)  test LL %.4f\n", label, fit.TV, fit.TestLL, fit.TestLLTrain, ll)
		if rf.Features != nil && pass != 1 {
			if err := rf.ktd(w, label); err != nil {
				return err
			}
		}
		if pass < 2 {
			if err := RefitRelationScales(q, lm, rf.Batch, ds); err != nil {
				return err
			}
		}
	}
	return nil
}

func (rf *Refit) ktd(w io.Writer, label string) error {
	ts, _, err := resultsdir.Sample(rf.Model, rf.Domain, rf.Samples, rf.Seed)
	if err != nil {
		return err
	}
	size := KTDSize(len(rf.Data.Test), rf.Samples)
	st, err := RunKTD(rf.Features, rf.ID, ts, rf.Data.Test, size)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%-11s  KTD %.3f ± %.3f over %d draws of %d triples\n", label, st.Mean, st.Std, st.Draws, size)
	return nil
}

// PairCalibration returns the total variation between f(R) and the mean
// of p(r | s, o) over n training triples drawn uniformly.
func PairCalibration(q *query.Querier, ds *kg.Dataset, n int, seed uint64) (float64, error) {
	nr := ds.Relations.Len()
	freq, err := TrainRelationFrequencies(ds, nr)
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

// MeasureRelations returns the unnormalised log relation marginals, the
// relation fit and the mean test log-likelihood of q's model on ds.
func MeasureRelations(q *query.Querier, ds *kg.Dataset) ([]float64, *RelationFit, float64, error) {
	lm, err := q.RelationLogMarginals()
	if err != nil {
		return nil, nil, 0, err
	}
	fit, err := FitRelations(lm, ds)
	if err != nil {
		return nil, nil, 0, err
	}
	lps, err := q.LogJoint(tripleIDs(ds.Test))
	if err != nil {
		return nil, nil, 0, err
	}
	var ll float64
	for _, lp := range lps {
		ll += lp / float64(len(lps))
	}
	return lm, fit, ll, nil
}

// RefitRelationScales multiplies each row r of the relation table of q's
// model by √(f(r) / p(r)), f the relation frequencies of ds's training
// triples and lm the model's unnormalised log relation marginals, which q
// gave. It checks on up to 5 test triples that p(o | s, r) and p(s | r, o)
// did not move, as they do not when the score is linear in the relation
// row (few: each conditional of a squared model pays for a Gram matrix).
func RefitRelationScales(q *query.Querier, lm []float64, batch int, ds *kg.Dataset) error {
	m, dom := q.Model(), q.Domain()
	before, err := testConditionals(q, ds.Test)
	if err != nil {
		return err
	}
	lz := floats.LogSumExp(lm)
	freq, err := TrainRelationFrequencies(ds, len(lm))
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
	after, err := testConditionals(q, ds.Test)
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

// testConditionals returns log p(o | s, r) and log p(s | r, o) of up to 5
// of the triples.
func testConditionals(q *query.Querier, ts []kg.Triple) ([]float64, error) {
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

func tripleIDs(ts []kg.Triple) [][3]int {
	out := make([][3]int, len(ts))
	for i, t := range ts {
		out[i] = [3]int{int(t.S), int(t.R), int(t.O)}
	}
	return out
}
