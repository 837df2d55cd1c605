package runspec

import (
	"reflect"
	"strings"
	"testing"

	"gekc/grid"
	"gekc/metrics"
	"gekc/objectives"
	"gekc/train"

	"gorgonia.org/tensor"
)

// A grid run's every key reaches the training configuration.
func TestTrainConfigCarriesEveryKey(t *testing.T) {
	spec := grid.DefaultRunSpec()
	spec.Dataset, spec.Model, spec.Rank, spec.RelationRank = "d", "tucker2", 6, 3
	spec.Objective, spec.PLLWeights = "pll", grid.PLLWeights{Subject: 0.5, Relation: 2, Object: 1.5}
	spec.LearningRate, spec.BatchSize, spec.Epochs, spec.Patience, spec.Seed = 0.03, 77, 9, 4, 11
	spec.InitScale, spec.DType, spec.Constraints = 0.2, "float64", "domain"
	spec.Optimizer, spec.Momentum, spec.InitialAccumulator = "sgd", 0.5, 0.25
	spec.Eval = grid.EvalSpec{TiePolicy: "optimistic", Hits: []int{2, 7}, BatchSize: 13, Metrics: []string{"mrr", "ece", "sem"},
		Select: "mrr", Stop: "select_and_ll", MinDelta: 2e-4, LLMinDelta: 0.02, Every: 3, MaxValid: 50, SemK: []int{1, 4}, Negatives: 17}
	spec.Processes, spec.Samples, spec.SampleFrom = 5, 3, "ll"
	cfg, err := TrainConfig(spec)
	must(t, err)
	want := objectives.PLL{Weights: objectives.Weights{Subject: 0.5, Relation: 2, Object: 1.5}}
	if cfg.Objective != want {
		t.Errorf("objective %#v, want %#v", cfg.Objective, want)
	}
	for _, c := range []struct {
		key       string
		got, want any
	}{
		{"model", cfg.Model, "tucker2"}, {"rank", cfg.Rank, 6}, {"relation_rank", cfg.RelationRank, 3},
		{"learning_rate", cfg.LearningRate, 0.03}, {"batch_size", cfg.BatchSize, 77}, {"epochs", cfg.Epochs, 9},
		{"patience", cfg.Patience, 4}, {"seed", cfg.Seed, uint64(11)}, {"init_scale", cfg.InitScale, 0.2},
		{"dtype", cfg.Dtype, tensor.Float64}, {"constraints", cfg.Constrained, true},
		{"optimizer, momentum, initial_accumulator", cfg.Optimizer, train.Optimizer{Name: "sgd", Momentum: 0.5, InitialAccumulator: 0.25}},
		{"eval.tie_policy", cfg.Eval.TiePolicy, metrics.Optimistic}, {"eval.hits", len(cfg.Eval.Hits) == 2 && cfg.Eval.Hits[1] == 7, true},
		{"eval.batch_size", cfg.Eval.BatchSize, 13}, {"eval.select", cfg.Eval.Select, "mrr"}, {"eval.every", cfg.Eval.Every, 3},
		{"eval.max_valid", cfg.Eval.MaxValid, 50}, {"eval.metrics ll", cfg.Eval.LogLikelihood, false},
		{"eval.stop", cfg.Eval.StopOnLL, true}, {"eval.min_delta", cfg.Eval.MinDelta, 2e-4}, {"eval.ll_min_delta", cfg.Eval.LLMinDelta, 0.02},
		{"eval.negatives", cfg.Eval.Negatives, 17}, {"processes", cfg.Processes, 5}, {"sample_from ll", cfg.KeepBestLL, true},
		{"eval.metrics sem_unfiltered", cfg.Eval.SemUnfilteredK == nil, true}, {"eval.metrics relation", cfg.Eval.Relations, false},
		{"eval.metrics ece", cfg.Eval.ECE, true}, {"eval.sem_k", len(cfg.Eval.SemK) == 2 && cfg.Eval.SemK[1] == 4, true},
	} {
		if c.got != c.want {
			t.Errorf("%s: %v, want %v", c.key, c.got, c.want)
		}
	}
	spec.DType, spec.Constraints, spec.Objective = "float32", "none", "mle"
	spec.Eval.Metrics, spec.Eval.TiePolicy, spec.Eval.Stop = []string{"mrr", "ll"}, "realistic", "select"
	cfg, err = TrainConfig(spec)
	must(t, err)
	if cfg.Dtype != tensor.Float32 || cfg.Constrained || cfg.Objective != (objectives.MLE{}) || !cfg.Eval.LogLikelihood ||
		cfg.Eval.ECE || cfg.Eval.SemK != nil || cfg.Eval.TiePolicy != metrics.Realistic || cfg.Eval.StopOnLL {
		t.Errorf("second spec: %+v", cfg)
	}
	spec.N3, spec.F2 = 0.05, 0.001
	cfg, err = TrainConfig(spec)
	must(t, err)
	if want := (objectives.Regularized{Objective: objectives.MLE{}, N3: 0.05, F2: 0.001}); cfg.Objective != want {
		t.Errorf("n3, f2: objective %#v, want %#v", cfg.Objective, want)
	}
}

// outsideTrainConfig are the grid keys the runner consumes itself rather
// than through train.Config, each with where it is read; every other key
// must change the configuration when its value changes.
var outsideTrainConfig = map[string]string{
	"dataset":      "loadDataset in runSpec",
	"samples":      "the sampling after training (sweep/run.go)",
	"distill_from": "distillSource (sweep/distill.go)",
	"memory":       "MemoryBudget (runspec/memory.go)",
	"eval.test_on": "runSpec's second loadDataset into cfg.Eval.TestOn",
}

// Every leaf key of grid.RunSpec, changed alone from a spec in which it
// matters, changes TrainConfig's result, or is listed in
// outsideTrainConfig. A key added to the grid and forgotten in TrainConfig
// fails here without anyone writing its case.
func TestTrainConfigKeysAreComplete(t *testing.T) {
	base := grid.DefaultRunSpec()
	base.Dataset, base.Model, base.Rank, base.Objective = "d", "tucker2", 6, "pll"
	base.LearningRate, base.BatchSize, base.Epochs = 0.01, 10, 2
	base.Samples, base.SampleFrom = 4, "ll"
	base.Eval.Metrics = []string{"mrr", "ll", "sem", "sem_unfiltered"}
	alternative := map[string]string{ // a second valid value for each string key
		"model": "cp2", "objective": "mle", "constraints": "domain", "optimizer": "sgd", "dtype": "float64",
		"sample_from": "select", "eval.tie_policy": "optimistic", "eval.select": "ll", "eval.stop": "select_and_ll",
		"dataset": "e", "distill_from": "run", "memory": "1GiB", "eval.test_on": "f",
	}
	baseCfg, err := TrainConfig(base)
	must(t, err)
	for _, key := range leafKeys(reflect.TypeOf(base), "") {
		spec := base.Clone()
		field := fieldByKey(reflect.ValueOf(&spec).Elem(), key)
		switch field.Kind() {
		case reflect.Int:
			field.SetInt(field.Int() + 3)
		case reflect.Float64:
			field.SetFloat(field.Float() + 0.125)
		case reflect.String:
			alt, ok := alternative[key]
			if !ok {
				t.Errorf("key %s: no second value in this test's table", key)
				continue
			}
			field.SetString(alt)
		case reflect.Slice:
			switch field.Type().Elem().Kind() {
			case reflect.Int:
				field.Set(reflect.Append(field, reflect.ValueOf(50)))
			default:
				field.Set(reflect.Append(field, reflect.ValueOf("relation")))
			}
		default:
			t.Fatalf("key %s: kind %s not handled by this test", key, field.Kind())
		}
		cfg, err := TrainConfig(spec)
		if err != nil {
			t.Errorf("key %s: %v", key, err)
			continue
		}
		_, outside := outsideTrainConfig[key]
		if changed := !reflect.DeepEqual(cfg, baseCfg); changed == outside {
			t.Errorf("key %s: changing it changes the training configuration: %v; listed as read outside it: %v", key, changed, outside)
		}
	}
}

// leafKeys lists the TOML keys of a struct's leaves, dotted below nested
// structs that are tables (eval), flattened for inline ones (pll_weights).
func leafKeys(t reflect.Type, prefix string) []string {
	var keys []string
	for i := range t.NumField() {
		f := t.Field(i)
		name := prefix + f.Tag.Get("toml")
		if f.Type.Kind() == reflect.Struct {
			keys = append(keys, leafKeys(f.Type, name+".")...)
			continue
		}
		keys = append(keys, name)
	}
	return keys
}

// fieldByKey is the field leafKeys named key.
func fieldByKey(v reflect.Value, key string) reflect.Value {
	head, rest, nested := strings.Cut(key, ".")
	for i := range v.NumField() {
		if v.Type().Field(i).Tag.Get("toml") == head {
			if nested {
				return fieldByKey(v.Field(i), rest)
			}
			return v.Field(i)
		}
	}
	panic("no field " + key)
}

// The best-LL parameters are kept beside the selected ones only when
// samples come from them and selection is not already by LL.
func TestKeepBestLL(t *testing.T) {
	for _, tt := range []struct {
		sampleFrom, select_ string
		want                bool
	}{{"ll", "mrr", true}, {"ll", "ll", false}, {"select", "mrr", false}, {"", "mrr", false}, {"select", "ll", false}} {
		spec := grid.DefaultRunSpec()
		spec.Objective, spec.SampleFrom, spec.Eval.Select = "mle", tt.sampleFrom, tt.select_
		cfg, err := TrainConfig(spec)
		must(t, err)
		if cfg.KeepBestLL != tt.want {
			t.Errorf("sample_from %q, eval.select %q: KeepBestLL %v, want %v", tt.sampleFrom, tt.select_, cfg.KeepBestLL, tt.want)
		}
	}
}
