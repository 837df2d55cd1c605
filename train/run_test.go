package train

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"gekc/kg"
	"gekc/metrics"
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

// A domain-constrained GeKC trained on a typed data set in OGB's layout:
// it ranks by OGB's protocol against the supplied negatives, never puts a
// schema-inconsistent candidate first (Sem@1 = 1), and its test
// log-likelihood is normalised over consistent triples only, so it is at
// least that of the same model without the constraint evaluated on the same
// parameters.
func TestConstrainedRunOnTypedData(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	ds, err := kg.Load(filepath.Join(filepath.Dir(file), "..", "kg", "testdata", "ogbl_biokg_tiny"))
	if err != nil {
		t.Fatal(err)
	}
	for _, model := range []string{"cp2", "complex+"} {
		cfg := Config{Model: model, Rank: 3, Objective: objectives.MLE{}, LearningRate: 1e-2, BatchSize: 4, Epochs: 5, Seed: 1,
			Constrained: true, Dtype: tensor.Float64,
			Eval: EvalConfig{LogLikelihood: true, SemK: []int{1, 2}, SemUnfilteredK: []int{1, 2}, Hits: []int{1}}}
		res, err := Run(context.Background(), cfg, ds, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != Finished {
			t.Fatalf("%s: %s %v", model, res.Status, res.Notes)
		}
		if res.Test["sem_unfiltered@1"] != 1 || res.Test["sem_unfiltered@2"] != 1 {
			t.Errorf("%s: constrained unfiltered Sem@1, Sem@2 = %v, %v; want 1", model, res.Test["sem_unfiltered@1"], res.Test["sem_unfiltered@2"])
		}
		// Filtered, a query's consistent candidates are those of the
		// wanted type that are not other known answers; a constrained
		// model ranks all of them first, so Sem@k is their count (at most
		// k) over k.
		filter := kg.NewFilter(ds.Train, ds.Valid, ds.Test)
		for _, k := range []int{1, 2} {
			var want float64
			for _, tr := range ds.Test {
				for _, side := range []int{0, 2} {
					typ, known := ds.Schema.ObjectType[tr.R], filter.Objects(tr.S, tr.R)
					if side == 0 {
						typ, known = ds.Schema.SubjectType[tr.R], filter.Subjects(tr.R, tr.O)
					}
					c := -len(known) + 1 // the true answer stays
					for _, et := range ds.Schema.EntityType {
						if et == typ {
							c++
						}
					}
					want += float64(min(c, k)) / float64(k) / float64(2*len(ds.Test))
				}
			}
			if got := res.Test[fmt.Sprintf("sem@%d", k)]; math.Abs(got-want) > 1e-12 {
				t.Errorf("%s: constrained filtered Sem@%d = %v, want %v", model, k, got, want)
			}
		}
		if ogb := len(res.Notes) > 0 && strings.HasPrefix(res.Notes[0], "ranking: OGB"); !ogb {
			t.Errorf("%s: notes %q do not say the OGB protocol was used", model, res.Notes)
		}
		if mrr := res.Test["mrr"]; !(mrr > 0 && mrr <= 1) {
			t.Errorf("%s: MRR %v", model, mrr)
		}
		free, err := metrics.NewEvaluator(res.Model, 4)
		if err != nil {
			t.Fatal(err)
		}
		llFree, err := free.LogLikelihood(ds.Test)
		if err != nil {
			t.Fatal(err)
		}
		if ll := res.Test["ll"]; !(ll >= llFree-1e-9) || math.IsInf(ll, 0) {
			t.Errorf("%s: constrained test LL %v below unconstrained %v on the same parameters", model, ll, llFree)
		}
	}
	cfg := Config{Model: "complex", Rank: 3, Objective: objectives.PLL{Weights: objectives.Uniform}, LearningRate: 1e-2, BatchSize: 4, Epochs: 1, Constrained: true}
	if _, err := Run(context.Background(), cfg, ds, nil); err == nil {
		t.Error("constrained energy-based model trained")
	}
	cfg.Model = "cp2"
	if _, err := Run(context.Background(), cfg, repoData(t, "nations"), nil); err == nil {
		t.Error("constraints on a data set without a schema accepted")
	}
}

// With Init set (distillation), Result.Initial holds the test metrics of the
// model as initialised: for parameters copied from a trained run, that run's
// own test metrics.
func TestRunReportsInitialMetrics(t *testing.T) {
	ds := repoData(t, "nations")
	cfg := Config{Model: "cp2", Rank: 8, Objective: objectives.MLE{}, LearningRate: 1e-2, BatchSize: 200, Epochs: 3, Seed: 1}
	src, err := Run(context.Background(), cfg, ds, nil)
	if err != nil {
		t.Fatal(err)
	}
	if src.Initial != nil {
		t.Errorf("Initial reported without Init: %v", src.Initial)
	}
	cfg.Seed = 2
	cfg.Init = func(m *models.Model) error {
		for _, n := range m.ParamNames() {
			copy(m.Param(n).Data().([]float32), src.Model.Param(n).Data().([]float32))
		}
		return nil
	}
	res, err := Run(context.Background(), cfg, ds, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := res.Initial["mrr"], src.Test["mrr"]; got != want {
		t.Errorf("initial test MRR %v, want the source's %v", got, want)
	}
	// The converted model is validated as epoch 0 and competes with its
	// fine-tuning: the best epoch's validation score is the maximum.
	if len(res.Epochs) == 0 || res.Epochs[0].Epoch != 0 {
		t.Fatalf("no epoch-0 validation: %v", res.Epochs)
	}
	best := math.Inf(-1)
	for _, e := range res.Epochs {
		best = math.Max(best, e.Valid["mrr"])
	}
	if res.Valid["mrr"] != best {
		t.Errorf("selected validation MRR %v (epoch %d), best over epochs 0.. is %v", res.Valid["mrr"], res.BestEpoch, best)
	}
}

// Relation ranking adds mrr_relation and hits@k_relation, on validation and
// test, and leaves every other metric as it was: mrr stays the subject and
// object queries' mean. The values are those of the evaluator's own
// relation ranking of the trained model.
func TestRunReportsRelationRanking(t *testing.T) {
	ds := repoData(t, "nations")
	cfg := Config{Model: "cp2", Rank: 5, Objective: objectives.PLL{Weights: objectives.Uniform}, LearningRate: 1e-2, BatchSize: 200,
		Epochs: 2, Seed: 1, Dtype: tensor.Float64, Eval: EvalConfig{Hits: []int{1, 3}}}
	plain, err := Run(context.Background(), cfg, ds, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Eval.Relations = true
	withRel, err := Run(context.Background(), cfg, ds, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range plain.Test {
		if withRel.Test[k] != v {
			t.Errorf("test %s = %v with relation ranking, %v without", k, withRel.Test[k], v)
		}
	}
	ev, err := metrics.NewEvaluator(withRel.Model, 100)
	if err != nil {
		t.Fatal(err)
	}
	want, err := ev.RankRelations(ds.Test, kg.NewFilter(ds.Train, ds.Valid, ds.Test), metrics.Pessimistic, []int{1, 3})
	if err != nil {
		t.Fatal(err)
	}
	for k, w := range map[string]float64{"mrr_relation": want.MRR, "hits@1_relation": want.Hits[1], "hits@3_relation": want.Hits[3]} {
		if got, ok := withRel.Test[k]; !ok || got != w {
			t.Errorf("test %s = %v (reported %v), want %v", k, got, ok, w)
		}
		if _, ok := withRel.Valid[k]; !ok {
			t.Errorf("validation has no %s", k)
		}
	}
	if len(withRel.Test) != len(plain.Test)+3 {
		t.Errorf("test metrics %v, want those of %v and three relation ones", withRel.Test, plain.Test)
	}
}
