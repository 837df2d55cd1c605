package analysis

import (
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"gekc/kg"
	"gekc/models"
	"gekc/query"
)

// For every squared model, refitting the relation scales on Nations
// brings p(R) to the training frequencies (the first pass within the
// uniform ε mass's reach, the second closer still) and raises the test
// log-likelihood by what the relation marginal cost, while RefitRelationScales'
// own check finds the subject and object conditionals unmoved.
func TestRefitRelations(t *testing.T) {
	ds, err := kg.Load(filepath.Join("..", "data", "nations"))
	if err != nil {
		t.Fatal(err)
	}
	var squared []string
	for _, name := range models.Names() {
		if strings.HasSuffix(name, "2") {
			squared = append(squared, name)
		}
	}
	if len(squared) < 4 {
		t.Fatalf("squared models %v: want CP², ComplEx², RESCAL², TuckER² at least", squared)
	}
	for _, name := range squared {
		t.Run(name, func(t *testing.T) {
			m, err := models.New(name, models.Sizes{Entities: ds.Entities.Len(), Relations: ds.Relations.Len(), Rank: 4},
				models.Options{Seed: 3, InitScale: 1, EpsMass: 1e-6})
			if err != nil {
				t.Fatal(err)
			}
			fit := func() (*query.Querier, []float64, *RelationFit, float64) {
				q, err := query.New(m, nil, 512)
				if err != nil {
					t.Fatal(err)
				}
				lm, f, ll, err := MeasureRelations(q, ds)
				if err != nil {
					t.Fatal(err)
				}
				return q, lm, f, ll
			}
			q, lm, f0, ll0 := fit()
			if !(f0.TV > 0.05) {
				t.Fatalf("p(R) already %v from f(R): nothing to refit", f0.TV)
			}
			for pass, tol := range []float64{1e-3, 1e-5} {
				if err := RefitRelationScales(q, lm, 512, ds); err != nil {
					t.Fatal(err)
				}
				var f *RelationFit
				var ll float64
				q, lm, f, ll = fit()
				if !(f.TV < tol) || !(math.Abs(f.TestLL-f.TestLLTrain) < 10*tol) {
					t.Errorf("pass %d: p(R) %v from f(R), test LL of R %v against f(R)'s %v", pass+1, f.TV, f.TestLL, f.TestLLTrain)
				}
				// log p(s, r, o) = log p(r) + log p(s, o | r), and the
				// refit moves only the first term.
				if gain, want := ll-ll0, f.TestLL-f0.TestLL; math.Abs(gain-want) > 1e-3 {
					t.Errorf("pass %d: test LL %v → %v, a gain of %v; the relation term's is %v", pass+1, ll0, ll, gain, want)
				}
			}
		})
	}
}

// PairCalibration's mean of p(r | s, o) over drawn training pairs is the
// one that p(s, r, o) / Σ_r' p(s, r', o), from LogJoint, gives over the
// same draws.
func TestPairCalibration(t *testing.T) {
	ds, err := kg.Load(filepath.Join("..", "data", "nations"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := models.New("complex2", models.Sizes{Entities: ds.Entities.Len(), Relations: ds.Relations.Len(), Rank: 4},
		models.Options{Seed: 5, InitScale: 1, EpsMass: 1e-6})
	if err != nil {
		t.Fatal(err)
	}
	q, err := query.New(m, nil, 512)
	if err != nil {
		t.Fatal(err)
	}
	const n, seed = 200, 7
	got, err := PairCalibration(q, ds, n, seed)
	if err != nil {
		t.Fatal(err)
	}
	nr := ds.Relations.Len()
	mean, freq := make([]float64, nr), make([]float64, nr)
	for _, tr := range ds.Train {
		freq[tr.R] += 1 / float64(len(ds.Train))
	}
	rng := rand.New(rand.NewPCG(seed, 0x9a17))
	for range n {
		tr := ds.Train[rng.IntN(len(ds.Train))]
		var all [][3]int
		for r := range nr {
			all = append(all, [3]int{int(tr.S), r, int(tr.O)})
		}
		lps, err := q.LogJoint(all)
		if err != nil {
			t.Fatal(err)
		}
		var z float64
		for _, lp := range lps {
			z += math.Exp(lp)
		}
		for r, lp := range lps {
			mean[r] += math.Exp(lp) / z / n
		}
	}
	var want float64
	for r := range nr {
		want += math.Abs(mean[r]-freq[r]) / 2
	}
	if !(want > 0.05) || math.Abs(got-want) > 1e-6 {
		t.Errorf("PairCalibration %v, by LogJoint %v (want it far from 0 for this untrained model)", got, want)
	}
}
