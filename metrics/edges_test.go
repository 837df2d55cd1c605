package metrics

import (
	"math"
	"math/rand/v2"
	"testing"

	"gekc/kg"
	"gekc/models"

	"gorgonia.org/tensor"
)

// Edges the mutation pass found unguarded.

func TestNewEvaluatorRejectsBatchSize(t *testing.T) {
	m, err := models.New("cp2", models.Sizes{Entities: 3, Relations: 1, Rank: 2}, models.Options{Dtype: tensor.Float64})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []int{0, -1} {
		if _, err := NewEvaluator(m, b); err == nil {
			t.Errorf("batch size %d accepted", b)
		}
	}
}

// One finite log-score is a range of one point, not "no finite log-score".
func TestLogScoreRangeOfOne(t *testing.T) {
	lo, hi, err := LogScoreRange([]float64{math.NaN(), 2.5, math.Inf(1)})
	if err != nil || lo != 2.5 || hi != 2.5 {
		t.Errorf("range [%v, %v], %v; want [2.5, 2.5]", lo, hi, err)
	}
}

// Empty bins neither count nor carry numbers; the ECE averages the
// non-empty ones.
func TestECESkipsEmptyBins(t *testing.T) {
	r, err := ECE([]float64{0.05, 0.95}, []bool{false, true}, 10)
	if err != nil {
		t.Fatal(err)
	}
	if !(math.Abs(r.ECE-0.05) <= 1e-15) {
		t.Errorf("ECE %v, want 0.05", r.ECE)
	}
	if b := r.Bins[5]; b.Count != 0 || !math.IsNaN(b.MeanProb) || !math.IsNaN(b.Frequency) {
		t.Errorf("empty bin %+v", b)
	}
}

// Relation 0 and object 0 are ordinary ids: here the only negative for the
// test triple is (1, 0, 0), object 0 of relation 0 in training.
func TestHardNegativesUseIdZero(t *testing.T) {
	train := []kg.Triple{{S: 2, R: 0, O: 0}, {S: 1, R: 0, O: 3}}
	test := []kg.Triple{{S: 1, R: 0, O: 2}}
	neg := HardNegatives(test, train, kg.NewFilter(train, test), rand.New(rand.NewPCG(1, 1)))
	if len(neg) != 1 || neg[0] != (kg.Triple{S: 1, R: 0, O: 0}) {
		t.Errorf("negatives %v, want [{1 0 0}]", neg)
	}
}
