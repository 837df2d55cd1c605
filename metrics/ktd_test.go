package metrics_test

import (
	"context"
	"math"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"testing"

	"gekc/kg"
	"gekc/metrics"
	"gekc/objectives"
	"gekc/train"

	"gonum.org/v1/gonum/mat"
)

func TestKTDHandComputed(t *testing.T) {
	// k(a,b) = (ab+1)³: k(1,1) = 8, k(1,0) = k(0,0) = 1.
	// Unbiased: mean off-diagonal k within x (8) + within y (1) − 2·mean across (1).
	x := mat.NewDense(2, 1, []float64{1, 1})
	y := mat.NewDense(2, 1, []float64{0, 0})
	if got := metrics.KTD(x, y); got != 7 {
		t.Errorf("KTD = %v, want 7", got)
	}
	if got := metrics.KTD(x, x); got != 0 {
		t.Errorf("KTD(x, x) = %v, want 0", got)
	}
}

func loadUMLS(t *testing.T) *kg.Dataset {
	_, file, _, _ := runtime.Caller(0)
	ds, err := kg.Load(filepath.Join(filepath.Dir(file), "..", "data", "umls"))
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

func TestKTDOnTrainedComplEx(t *testing.T) {
	ds := loadUMLS(t)
	res, err := train.Run(context.Background(), train.Config{Model: "complex", Rank: 20,
		Objective: objectives.PLL{Weights: objectives.Uniform}, LearningRate: 1e-2, BatchSize: 500, Epochs: 20, Seed: 1,
		Eval: train.EvalConfig{SkipTest: true}}, ds, nil)
	if err != nil {
		t.Fatal(err)
	}
	psi, err := metrics.ProductUnitFeatures(res.Model)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	perm := rng.Perm(len(ds.Train))
	var a, b []kg.Triple
	for i, j := range perm {
		if i%2 == 0 {
			a = append(a, ds.Train[j])
		} else {
			b = append(b, ds.Train[j])
		}
	}
	halves, err := metrics.KTDDraws(psi, a, b, 500, 50, rng)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(halves.Mean) > halves.Std {
		t.Errorf("KTD of two halves of the training set = %.4f ± %.4f, not within one std of 0", halves.Mean, halves.Std)
	}
	trainTest, err := metrics.KTDDraws(psi, ds.Train, ds.Test, 500, 50, rng)
	if err != nil {
		t.Fatal(err)
	}
	uniform := metrics.UniformTriples(5000, ds.Entities.Len(), ds.Relations.Len(), rng)
	uniTest, err := metrics.KTDDraws(psi, uniform, ds.Test, 500, 50, rng)
	if err != nil {
		t.Fatal(err)
	}
	if !(uniTest.Mean > trainTest.Mean+2*uniTest.Std) {
		t.Errorf("KTD(uniform, test) = %.4f ± %.4f is not above KTD(train, test) = %.4f", uniTest.Mean, uniTest.Std, trainTest.Mean)
	}
	t.Logf("halves %.4f±%.4f  train-test %.4f±%.4f  uniform-test %.4f±%.4f", halves.Mean, halves.Std, trainTest.Mean, trainTest.Std, uniTest.Mean, uniTest.Std)
}
