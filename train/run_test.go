package train

import (
	"context"
	"math"
	"path/filepath"
	"runtime"
	"testing"

	"gekc/kg"
	"gekc/models"
	"gekc/objectives"

	"gorgonia.org/tensor"
)

func repoData(t testing.TB, name string) *kg.Dataset {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	ds, err := kg.Load(filepath.Join(filepath.Dir(file), "..", "data", name))
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// A short run on nations (14 entities) must learn: MRR well above the
// ~0.2 of random ranking, for an energy, a squared and a non-negative model.
func TestRunLearnsNations(t *testing.T) {
	ds := repoData(t, "nations")
	for _, c := range []struct {
		model string
		obj   objectives.Objective
		lr    float64
	}{
		{"complex", objectives.PLL{Weights: objectives.Uniform}, 1e-2},
		{"cp2", objectives.MLE{}, 1e-2},
		{"complex+", objectives.PLL{Weights: objectives.Uniform}, 5e-2},
	} {
		cfg := Config{Model: c.model, Rank: 10, Objective: c.obj, LearningRate: c.lr, BatchSize: 200, Epochs: 30, Seed: 1,
			Eval: EvalConfig{LogLikelihood: true}}
		res, err := Run(context.Background(), cfg, ds, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != Finished {
			t.Fatalf("%s: status %s %v", c.model, res.Status, res.Notes)
		}
		if res.Test["mrr"] < 0.45 {
			t.Errorf("%s: test MRR %.3f after %d epochs", c.model, res.Test["mrr"], len(res.Epochs))
		}
		_, hasLL := res.Test["ll"]
		if hasLL == (c.model == "complex") {
			t.Errorf("%s: log-likelihood reported %v", c.model, hasLL)
		}
		t.Logf("%s/%s: test MRR %.3f, ll %.3f, best epoch %d", c.model, c.obj.Name(), res.Test["mrr"], res.Test["ll"], res.BestEpoch)
	}
}

func TestRunReportsDivergence(t *testing.T) {
	ds := repoData(t, "nations")
	cfg := Config{Model: "cp", Rank: 4, Objective: objectives.PLL{Weights: objectives.Uniform}, LearningRate: 1e-3,
		BatchSize: 100, Epochs: 3, Seed: 1,
		Init: func(m *models.Model) error {
			m.Param("relation").Data().([]float32)[0] = float32(math.NaN())
			return nil
		}}
	res, err := Run(context.Background(), cfg, ds, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != Diverged || len(res.Notes) == 0 {
		t.Fatalf("status %s, notes %v", res.Status, res.Notes)
	}
}

func TestEnergyModelCannotTrainByMLE(t *testing.T) {
	ds := repoData(t, "nations")
	_, err := Run(context.Background(), Config{Model: "complex", Rank: 4, Objective: objectives.MLE{}, LearningRate: 1e-3,
		BatchSize: 100, Epochs: 1, Dtype: tensor.Float64}, ds, nil)
	if err == nil {
		t.Fatal("energy-based MLE accepted")
	}
}
