package train

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"testing"

	"gekc/kg"
	"gekc/metrics"
	"gekc/metrics/brute"
	"gekc/models"
	"gekc/objectives"

	"gorgonia.org/tensor"
)

// Every number Run reports, recomputed by hand from the parameters it
// returns: ranks from the log-score of each candidate triple on its own,
// filtered by a set of all known triples built from the three splits;
// the log-likelihood from log Z summed over every triple by enumeration
// (metrics/brute, shared with sweep's check of what a sweep records).

// typedTiny loads brute's tiny typed graph (brute.WriteTypedTiny).
func typedTiny(t testing.TB) *kg.Dataset {
	t.Helper()
	dir := t.TempDir()
	if err := brute.WriteTypedTiny(dir); err != nil {
		t.Fatal(err)
	}
	ds, err := kg.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// bruteScores returns log φ(s, r, o) of every triple of m, indexed
// [(s·|R| + r)·|E| + o], each scored alone by the plain log-score query;
// triples that consistent (when not nil) rules out get −Inf, as the
// constrained model gives them.
func bruteScores(t testing.TB, m *models.Model, consistent func(kg.Triple) bool) []float64 {
	t.Helper()
	out, err := brute.Scores(m, 7, consistent) // a batch size that does not divide |E|²|R|
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// handSem adds Sem@k to out for each k: over the subject and object
// queries of triples, the share of the k best-scored candidates (ties in
// entity order, filtered as below) whose type the relation allows in that slot.
func handSem(ds *kg.Dataset, scores []float64, triples []kg.Triple, ks []int, out map[string]float64) {
	ne, nr := ds.Entities.Len(), ds.Relations.Len()
	// Filtered, as the paper's appendix ranks Sem@k's candidates "in the
	// same way as for computing the MRR": every known answer (any split)
	// other than the true one is left out; fewer than k left, the share is
	// of those.
	known := brute.Known(ds)
	for _, k := range ks {
		var sum float64
		for _, tr := range triples {
			rel := ds.Relations.Name(tr.R)
			for side := range 2 {
				var cand []int32
				for e := range int32(ne) {
					c := kg.Triple{S: e, R: tr.R, O: tr.O}
					if side == 1 {
						c = kg.Triple{S: tr.S, R: tr.R, O: e}
					}
					if c == tr || !known[c] {
						cand = append(cand, e)
					}
				}
				score := func(e int32) float64 {
					if side == 0 {
						return scores[(int(e)*nr+int(tr.R))*ne+int(tr.O)]
					}
					return scores[(int(tr.S)*nr+int(tr.R))*ne+int(e)]
				}
				slices.SortStableFunc(cand, func(a, b int32) int {
					switch sa, sb := score(a), score(b); {
					case sa > sb:
						return -1
					case sa < sb:
						return 1
					}
					return 0
				})
				top, c := cand[:min(k, len(cand))], 0
				for _, e := range top {
					if ds.Entities.Name(e)[0] == rel[side] {
						c++
					}
				}
				sum += float64(c) / float64(len(top))
			}
		}
		out[fmt.Sprintf("sem@%d", k)] = sum / float64(2*len(triples))
	}
}

// sameMetrics reports every difference between got and want beyond tol
// (relative to max(1, |want|)), and keys present in only one of them.
func sameMetrics(t *testing.T, what string, got, want map[string]float64, tol float64) {
	t.Helper()
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			t.Errorf("%s: no %s (want %v)", what, k, w)
			continue
		}
		if !(math.Abs(g-w) <= tol*math.Max(1, math.Abs(w))) {
			t.Errorf("%s: %s = %v, recomputed by hand %v", what, k, g, w)
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: unexpected %s = %v", what, k, g)
		}
	}
}

func TestRunMetricsEqualHandComputation(t *testing.T) {
	ds := typedTiny(t)
	hits, semK := []int{1, 2, 3, 5}, []int{1, 2, 3}
	for _, c := range []struct {
		model       string
		obj         objectives.Objective
		dtype       tensor.Dtype
		constrained bool
		sel         string
	}{
		{"cp2", objectives.MLE{}, tensor.Float64, false, "mrr"},
		{"complex+", objectives.PLL{Weights: objectives.Uniform}, tensor.Float64, true, "mrr"},
		{"complex2", objectives.PLL{Weights: objectives.Uniform}, tensor.Float32, false, "mrr"},
		{"cp+", objectives.MLE{}, tensor.Float64, false, "ll"},
		{"complex", objectives.PLL{Weights: objectives.Uniform}, tensor.Float64, false, "mrr"},
	} {
		name := c.model + "/select-" + c.sel
		if c.constrained {
			name += "/constrained"
		}
		t.Run(name, func(t *testing.T) {
			cfg := Config{Model: c.model, Rank: 3, Objective: c.obj, LearningRate: 0.05, BatchSize: 8, Epochs: 4, Seed: 5,
				Dtype: c.dtype, Constrained: c.constrained,
				Eval: EvalConfig{Hits: hits, SemK: semK, BatchSize: 3, LogLikelihood: true, Select: c.sel}}
			res, err := Run(context.Background(), cfg, ds, nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != Finished {
				t.Fatalf("status %s %v", res.Status, res.Notes)
			}
			var consistent func(kg.Triple) bool
			if c.constrained {
				consistent = func(tr kg.Triple) bool { return brute.TypedTinyConsistent(ds, tr) }
			}
			scores := bruteScores(t, res.Model, consistent)
			withLL := res.Model.Semantics != models.Energy
			tol := 1e-9
			if c.dtype == tensor.Float32 {
				tol = 1e-5
			}
			wantTest := brute.RankMetrics(ds, scores, ds.Test, hits, metrics.Pessimistic, withLL)
			handSem(ds, scores, ds.Test, semK, wantTest)
			// The test log-likelihood at the best validation one is that of
			// the returned parameters when both selections name one epoch;
			// else TestTestLLAtBestLL checks it.
			test := maps.Clone(res.Test)
			if withLL {
				if res.LL.Epoch == res.BestEpoch {
					wantTest["ll_at_best_ll"] = wantTest["ll"]
				} else if _, ok := test["ll_at_best_ll"]; ok {
					delete(test, "ll_at_best_ll")
				} else {
					t.Errorf("test: no ll_at_best_ll")
				}
			}
			sameMetrics(t, "test", test, wantTest, tol)
			// The validation metrics reported are those of the returned
			// (best) parameters; validation ranks only to select on MRR,
			// and never computes Sem@k.
			wantValid := brute.RankMetrics(ds, scores, ds.Valid, hits, metrics.Pessimistic, withLL)
			if c.sel == "ll" {
				wantValid = map[string]float64{"ll": wantValid["ll"]}
			}
			sameMetrics(t, "valid", res.Valid, wantValid, tol)
		})
	}
}

// An epoch's training loss is the mean loss per training triple, batches
// weighted by their size (here 8, 8 and 6), and the step time is a mean
// per step. With a learning rate too small to move float64 parameters,
// every batch sees the initial model, so the MLE loss of the epoch is
// −(mean log p) of the training triples under the returned parameters.
func TestTrainLossIsMeanPerTripleLoss(t *testing.T) {
	ds := typedTiny(t)
	for _, c := range []struct {
		dtype tensor.Dtype
		tol   float64
	}{{tensor.Float64, 1e-9}, {tensor.Float32, 1e-5}} {
		cfg := Config{Model: "cp2", Rank: 3, Objective: objectives.MLE{}, LearningRate: 1e-300, BatchSize: 8, Epochs: 2, Seed: 5,
			Dtype: c.dtype, Eval: EvalConfig{SkipTest: true}}
		res, err := Run(context.Background(), cfg, ds, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := -brute.RankMetrics(ds, bruteScores(t, res.Model, nil), ds.Train, nil, metrics.Pessimistic, true)["ll"]
		var seconds float64
		for _, e := range res.Epochs {
			if !(math.Abs(e.TrainLoss-want) <= c.tol*math.Max(1, math.Abs(want))) {
				t.Errorf("%v, epoch %d: training loss %v, mean −log p of the training triples %v", c.dtype, e.Epoch, e.TrainLoss, want)
			}
			seconds += e.Seconds
		}
		if steps := 3 * len(res.Epochs); !(res.StepSeconds > 0 && res.StepSeconds*float64(steps) <= seconds) {
			t.Errorf("%v: %v s per step over %d steps; the epochs took %v s", c.dtype, res.StepSeconds, steps, seconds)
		}
	}
}

// The calibration's hard negatives replace each test triple's object by an
// object the relation has in training that is not a known answer: one per
// test triple that has such an object. Its min-max range is that of the
// training triples' log-scores.
func TestCalibrationDrawsFromTraining(t *testing.T) {
	ds := typedTiny(t)
	cfg := Config{Model: "cp2", Rank: 3, Objective: objectives.MLE{}, LearningRate: 0.05, BatchSize: 8, Epochs: 2, Seed: 5,
		Dtype: tensor.Float64, Eval: EvalConfig{ECE: true}}
	res, err := Run(context.Background(), cfg, ds, nil)
	if err != nil {
		t.Fatal(err)
	}
	known := brute.Known(ds)
	wantNeg := 0
	for _, tr := range ds.Test {
		for _, u := range ds.Train {
			if c := (kg.Triple{S: tr.S, R: tr.R, O: u.O}); u.R == tr.R && !known[c] {
				wantNeg++
				break
			}
		}
	}
	scores := bruteScores(t, res.Model, nil)
	lo, hi := math.Inf(1), math.Inf(-1)
	ne, nr := ds.Entities.Len(), ds.Relations.Len()
	for _, tr := range ds.Train {
		v := scores[(int(tr.S)*nr+int(tr.R))*ne+int(tr.O)]
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	c := res.Calibration
	if c == nil {
		t.Fatal("no calibration")
	}
	if c.Positives != len(ds.Test) || c.Negatives != wantNeg || !(math.Abs(c.TrainMin-lo) <= 1e-9) || !(math.Abs(c.TrainMax-hi) <= 1e-9) {
		t.Errorf("calibration: %d positives, %d negatives, train range [%v, %v]; want %d, %d, [%v, %v]",
			c.Positives, c.Negatives, c.TrainMin, c.TrainMax, len(ds.Test), wantNeg, lo, hi)
	}
}
