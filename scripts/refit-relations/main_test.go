package main

import (
	"path/filepath"
	"strings"
	"testing"

	"gekc/analysis"
	"gekc/kg"
	"gekc/models"
	"gekc/query"
)

// For every squared model, refitting the relation scales on Nations
// brings p(R) to the training frequencies (the first pass within the
// uniform ε mass's reach, the second closer still) and raises the test
// log-likelihood by what the relation marginal cost, while refitRelations'
// own check finds the subject and object conditionals unmoved.
func TestRefitRelations(t *testing.T) {
	ds, err := kg.Load(filepath.Join("..", "..", "data", "nations"))
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
			fit := func() (*analysis.RelationFit, float64) {
				q, err := query.New(m, nil, 512)
				if err != nil {
					t.Fatal(err)
				}
				f, ll, err := measure(q, ds)
				if err != nil {
					t.Fatal(err)
				}
				return f, ll
			}
			f0, ll0 := fit()
			if !(f0.TV > 0.05) {
				t.Fatalf("p(R) already %v from f(R): nothing to refit", f0.TV)
			}
			for pass, tol := range []float64{1e-3, 1e-5} {
				if err := refitRelations(m, nil, 512, ds); err != nil {
					t.Fatal(err)
				}
				f, ll := fit()
				if !(f.TV < tol) || !(abs(f.TestLL-f.TestLLTrain) < 10*tol) {
					t.Errorf("pass %d: p(R) %v from f(R), test LL of R %v against f(R)'s %v", pass+1, f.TV, f.TestLL, f.TestLLTrain)
				}
				// log p(s, r, o) = log p(r) + log p(s, o | r), and the
				// refit moves only the first term.
				if gain, want := ll-ll0, f.TestLL-f0.TestLL; abs(gain-want) > 1e-3 {
					t.Errorf("pass %d: test LL %v → %v, a gain of %v; the relation term's is %v", pass+1, ll0, ll, gain, want)
				}
			}
		})
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
