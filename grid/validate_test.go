package grid

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func TestDefaultValidator(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*RunSpec)
		want   string // substring of the error; "" = valid
	}{
		{"valid", func(*RunSpec) {}, ""},
		{"every model family and semantics", func(s *RunSpec) { s.Model = "tucker+" }, ""},
		{"tucker with relation rank", func(s *RunSpec) { s.Model, s.RelationRank = "tucker2", 20 }, ""},
		{"missing dataset", func(s *RunSpec) { s.Dataset = "" }, "dataset: not set"},
		{"dataset with a path", func(s *RunSpec) { s.Dataset = "../etc" }, "directory name"},
		{"missing model", func(s *RunSpec) { s.Model = "" }, "model: not set"},
		{"zero rank", func(s *RunSpec) { s.Rank = 0 }, "rank 0"},
		{"relation rank outside TuckER", func(s *RunSpec) { s.RelationRank = 10 }, "only TuckER"},
		{"negative relation rank", func(s *RunSpec) { s.Model, s.RelationRank = "tucker", -1 }, "relation_rank -1"},
		{"unknown objective", func(s *RunSpec) { s.Objective = "nce" }, `objective "nce"`},
		{"unknown constraints", func(s *RunSpec) { s.Constraints = "range" }, `constraints "range"`},
		{"negative PLL weight", func(s *RunSpec) { s.PLLWeights.Object = -1 }, "pll_weights.object"},
		{"all-zero PLL weights", func(s *RunSpec) { s.PLLWeights = PLLWeights{} }, "all zero"},
		{"all-zero PLL weights are fine for MLE", func(s *RunSpec) { s.PLLWeights, s.Objective = PLLWeights{}, "mle" }, ""},
		{"unknown optimizer", func(s *RunSpec) { s.Optimizer = "lbfgs" }, `optimizer "lbfgs"`},
		{"adagrad", func(s *RunSpec) { s.Optimizer, s.InitialAccumulator = "adagrad", 0.1 }, ""},
		{"sgd with momentum", func(s *RunSpec) { s.Optimizer, s.Momentum = "sgd", 0.9 }, ""},
		{"n3 and f2", func(s *RunSpec) { s.N3, s.F2 = 0.05, 1e-3 }, ""},
		{"negative n3", func(s *RunSpec) { s.N3 = -0.1 }, "n3 -0.1: want 0 (none) or a finite positive weight"},
		{"infinite f2", func(s *RunSpec) { s.F2 = math.Inf(1) }, "f2 +Inf: want 0 (none) or a finite positive weight"},
		{"momentum outside sgd", func(s *RunSpec) { s.Momentum = 0.9 }, `momentum 0.9 is SGD's; optimizer is "adam"`},
		{"momentum of 1", func(s *RunSpec) { s.Optimizer, s.Momentum = "sgd", 1 }, "momentum 1: want a value in [0, 1)"},
		{"initial accumulator outside adagrad", func(s *RunSpec) { s.Optimizer, s.InitialAccumulator = "sgd", 0.1 }, "initial_accumulator 0.1 is Adagrad's"},
		{"negative initial accumulator", func(s *RunSpec) { s.Optimizer, s.InitialAccumulator = "adagrad", -1 }, "initial_accumulator -1"},
		{"zero learning rate", func(s *RunSpec) { s.LearningRate = 0 }, "learning_rate 0"},
		{"zero batch", func(s *RunSpec) { s.BatchSize = 0 }, "batch_size 0"},
		{"zero epochs", func(s *RunSpec) { s.Epochs = 0 }, "epochs 0"},
		{"negative patience", func(s *RunSpec) { s.Patience = -1 }, "patience -1"},
		{"no early stopping", func(s *RunSpec) { s.Patience = 0 }, ""},
		{"negative init scale", func(s *RunSpec) { s.InitScale = -1 }, "init_scale"},
		{"unknown dtype", func(s *RunSpec) { s.DType = "float16" }, `dtype "float16"`},
		{"negative samples", func(s *RunSpec) { s.Samples = -1 }, "samples -1"},
		{"unknown tie policy", func(s *RunSpec) { s.Eval.TiePolicy = "random" }, "eval.tie_policy"},
		{"unknown metric", func(s *RunSpec) { s.Eval.Metrics = []string{"mrr", "auc"} }, `"auc"`},
		{"hits without k", func(s *RunSpec) { s.Eval.Hits = nil }, "eval.hits: empty"},
		{"hits at 0", func(s *RunSpec) { s.Eval.Hits = []int{0} }, "k = 0"},
		{"select outside metrics", func(s *RunSpec) { s.Eval.Metrics = []string{"mrr"}; s.Eval.Select = "ll" }, "not among eval.metrics"},
		{"unknown select", func(s *RunSpec) { s.Eval.Select = "hits@1" }, "eval.select"},
		{"the paper's stopping rule", func(s *RunSpec) { s.Eval.Stop, s.Eval.MinDelta, s.Eval.LLMinDelta = "select_and_ll", 2e-4, 0.02 }, ""},
		{"unknown stop", func(s *RunSpec) { s.Eval.Stop = "ll" }, `eval.stop "ll"`},
		{"stop on ll without ll", func(s *RunSpec) { s.Eval.Metrics, s.Eval.Stop = []string{"mrr"}, "select_and_ll" }, `needs "ll"`},
		{"negative min delta", func(s *RunSpec) { s.Eval.MinDelta = -1e-4 }, "eval.min_delta"},
		{"negative ll min delta", func(s *RunSpec) { s.Eval.LLMinDelta = -0.02 }, "eval.ll_min_delta"},
		{"zero eval batch", func(s *RunSpec) { s.Eval.BatchSize = 0 }, "eval.batch_size 0"},
		{"zero every", func(s *RunSpec) { s.Eval.Every = 0 }, "eval.every 0"},
		{"negative max_valid", func(s *RunSpec) { s.Eval.MaxValid = -1 }, "eval.max_valid"},
		{"sem without k", func(s *RunSpec) { s.Eval.Metrics, s.Eval.SemK = []string{"mrr", "sem"}, nil }, "eval.sem_k: empty"},
		{"sem at 0", func(s *RunSpec) { s.Eval.SemK = []int{0, 20} }, "eval.sem_k: k = 0"},
		{"negative processes", func(s *RunSpec) { s.Processes = -2 }, "processes -2"},
		// Each documented boundary from both sides.
		{"rank 1", func(s *RunSpec) { s.Rank = 1 }, ""},
		{"negative rank", func(s *RunSpec) { s.Rank = -1 }, "rank -1"},
		{"processes 0 and 1 mean one", func(s *RunSpec) { s.Processes = 1 }, ""},
		{"processes -1", func(s *RunSpec) { s.Processes = -1 }, "processes -1"},
		{"NaN PLL weight", func(s *RunSpec) { s.PLLWeights.Subject = math.NaN() }, "pll_weights.subject NaN"},
		{"infinite PLL weight", func(s *RunSpec) { s.PLLWeights.Relation = math.Inf(1) }, "pll_weights.relation +Inf"},
		{"one PLL weight is enough", func(s *RunSpec) { s.PLLWeights = PLLWeights{Relation: 0.5} }, ""},
		{"NaN n3", func(s *RunSpec) { s.N3 = math.NaN() }, "n3 NaN"},
		{"momentum just under 1", func(s *RunSpec) { s.Optimizer, s.Momentum = "sgd", 0.999 }, ""},
		{"negative momentum", func(s *RunSpec) { s.Optimizer, s.Momentum = "sgd", -0.1 }, "momentum -0.1: want a value in [0, 1)"},
		{"NaN momentum", func(s *RunSpec) { s.Optimizer, s.Momentum = "sgd", math.NaN() }, "momentum NaN"},
		{"infinite initial accumulator", func(s *RunSpec) { s.Optimizer, s.InitialAccumulator = "adagrad", math.Inf(1) }, "initial_accumulator +Inf"},
		{"NaN learning rate", func(s *RunSpec) { s.LearningRate = math.NaN() }, "learning_rate NaN"},
		{"infinite learning rate", func(s *RunSpec) { s.LearningRate = math.Inf(1) }, "learning_rate +Inf"},
		{"batch 1", func(s *RunSpec) { s.BatchSize = 1 }, ""},
		{"epochs 1", func(s *RunSpec) { s.Epochs = 1 }, ""},
		{"NaN init scale", func(s *RunSpec) { s.InitScale = math.NaN() }, "init_scale NaN"},
		{"infinite init scale", func(s *RunSpec) { s.InitScale = math.Inf(1) }, "init_scale +Inf"},
		{"samples from the selected model", func(s *RunSpec) { s.Samples, s.SampleFrom = 5, "select" }, ""},
		{"samples from the best LL", func(s *RunSpec) { s.Samples, s.SampleFrom = 5, "ll" }, ""},
		{"samples from the best LL without ll", func(s *RunSpec) { s.Eval.Metrics, s.SampleFrom = []string{"mrr"}, "ll" }, `sample_from "ll": eval.metrics has no "ll"`},
		{"unknown sample_from", func(s *RunSpec) { s.SampleFrom = "best" }, `sample_from "best"`},
		{"memory", func(s *RunSpec) { s.Memory = "5GiB" }, ""},
		{"no memory budget", func(s *RunSpec) { s.Memory = "0" }, ""},
		{"unreadable memory", func(s *RunSpec) { s.Memory = "five gigs" }, "memory: "},
		{"test_on", func(s *RunSpec) { s.Eval.TestOn = "fb15k-237" }, ""},
		{"test_on a path", func(s *RunSpec) { s.Eval.TestOn = "../umls" }, `eval.test_on "../umls"`},
		{"test_on an absolute path", func(s *RunSpec) { s.Eval.TestOn = "/data/umls" }, `eval.test_on "/data/umls"`},
		{"dataset with a slash", func(s *RunSpec) { s.Dataset = "a/b" }, "directory name"},
		{"dataset with every allowed character", func(s *RunSpec) { s.Dataset = "FB15k-237_v1.2+x" }, ""},
		{"no metrics", func(s *RunSpec) { s.Eval.Metrics = nil }, "eval.metrics: empty"},
		{"hits not asked, no k", func(s *RunSpec) { s.Eval.Metrics, s.Eval.Hits = []string{"mrr"}, nil }, ""},
		{"hits at 1", func(s *RunSpec) { s.Eval.Hits = []int{1} }, ""},
		{"sem_unfiltered without k", func(s *RunSpec) { s.Eval.Metrics, s.Eval.SemK = []string{"mrr", "sem_unfiltered"}, nil }, "eval.sem_k: empty"},
		{"no min delta", func(s *RunSpec) { s.Eval.MinDelta, s.Eval.LLMinDelta = 0, 0 }, ""},
		{"NaN min delta", func(s *RunSpec) { s.Eval.MinDelta = math.NaN() }, "eval.min_delta NaN"},
		{"NaN ll min delta", func(s *RunSpec) { s.Eval.LLMinDelta = math.NaN() }, "eval.ll_min_delta NaN"},
		{"the most negatives", func(s *RunSpec) { s.Eval.Negatives = 16383 }, ""},
		{"one negative too many", func(s *RunSpec) { s.Eval.Negatives = 16384 }, "eval.negatives 16384"},
		{"negative negatives", func(s *RunSpec) { s.Eval.Negatives = -1 }, "eval.negatives -1"},
		{"eval batch 1", func(s *RunSpec) { s.Eval.BatchSize = 1 }, ""},
		{"negative eval batch", func(s *RunSpec) { s.Eval.BatchSize = -5 }, "eval.batch_size -5"},
		{"every epoch", func(s *RunSpec) { s.Eval.Every = 1 }, ""},
		{"max_valid 0 means all", func(s *RunSpec) { s.Eval.MaxValid = 0 }, ""},
		{"several problems at once", func(s *RunSpec) { s.Rank, s.Epochs = 0, 0 }, "rank 0: want a positive embedding size; epochs 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := exampleSpec()
			tt.mutate(&s)
			err := DefaultValidator(s)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("unexpected error: %v", err)
			case tt.want != "" && err == nil:
				t.Errorf("no error, want %q", tt.want)
			case tt.want != "" && !strings.Contains(err.Error(), tt.want):
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
		})
	}
}

func TestChainValidators(t *testing.T) {
	calls := 0
	fail := func(RunSpec) error { calls++; return errors.New("second") }
	v := Chain(DefaultValidator, nil, fail, func(RunSpec) error { calls++; return nil })
	if err := v(exampleSpec()); err == nil || err.Error() != "second" || calls != 1 {
		t.Errorf("err %v after %d calls; want the second validator's error, stopping there", err, calls)
	}
	bad := exampleSpec()
	bad.Rank = 0
	if err := v(bad); err == nil || !strings.Contains(err.Error(), "rank") {
		t.Errorf("err %v; want DefaultValidator's", err)
	}
}
