package train

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	"gekc/dist"
	"gekc/kg"
	"gekc/objectives"

	"gorgonia.org/tensor"
)

// TestShardedRunMatchesOneProcess trains the same run on one process and
// sharded over 2 and 3 goroutine processes: every epoch's loss and
// validation metrics, and the test metrics, agree on every process, to
// 1e-9 in float64; in float32 losses and log-likelihoods to 1e-4 and
// ranking metrics to two rank flips. (At a learning rate ten times as
// large, Adam's trajectories on Nations part after two epochs, for any
// change of summation order: a property of the dynamics, not of sharding;
// SGD at that rate stays within 1e-13.)
func TestShardedRunMatchesOneProcess(t *testing.T) {
	ds := tinyShardData(t)
	for _, c := range []struct {
		model string
		obj   objectives.Objective
		dtype tensor.Dtype
		tol   tolerance
		negs  int // sampled negatives per query (0: rank against all)
	}{
		{"complex2", objectives.PLL{Weights: objectives.Uniform}, tensor.Float64, tolerance{1e-9, 1e-9}, 0},
		{"cp+", objectives.MLE{}, tensor.Float64, tolerance{1e-9, 1e-9}, 0},
		{"rescal+", objectives.PLL{Weights: objectives.Uniform}, tensor.Float64, tolerance{1e-9, 1e-9}, 12},
		// Energy-based: the conditionals' log-sum-exps over every process's rows.
		{"complex", objectives.Regularized{Objective: objectives.PLL{Weights: objectives.Uniform}, N3: 0.01}, tensor.Float64, tolerance{1e-9, 1e-9}, 0},
		// A float32 rounding apart flips a near tie's rank now and then:
		// ranking metrics get two of Nations' 398 validation triples.
		{"complex2", objectives.MLE{}, tensor.Float32, tolerance{1e-4, 2.0 / 398}, 0},
	} {
		cfg := shardConfig(c.model, c.obj)
		cfg.Dtype, cfg.Eval.Negatives = c.dtype, c.negs
		want, err := Run(context.Background(), cfg, ds, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, np := range []int{2, 3} {
			results := make([]*Result, np)
			errs := make([]error, np)
			var wg sync.WaitGroup
			for p, comm := range dist.Local(np) {
				wg.Go(func() {
					c := cfg
					c.Shard = comm
					results[p], errs[p] = Run(context.Background(), c, ds, nil)
				})
			}
			wg.Wait()
			for p, res := range results {
				if errs[p] != nil {
					t.Fatalf("%s P=%d process %d: %v", c.model, np, p, errs[p])
				}
				name := fmt.Sprintf("%s %s %v P=%d process %d", c.model, c.obj.Name(), c.dtype, np, p)
				compareResults(t, name, res, want, c.tol)
			}
		}
	}
}

// tolerance is a relative one for losses and log-likelihoods, and an
// absolute one for ranking metrics (MRR, Hits@k).
type tolerance struct{ rel, rank float64 }

func (tol tolerance) ok(metric string, got, want float64) bool {
	if strings.HasPrefix(metric, "mrr") || strings.HasPrefix(metric, "hits") {
		return math.Abs(got-want) <= tol.rank
	}
	return near(got, want, tol.rel)
}

func compareResults(t *testing.T, name string, got, want *Result, tol tolerance) {
	t.Helper()
	if len(got.Epochs) != len(want.Epochs) || got.BestEpoch != want.BestEpoch {
		t.Fatalf("%s: %d epochs, best %d; one process: %d, best %d", name, len(got.Epochs), got.BestEpoch, len(want.Epochs), want.BestEpoch)
	}
	for i, e := range got.Epochs {
		w := want.Epochs[i]
		if !tol.ok("loss", e.TrainLoss, w.TrainLoss) {
			t.Errorf("%s: epoch %d loss %.7g, one process %.7g", name, e.Epoch, e.TrainLoss, w.TrainLoss)
		}
		for k, v := range w.Valid {
			if !tol.ok(k, e.Valid[k], v) {
				t.Errorf("%s: epoch %d valid %s %.7g, one process %.7g", name, e.Epoch, k, e.Valid[k], v)
			}
		}
	}
	for k, v := range want.Test {
		if !tol.ok(k, got.Test[k], v) {
			t.Errorf("%s: test %s %.7g, one process %.7g", name, k, got.Test[k], v)
		}
	}
}

func near(a, b, tol float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Abs(a-b) <= tol*math.Max(1, math.Abs(b))
}

func shardConfig(model string, obj objectives.Objective) Config {
	return Config{Model: model, Rank: 4, Objective: obj, LearningRate: 0.005, BatchSize: 16, Epochs: 5,
		Seed: 3, Eval: EvalConfig{Hits: []int{1, 10}, Select: "mrr", Every: 1, LogLikelihood: true}}
}

func tinyShardData(t *testing.T) *kg.Dataset { return repoData(t, "nations") }

// cancelAt cancels its context once the run reports step n of epoch e.
type cancelAt struct {
	nopObserver
	epoch, step, at int
	cancel          context.CancelFunc
}

func (c *cancelAt) EpochStart(e, _ int) { c.epoch = e }
func (c *cancelAt) Step(i int, _ float64) {
	if c.epoch == c.at && i == c.step {
		c.cancel()
	}
}

// TestShardedRunStopsAndResumesWithAnotherCount: a run over 2 processes,
// one of which alone is told to stop inside epoch 2, stops everywhere at
// the same step and saves one state (process 0's SaveState; the others
// build it too); resumed over 3 processes, and over 1 with no sharding,
// it ends as the uninterrupted one-process run does (float64, 1e-9).
func TestShardedRunStopsAndResumesWithAnotherCount(t *testing.T) {
	ds := tinyShardData(t)
	cfg := shardConfig("complex2", objectives.PLL{Weights: objectives.Uniform})
	cfg.Dtype = tensor.Float64
	want, err := Run(context.Background(), cfg, ds, nil)
	if err != nil {
		t.Fatal(err)
	}
	var saved *State
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for p, comm := range dist.Local(2) {
		wg.Go(func() {
			c := cfg
			c.Shard = comm
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var obs Observer
			if p == 1 {
				obs = &cancelAt{at: 2, step: 37, cancel: cancel}
			}
			if p == 0 {
				c.SaveState = func(s *State) error {
					w, err := s.Whole() // the others gather with it
					saved = cloneState(w)
					return err
				}
			}
			_, errs[p] = Run(ctx, c, ds, obs)
		})
	}
	wg.Wait()
	for p, err := range errs {
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("process %d: %v, want it stopped", p, err)
		}
	}
	if saved == nil || saved.Epoch != 1 || saved.Batch != 37 {
		t.Fatalf("saved %+v, want the state after step 37 of epoch 2", saved)
	}
	for _, np := range []int{3, 1} {
		results := make([]*Result, np)
		errs := make([]error, np)
		for p, comm := range dist.Local(np) {
			wg.Go(func() {
				c := cfg
				c.Resume = saved
				if np > 1 {
					c.Shard = comm
				}
				results[p], errs[p] = Run(context.Background(), c, ds, nil)
			})
		}
		wg.Wait()
		for p, res := range results {
			if errs[p] != nil {
				t.Fatalf("resumed on %d: process %d: %v", np, p, errs[p])
			}
			compareResults(t, fmt.Sprintf("resumed on %d, process %d", np, p), res, want, tolerance{1e-9, 1e-9})
		}
	}
}

// cloneState copies what SaveState is handed (its tensors alias the run's).
func cloneState(s *State) *State {
	c := *s
	clone := func(m map[string]*tensor.Dense) map[string]*tensor.Dense {
		if m == nil {
			return nil
		}
		out := map[string]*tensor.Dense{}
		for k, v := range m {
			out[k] = v.Clone().(*tensor.Dense)
		}
		return out
	}
	c.Params, c.BestParams, c.BestLLParams = clone(s.Params), clone(s.BestParams), clone(s.BestLLParams)
	c.Slots = map[string]map[string]*tensor.Dense{}
	for k, v := range s.Slots {
		c.Slots[k] = clone(v)
	}
	c.Epochs = slices.Clone(s.Epochs)
	return &c
}

// TestShardedMemoryEstimate: split over p processes, a run's estimate per
// process divides the entity tables' parameters, best parameters,
// gradient and optimiser state by p; the relations' stay whole.
func TestShardedMemoryEstimate(t *testing.T) {
	cfg := shardConfig("complex2", objectives.PLL{Weights: objectives.Uniform})
	sz := DataSizes{Entities: 100000, Relations: 50, Train: 1000, Valid: 100, Test: 100}
	one, err := EstimateMemory(cfg, sz)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Processes = 4
	four, err := EstimateMemory(cfg, sz)
	if err != nil {
		t.Fatal(err)
	}
	// complex2: one entity table of 100,000 rows and a relation table of
	// 50 rows, both 2·rank columns.
	share := 100000.0 / 100050
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"parameters", float64(four.Parameters), float64(one.Parameters) * (1 - share*3/4)},
		{"gradients", float64(four.Gradients), float64(one.Gradients) * (1 - share*3/4)},
		{"optimiser", float64(four.Optimizer), float64(one.Optimizer) * (1 - share*3/4)},
		{"best", float64(four.Best), float64(one.Best) * (1 - share*3/4)},
		{"data", float64(four.Data), float64(one.Data)},
	} {
		if math.Abs(c.got-c.want) > 1e-6*c.want+8 {
			t.Errorf("%s: %.0f bytes per process of 4, want %.0f (one process: see %+v)", c.name, c.got, c.want, one)
		}
	}
	if four.Total() >= one.Total() {
		t.Errorf("4 processes hold %d bytes each, one holds %d", four.Total(), one.Total())
	}
}

// Every process of a sharded run decides on process 0's validation
// metrics, NaN and infinities included.
func TestShardedRunSharesValidationMetrics(t *testing.T) {
	comms := dist.Local(2)
	got := make([]map[string]float64, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for p, comm := range comms {
		wg.Go(func() {
			r := &run{cfg: Config{Shard: comm}, shard: &dist.Stepper{}}
			got[p], errs[p] = r.shared(map[string]float64{"mrr": float64(p), "ll": math.NaN(), "x": math.Inf(-1)})
		})
	}
	wg.Wait()
	for p := range got {
		if errs[p] != nil {
			t.Fatal(errs[p])
		}
		if got[p]["mrr"] != 0 || !math.IsNaN(got[p]["ll"]) || !math.IsInf(got[p]["x"], -1) {
			t.Errorf("process %d decides on %v, want process 0's", p, got[p])
		}
	}
}
