package train

import (
	"context"
	"runtime"
	"strings"
	"testing"

	"gekc/dist"
	"gekc/models"
	"gekc/objectives"
)

// The estimate made before a run builds anything must be what the run then
// holds: every part measured from the same graphs, extrapolated from small
// models, for every registered model, objective and an evaluation batch cut
// by its buffer cap.
func TestEstimateMemoryMatchesRun(t *testing.T) {
	ds := repoData(t, "umls")
	for _, name := range models.Names() {
		for _, obj := range []objectives.Objective{objectives.PLL{Weights: objectives.Uniform}, objectives.MLE{}} {
			cfg := Config{Model: name, Rank: 6, Objective: obj, LearningRate: 1e-3, BatchSize: 64, Epochs: 1,
				Eval: EvalConfig{BatchSize: 100, Buffers: 40 << 10}}
			est, err := EstimateMemory(cfg, SizesOf(ds))
			r, runErr := newRun(context.Background(), cfg, ds, nil)
			if (err != nil) != (runErr != nil) {
				t.Fatalf("%s/%s: estimate error %v, run error %v", name, obj.Name(), err, runErr)
			}
			if err != nil {
				continue // an energy model under MLE, refused by both
			}
			got := r.res.Memory
			if est.Parameters != got.Parameters || est.Gradients != got.Gradients || est.Optimizer != got.Optimizer || est.Best != got.Best ||
				est.Step != got.Step || est.Eval != got.Eval || est.EvalBatch != got.EvalBatch {
				t.Errorf("%s/%s: estimate\n  %+v\nrun\n  %+v", name, obj.Name(), est, got)
			}
			if got.EvalBatch >= 100 {
				t.Errorf("%s/%s: evaluation batch %d holds %d bytes, cap %d", name, obj.Name(), got.EvalBatch, got.Eval, cfg.Eval.Buffers)
			}
			if est.Data < got.Data/2 || est.Data > 2*got.Data {
				t.Errorf("%s/%s: data estimated %d bytes, run holds %d", name, obj.Name(), est.Data, got.Data)
			}
			if est.Best != est.Parameters || est.Optimizer != 2*est.Parameters {
				t.Errorf("%s/%s: best copy %d and Adam %d for %d bytes of parameters", name, obj.Name(), est.Best, est.Optimizer, est.Parameters)
			}
			for _, o := range []struct {
				opt   Optimizer
				slots int64
			}{{Optimizer{Name: "adagrad"}, 1}, {Optimizer{Name: "sgd"}, 0}, {Optimizer{Name: "sgd", Momentum: 0.5}, 1}} {
				c := cfg
				c.Optimizer = o.opt
				e, err := EstimateMemory(c, SizesOf(ds))
				if err != nil || e.Optimizer != o.slots*e.Parameters {
					t.Errorf("%s/%s under %+v: optimiser state %d for %d bytes of parameters (%v)", name, obj.Name(), o.opt, e.Optimizer, e.Parameters, err)
				}
			}
			if est.Parameters == 0 || est.Gradients == 0 || est.Step == 0 {
				t.Errorf("%s/%s: empty parts in %+v", name, obj.Name(), est)
			}
		}
	}
}

// A budget the run cannot fit is refused before training, with the
// estimate and the budget; one it fits cuts only the evaluation batch.
func TestMemoryBudget(t *testing.T) {
	ds := repoData(t, "umls")
	cfg := Config{Model: "complex2", Rank: 50, Objective: objectives.PLL{Weights: objectives.Uniform}, LearningRate: 1e-3,
		BatchSize: 100, Epochs: 1, Eval: EvalConfig{SkipTest: true}}
	free, err := EstimateMemory(cfg, SizesOf(ds))
	if err != nil {
		t.Fatal(err)
	}
	cfg.MemoryBudget = free.Total() - free.Eval/2
	tight, err := EstimateMemory(cfg, SizesOf(ds))
	if err != nil {
		t.Fatalf("a budget that leaves half the evaluation buffers: %v", err)
	}
	if tight.EvalBatch >= free.EvalBatch || tight.Total() > cfg.MemoryBudget || tight.Eval >= free.Eval {
		t.Errorf("budget %d: evaluation batch %d (%d bytes, total %d), unbudgeted %d (%d bytes)",
			cfg.MemoryBudget, tight.EvalBatch, tight.Eval, tight.Total(), free.EvalBatch, free.Eval)
	}
	// The least a run can hold is its fixed parts and one query's
	// evaluation buffers: a byte less is refused, that much is not.
	one := cfg
	one.MemoryBudget, one.Eval.BatchSize = 0, 1
	least, err := EstimateMemory(one, SizesOf(ds))
	if err != nil {
		t.Fatal(err)
	}
	cfg.MemoryBudget = least.Total()
	if _, err := EstimateMemory(cfg, SizesOf(ds)); err != nil {
		t.Errorf("a budget of exactly the least the run holds: %v", err)
	}
	cfg.MemoryBudget = least.Total() - 1
	if _, err := EstimateMemory(cfg, SizesOf(ds)); err == nil {
		t.Errorf("a budget one byte under the least the run holds (%d) was accepted", least.Total())
	}
	cfg.MemoryBudget = free.Parameters
	_, err = Run(context.Background(), cfg, ds, nil)
	if err == nil || !strings.Contains(err.Error(), "memory budget is "+FormatBytes(free.Parameters)) || !strings.Contains(err.Error(), "parameters "+FormatBytes(free.Parameters)) {
		t.Errorf("a budget of the parameters alone: error %v", err)
	}
}

func TestFormatBytes(t *testing.T) {
	for _, c := range []struct {
		b    int64
		want string
	}{{0, "0 B"}, {1023, "1023 B"}, {1024, "1 KiB"}, {1536, "1.5 KiB"}, {512 << 20, "512 MiB"}, {3 << 30, "3 GiB"}, {1011 << 20, "1011 MiB"}, {1023693, "1000 KiB"}, {1022976, "999 KiB"}, {1<<30 - 1, "1024 MiB"}, {1 << 40, "1 TiB"}} {
		if got := FormatBytes(c.b); got != c.want {
			t.Errorf("FormatBytes(%d) = %q, want %q", c.b, got, c.want)
		}
	}
}

// eval.negatives ranks against sampled negatives: ranks then run from 1 to
// negatives+1, the run says so, and two runs rank against the same ones.
func TestRunRanksAgainstSampledNegatives(t *testing.T) {
	ds := repoData(t, "nations")
	cfg := Config{Model: "complex2", Rank: 4, Objective: objectives.PLL{Weights: objectives.Uniform}, LearningRate: 1e-2,
		BatchSize: 500, Epochs: 2, Seed: 3, Eval: EvalConfig{Negatives: 3, Hits: []int{1, 4}}}
	a, err := Run(context.Background(), cfg, ds, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Run(context.Background(), cfg, ds, nil)
	if err != nil {
		t.Fatal(err)
	}
	if a.Test["mrr"] != b.Test["mrr"] || a.Test["mrr"] < 0.25 || a.Test["hits@4"] != 1 {
		t.Errorf("against 3 negatives: test MRR %v and %v, hits@4 %v (want ≥ 1/4, equal, 1)", a.Test["mrr"], b.Test["mrr"], a.Test["hits@4"])
	}
	full := cfg
	full.Eval.Negatives = 0
	c, err := Run(context.Background(), full, ds, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Test["hits@4"] == 1 || c.Test["mrr"] >= a.Test["mrr"] {
		t.Errorf("ranking against all 14 entities: hits@4 %v, MRR %v (sampled %v)", c.Test["hits@4"], c.Test["mrr"], a.Test["mrr"])
	}
	if !strings.Contains(strings.Join(a.Notes, "\n"), "3 sampled negatives per side") {
		t.Errorf("notes: %q", a.Notes)
	}
}

// Estimates are made from shapes: at sizes whose tables would take tens of
// gigabytes (TuckER's d³ core, RESCAL's d² relations, ComplEx² at a rank
// of twenty million) the estimate allocates a few MiB at most, and the
// budget refuses the run with it.
func TestEstimateMemoryAllocatesNothingLarge(t *testing.T) {
	sz := DataSizes{Entities: 135, Relations: 46, Train: 5216, Valid: 652, Test: 661}
	for _, c := range []struct {
		model string
		rank  int
	}{{"tucker2", 1500}, {"rescal2", 8000}, {"complex2", 20_000_000}} {
		cfg := Config{Model: c.model, Rank: c.rank, Objective: objectives.PLL{Weights: objectives.Uniform}, LearningRate: 1e-3,
			BatchSize: 500, Epochs: 1, MemoryBudget: 8 << 30}
		for _, p := range []int{1, 4} {
			cfg.Processes = p
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			est, err := EstimateMemory(cfg, sz)
			runtime.ReadMemStats(&after)
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
				t.Errorf("%s d=%d P=%d: the estimate allocated %d MiB", c.model, c.rank, p, alloc>>20)
			}
			if err == nil || !strings.Contains(err.Error(), "memory budget") || est.Total() <= cfg.MemoryBudget {
				t.Errorf("%s d=%d P=%d: estimate %s, error %v; want it refused under 8 GiB", c.model, c.rank, p, est, err)
			}
		}
	}
}

// A sharded run's step buffers as estimated before it starts are within
// a fifth of what its step measures (dist.Stepper.BufferBytes), for a
// GeKC and an energy-based model.
func TestShardedStepEstimate(t *testing.T) {
	ds := repoData(t, "umls")
	for _, model := range []string{"complex2", "cp+", "complex"} {
		cfg := Config{Model: model, Rank: 6, Objective: objectives.PLL{Weights: objectives.Uniform}, LearningRate: 1e-3, BatchSize: 64, Epochs: 1}
		comms := dist.Local(2)
		cfg.Shard = comms[0] // building takes no collective
		opt, err := cfg.Optimizer.New(cfg.LearningRate)
		if err != nil {
			t.Fatal(err)
		}
		_, _, _, got, err := newShardedSteps(cfg, modelSizes(cfg, ds.Entities.Len(), ds.Relations.Len()), opt)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Shard, cfg.Processes = nil, 2
		est, err := EstimateMemory(cfg, SizesOf(ds))
		if err != nil {
			t.Fatal(err)
		}
		if r := float64(est.Step) / float64(got.Step); r < 0.8 || r > 1.25 {
			t.Errorf("%s: step buffers estimated %d bytes, the step holds %d", model, est.Step, got.Step)
		}
		// Process 0 holds the larger half of an odd number of rows.
		for _, c := range [][3]any{{"parameters", est.Parameters, got.Parameters}, {"gradients", est.Gradients, got.Gradients}} {
			if r := float64(c[1].(int64)) / float64(c[2].(int64)); r < 0.98 || r > 1 {
				t.Errorf("%s: %s estimated %d bytes, process 0 of 2 holds %d", model, c[0], c[1], c[2])
			}
		}
	}
}
