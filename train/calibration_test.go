package train

import (
	"context"
	"testing"

	"gekc/kg"
	"gekc/metrics"
	"gekc/objectives"
)

// With EvalConfig.ECE the test metrics (and only they) carry both ECEs, and
// Result.Calibration holds the bins they come from; Calibrate with the
// run's seed reproduces them from the returned model.
func TestRunReportsCalibration(t *testing.T) {
	ds := repoData(t, "nations")
	for _, model := range []string{"cp", "cp2"} {
		for _, ece := range []bool{false, true} {
			cfg := Config{Model: model, Rank: 4, Objective: objectives.PLL{Weights: objectives.Uniform}, LearningRate: 1e-2,
				BatchSize: 400, Epochs: 2, Seed: 3, Eval: EvalConfig{ECE: ece}}
			res, err := Run(context.Background(), cfg, ds, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range res.Epochs {
				if _, ok := e.Valid["ece_logistic"]; ok {
					t.Errorf("%s: validation at epoch %d computed the ECE", model, e.Epoch)
				}
			}
			_, hasL := res.Test["ece_logistic"]
			_, hasM := res.Test["ece_minmax"]
			if hasL != ece || hasM != ece || (res.Calibration != nil) != ece {
				t.Fatalf("%s, ECE %v: test metrics %v, calibration %v", model, ece, res.Test, res.Calibration != nil)
			}
			if !ece {
				continue
			}
			c := res.Calibration
			if c.Logistic.ECE != res.Test["ece_logistic"] || c.MinMax.ECE != res.Test["ece_minmax"] {
				t.Errorf("%s: metrics %v disagree with the calibration (%v, %v)", model, res.Test, c.Logistic.ECE, c.MinMax.ECE)
			}
			for _, r := range []metrics.Reliability{c.Logistic, c.MinMax} {
				if !(r.ECE >= 0 && r.ECE <= 1) || len(r.Bins) != metrics.CalibrationBins {
					t.Errorf("%s: ECE %v over %d bins", model, r.ECE, len(r.Bins))
				}
			}
			if c.Positives != len(ds.Test) || c.Negatives == 0 || c.Negatives > len(ds.Test) {
				t.Errorf("%s: %d positives, %d negatives for %d test triples", model, c.Positives, c.Negatives, len(ds.Test))
			}
			ev, err := metrics.NewEvaluator(res.Model, 1000)
			if err != nil {
				t.Fatal(err)
			}
			again, err := Calibrate(ev, ds, kg.NewFilter(ds.Train, ds.Valid, ds.Test), cfg.Seed)
			if err != nil {
				t.Fatal(err)
			}
			if again.Logistic.ECE != c.Logistic.ECE || again.MinMax.ECE != c.MinMax.ECE || again.Negatives != c.Negatives {
				t.Errorf("%s: Calibrate after the run gives %v/%v, the run %v/%v", model,
					again.Logistic.ECE, again.MinMax.ECE, c.Logistic.ECE, c.MinMax.ECE)
			}
		}
	}
}
