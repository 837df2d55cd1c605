package sweep

import (
	"context"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gekc/internal/jsonfloat"
	"gekc/kg"
	"gekc/metrics"
	"gekc/metrics/brute"
	"gekc/models"
	"gekc/report"
	"gekc/resultsdir"
	"gekc/runspec"
	"gekc/train"
	"gekc/train/ckpt"
)

// Every number a real sweep writes to metrics.json and results.tsv,
// recomputed by hand from the run's checkpoint: filtered ranks from the
// log-score of each candidate triple alone, the known triples read from the
// three split files here; the average log-likelihood from log Z enumerated
// over every triple. The validation metrics recomputed from the checkpoint
// must be the ones recorded for best_epoch: the checkpoint holds the best
// epoch's parameters, not the last epoch's. (train.Run's own numbers are
// train.TestRunMetricsEqualHandComputation; this is what the sweep makes
// of them: records, table, checkpoint, distillation.)
func TestReportedNumbersEqualHandComputation(t *testing.T) {
	data := t.TempDir()
	must(t, brute.WriteTypedTiny(filepath.Join(data, "tiny")))
	const patience = 2
	src := fmt.Sprintf(`name = "numbers"
[defaults]
dataset = "tiny"
rank = 3
batch_size = 8
learning_rate = 0.2
epochs = 40
patience = %d
dtype = "float64"
seed = 3
eval = { metrics = ["mrr", "hits", "ll"], hits = [1, 2, 3, 5], batch_size = 3 }

[[sweep]]
model = "cp2"
objective = "mle"

[[sweep]]
model = "complex+"
objective = "pll"
constraints = "domain"

[[sweep]]
model = "complex"
objective = "pll"
eval = { metrics = ["mrr", "hits"], hits = [1, 2, 3, 5], batch_size = 3, tie_policy = "realistic" }
`, patience)
	ts := trainedSweep(t, src, data)
	table, err := report.ReadTSV(filepath.Join(ts.out, resultsdir.ResultsTSVName))
	must(t, err)
	rows := map[string]report.Row{}
	for _, r := range table.Rows {
		rows[r["id"]] = r
	}
	for _, id := range ts.ids() {
		t.Run(id, func(t *testing.T) {
			dir := filepath.Join(ts.out, resultsdir.RunsDirName, id)
			rec, err := resultsdir.ReadRecord(dir)
			must(t, err)
			if rec.Status != train.Finished {
				t.Fatalf("%s %s", rec.Status, rec.Error)
			}
			fr, err := resultsdir.LoadFinished(dir, data)
			must(t, err)
			ds := fr.Data
			var consistent func(kg.Triple) bool
			if rec.Spec.Constraints == "domain" {
				consistent = func(tr kg.Triple) bool { return brute.TypedTinyConsistent(ds, tr) }
			}
			scores := handScores(t, fr.Model, consistent)
			withLL := slices.Contains(rec.Spec.Eval.Metrics, "ll")
			policy, err := metrics.ParseTiePolicy(rec.Spec.Eval.TiePolicy)
			must(t, err)
			hits := rec.Spec.Eval.Hits
			wantTest := brute.RankMetrics(ds, scores, ds.Test, hits, policy, withLL)
			wantValid := brute.RankMetrics(ds, scores, ds.Valid, hits, policy, withLL)

			test := jsonfloat.Unmap(rec.Test)
			stepMS := test["step_ms"]
			delete(test, "step_ms")
			// Recomputed below, from the parameters after its epoch.
			llAtBestLL, hasLLAtBestLL := test["ll_at_best_ll"]
			delete(test, "ll_at_best_ll")
			if hasLLAtBestLL != withLL {
				t.Errorf("metrics.json test has ll_at_best_ll: %v; the model has a log-likelihood: %v", hasLLAtBestLL, withLL)
			}
			compareMetrics(t, "metrics.json test", test, wantTest, 1e-9)
			compareMetrics(t, "metrics.json valid", jsonfloat.Unmap(rec.Valid), wantValid, 1e-9)

			// best_epoch names the first epoch with the best validation
			// score, whose record holds the validation metrics; the run
			// stopped `patience` validations later.
			sel := rec.Spec.Eval.Select
			best, bestEpoch := math.Inf(-1), -1
			var last int
			for _, e := range rec.Epochs {
				if v := float64(e.Valid[sel]); v > best {
					best, bestEpoch = v, e.Epoch
				}
				last = e.Epoch
				if e.Epoch == rec.BestEpoch {
					compareMetrics(t, fmt.Sprintf("epoch %d's validation", e.Epoch), e.Valid, jsonfloat.Unmap(rec.Valid), 0)
				}
			}
			if rec.BestEpoch != bestEpoch {
				t.Errorf("best_epoch %d; the best validation %s is at epoch %d", rec.BestEpoch, sel, bestEpoch)
			}
			if last != rec.BestEpoch+patience {
				t.Errorf("stopped at epoch %d, best epoch %d, patience %d", last, rec.BestEpoch, patience)
			}
			t.Logf("best epoch %d, stopped after epoch %d", rec.BestEpoch, last)
			if last >= rec.Spec.Epochs {
				t.Errorf("the run did not stop early (epoch %d of %d): the test cannot tell the best epoch from the last", last, rec.Spec.Epochs)
			}
			// The checkpoint holds the parameters after best_epoch: the
			// same run trained again (training is deterministic), its
			// parameters captured after every epoch.
			cfg, err := runspec.TrainConfig(rec.Spec)
			must(t, err)
			after := map[int]map[string][]float64{}
			cfg.SaveState = func(s *train.State) error {
				p := map[string][]float64{}
				for n, x := range s.Params {
					p[n] = slices.Clone(x.Data().([]float64))
				}
				after[s.Epoch] = p
				return nil
			}
			again, err := train.Run(context.Background(), cfg, ds, nil)
			must(t, err)
			if again.BestEpoch != rec.BestEpoch {
				t.Fatalf("trained again, best epoch %d; metrics.json says %d", again.BestEpoch, rec.BestEpoch)
			}
			for _, n := range fr.Model.ParamNames() {
				if !slices.Equal(fr.Model.Param(n).Data().([]float64), after[rec.BestEpoch][n]) {
					t.Errorf("checkpoint's %s is not its value after best_epoch %d", n, rec.BestEpoch)
				}
			}

			// ll_at_best_ll is the test log-likelihood of the parameters
			// after the first epoch with the best validation
			// log-likelihood, recomputed by hand from them.
			if withLL {
				bestLL, llEpoch := math.Inf(-1), -1
				for _, e := range rec.Epochs {
					if v := float64(e.Valid["ll"]); v > bestLL {
						bestLL, llEpoch = v, e.Epoch
					}
				}
				params, ok := after[llEpoch]
				if !ok {
					t.Fatalf("the best validation log-likelihood is at epoch %d, whose parameters were not captured", llEpoch)
				}
				m := fr.Model // its parameters swapped for a moment
				kept := map[string][]float64{}
				for _, n := range m.ParamNames() {
					kept[n] = slices.Clone(m.Param(n).Data().([]float64))
					copy(m.Param(n).Data().([]float64), params[n])
				}
				want := brute.RankMetrics(ds, handScores(t, m, consistent), ds.Test, hits, policy, true)["ll"]
				for _, n := range m.ParamNames() {
					copy(m.Param(n).Data().([]float64), kept[n])
				}
				if !(math.Abs(llAtBestLL-want) <= 1e-9*max(1, math.Abs(want))) {
					t.Errorf("metrics.json test ll_at_best_ll = %v; the parameters after epoch %d (best validation log-likelihood) score %v by hand",
						llAtBestLL, llEpoch, want)
				}
				t.Logf("best validation log-likelihood at epoch %d", llEpoch)
				wantTest["ll_at_best_ll"] = want
			}

			var secs float64
			for _, e := range rec.Epochs {
				secs += float64(e.Seconds)
			}
			// step_ms is a mean per step, in milliseconds: the steps (3 an
			// epoch) take at most the epochs' time, and at least 1% of it.
			if steps := 3 * float64(len(rec.Epochs)); !(stepMS*steps <= 1000*secs && stepMS*steps >= 10*secs) {
				t.Errorf("step_ms %v over %v steps; the epochs took %v s", stepMS, steps, secs)
			}
			if got, want := float64(rec.SecondsPerEpoch), secs/float64(len(rec.Epochs)); !(math.Abs(got-want) <= 1e-9*max(1, want)) {
				t.Errorf("seconds_per_epoch %v, mean of the epochs' %v", got, want)
			}

			// results.tsv: the same numbers, 6 significant digits.
			row, ok := rows[id]
			if !ok {
				t.Fatal("no results.tsv row")
			}
			for prefix, want := range map[string]map[string]float64{"test_": wantTest, "valid_": wantValid} {
				for k, w := range want {
					g, err := strconv.ParseFloat(row[prefix+k], 64)
					if err != nil || !(math.Abs(g-w) <= 1e-5*max(1, math.Abs(w))) {
						t.Errorf("results.tsv %s%s = %q, recomputed by hand %v", prefix, k, row[prefix+k], w)
					}
				}
			}
			for col, want := range map[string]string{"best_epoch": strconv.Itoa(rec.BestEpoch), "epochs": strconv.Itoa(last),
				"status": "finished", "seconds_per_epoch": strconv.FormatFloat(float64(rec.SecondsPerEpoch), 'f', 2, 64)} {
				if row[col] != want {
					t.Errorf("results.tsv %s = %q, want %q", col, row[col], want)
				}
			}
			// The run distilled from this one's checkpoint reports, as
			// init_*, this run's own test metrics: the converted model is
			// this model.
			job := Job{ID: id + "-distilled", Spec: rec.Spec, DataRoot: data, RunDir: t.TempDir(), Observer: nopObserver{},
				DistillCheckpoint: filepath.Join(dir, ckpt.CheckpointName)}
			job.Spec.Epochs = 1
			d, err := Train(context.Background(), job)
			must(t, err)
			initial := map[string]float64{}
			for k, v := range d.Test {
				if m, ok := strings.CutPrefix(k, "init_"); ok {
					initial[m] = v
				}
			}
			wantInitial := maps.Clone(wantTest) // no log-likelihood track before training
			delete(wantInitial, "ll_at_best_ll")
			compareMetrics(t, "distilled run's init_ metrics", initial, wantInitial, 1e-9)
			if len(d.Epochs) == 0 || d.Epochs[0].Epoch != 0 {
				t.Errorf("distilled run: no epoch 0 (%v)", d.Epochs)
			}

			// Distilled from parameters holding a NaN, the run diverges
			// and leaves no checkpoint behind.
			bad := filepath.Join(t.TempDir(), "nan.npz")
			p := fr.Model.Param(fr.Model.ParamNames()[0]).Data().([]float64)
			keep := p[0]
			p[0] = math.NaN()
			must(t, ckpt.Write(bad, fr.Model))
			p[0] = keep
			job.DistillCheckpoint, job.RunDir = bad, t.TempDir()
			d, err = Train(context.Background(), job)
			must(t, err)
			if d.Status != train.Diverged || fileExists(filepath.Join(job.RunDir, ckpt.CheckpointName)) {
				t.Errorf("distilled from NaN: status %s, checkpoint written %v", d.Status, fileExists(filepath.Join(job.RunDir, ckpt.CheckpointName)))
			}

			for k, v := range row {
				if (strings.HasPrefix(k, "test_") || strings.HasPrefix(k, "valid_")) && v != "" && k != "test_step_ms" {
					m := k[strings.IndexByte(k, '_')+1:]
					if _, ok := wantTest[m]; !ok {
						t.Errorf("results.tsv has %s = %s, not recomputed here", k, v)
					}
				}
			}
		})
	}
}

// handScores returns log φ of every triple, indexed [(s·|R| + r)·|E| + o],
// each scored alone; those consistent (if not nil) rules out get −Inf.
func handScores(t *testing.T, m *models.Model, consistent func(kg.Triple) bool) []float64 {
	t.Helper()
	out, err := brute.Scores(m, 5, consistent)
	must(t, err)
	return out
}

// compareMetrics reports keys missing from got or unexpected in it, and
// values further than tol (relative to max(1, |want|)) from want.
func compareMetrics(t *testing.T, what string, got, want map[string]float64, tol float64) {
	t.Helper()
	for k, w := range want {
		g, ok := got[k]
		switch {
		case !ok:
			t.Errorf("%s: no %s (want %v)", what, k, w)
		case !(math.Abs(g-w) <= tol*math.Max(1, math.Abs(w))):
			t.Errorf("%s: %s = %v, recomputed by hand %v", what, k, g, w)
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: unexpected %s = %v", what, k, g)
		}
	}
}
