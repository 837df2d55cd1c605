package grid

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"

	"gekc/internal/bytesize"
)

// Validator rejects a run that cannot be trained, e.g. an energy-based
// model with the MLE objective (it has no tractable partition function).
// ParseGrid calls it on every expanded run, so a sweep fails before it
// starts rather than hours in.
type Validator func(RunSpec) error

// Chain runs validators in order and returns the first error; nil ones
// are skipped. The runner chains DefaultValidator with what only the
// models registry knows (runspec.Validate).
func Chain(vs ...Validator) Validator {
	return func(s RunSpec) error {
		for _, v := range vs {
			if v == nil {
				continue
			}
			if err := v(s); err != nil {
				return err
			}
		}
		return nil
	}
}

// Known values checked by DefaultValidator. Model names are not among them:
// the models registry is their only authority (runspec.Validate), so a score
// function a researcher registers is a valid grid value with no change here.
var (
	objectiveNames  = []string{"pll", "mle"}
	constraintKinds = []string{"none", "domain"}
	// Optimizers are the names train.Optimizer accepts (a sweep test
	// keeps the two lists equal; grid imports no training package).
	Optimizers    = []string{"adam", "adagrad", "sgd"}
	dtypes        = []string{"float32", "float64"}
	tiePolicies   = []string{"pessimistic", "realistic", "optimistic"}
	evalMetrics   = []string{"mrr", "hits", "ll", "ece", "sem", "sem_unfiltered", "relation", "ktd"}
	selectMetrics = []string{"mrr", "ll"}
	datasetNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+-]*$`)
)

// DefaultValidator checks what needs no model code: names from the known
// sets, positive sizes, finite numbers and consistent evaluation settings.
// It reports every problem of a run at once.
func DefaultValidator(s RunSpec) error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	oneOf := func(key, v string, allowed []string) {
		if !slices.Contains(allowed, v) {
			bad("%s %q: want one of %s", key, v, strings.Join(allowed, ", "))
		}
	}

	if s.Dataset == "" {
		bad("dataset: not set")
	} else if !datasetNameRE.MatchString(s.Dataset) {
		bad("dataset %q: want a directory name under the data root (letters, digits, . _ + -)", s.Dataset)
	}
	family, _ := splitModel(s.Model)
	if s.Model == "" {
		bad("model: not set")
	}
	if s.Rank <= 0 {
		bad("rank %d: want a positive embedding size", s.Rank)
	}
	if s.Processes < 0 {
		bad("processes %d: want how many processes train the run (0 or 1: one)", s.Processes)
	}
	if s.RelationRank < 0 {
		bad("relation_rank %d: want 0 (same as rank) or a positive size", s.RelationRank)
	} else if s.RelationRank > 0 && family != "tucker" {
		bad("relation_rank %d: only TuckER models have a separate relation rank", s.RelationRank)
	}
	oneOf("objective", s.Objective, objectiveNames)
	oneOf("constraints", s.Constraints, constraintKinds)
	w := s.PLLWeights
	for _, x := range []struct {
		name string
		v    float64
	}{{"subject", w.Subject}, {"object", w.Object}, {"relation", w.Relation}} {
		if !(x.v >= 0) || math.IsInf(x.v, 0) {
			bad("pll_weights.%s %v: want a finite non-negative weight", x.name, x.v)
		}
	}
	if s.Objective == "pll" && w.Subject == 0 && w.Object == 0 && w.Relation == 0 {
		bad("pll_weights: all zero, so the PLL objective is constant")
	}
	for _, x := range []struct {
		name string
		v    float64
	}{{"n3", s.N3}, {"f2", s.F2}} {
		if !(x.v >= 0) || math.IsInf(x.v, 0) {
			bad("%s %v: want 0 (none) or a finite positive weight", x.name, x.v)
		}
	}
	oneOf("optimizer", s.Optimizer, Optimizers)
	if !(s.Momentum >= 0 && s.Momentum < 1) {
		bad("momentum %v: want a value in [0, 1)", s.Momentum)
	} else if s.Momentum != 0 && s.Optimizer != "sgd" {
		bad("momentum %v is SGD's; optimizer is %q", s.Momentum, s.Optimizer)
	}
	if !(s.InitialAccumulator >= 0) || math.IsInf(s.InitialAccumulator, 0) {
		bad("initial_accumulator %v: want a finite value >= 0", s.InitialAccumulator)
	} else if s.InitialAccumulator != 0 && s.Optimizer != "adagrad" {
		bad("initial_accumulator %v is Adagrad's; optimizer is %q", s.InitialAccumulator, s.Optimizer)
	}
	if !(s.LearningRate > 0) || math.IsInf(s.LearningRate, 0) {
		bad("learning_rate %v: want a finite positive rate", s.LearningRate)
	}
	if s.BatchSize <= 0 {
		bad("batch_size %d: want a positive size", s.BatchSize)
	}
	if s.Epochs <= 0 {
		bad("epochs %d: want a positive maximum", s.Epochs)
	}
	if s.Patience < 0 {
		bad("patience %d: want 0 (no early stopping) or more", s.Patience)
	}
	if !(s.InitScale >= 0) || math.IsInf(s.InitScale, 0) {
		bad("init_scale %v: want 0 (model default) or a finite positive scale", s.InitScale)
	}
	oneOf("dtype", s.DType, dtypes)
	if s.Samples < 0 {
		bad("samples %d: want 0 (none) or more", s.Samples)
	}
	switch s.SampleFrom {
	case "", "select":
	case "ll":
		if !slices.Contains(s.Eval.Metrics, "ll") {
			bad("sample_from \"ll\": eval.metrics has no \"ll\", and the validation log-likelihood picks the parameters")
		}
	default:
		bad("sample_from %q: want \"select\" (the selected model) or \"ll\" (the parameters of the best validation log-likelihood)", s.SampleFrom)
	}
	if s.Memory != "" {
		var b bytesize.Size
		if err := b.Set(s.Memory); err != nil {
			bad("memory: %v", err)
		}
	}
	if s.Eval.TestOn != "" && !datasetNameRE.MatchString(s.Eval.TestOn) {
		bad("eval.test_on %q: want a directory name under the data root (letters, digits, . _ + -)", s.Eval.TestOn)
	}
	errs = append(errs, validateEval(s.Eval)...)
	return joinInline(errs)
}

// joinInline joins errors on one line, so that a grid error stays one line
// per run; each stays a cause of its own (Unwrap), which ParseGrid
// reports at its key's line.
func joinInline(errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	return inlineErrors(errs)
}

type inlineErrors []error

func (e inlineErrors) Error() string {
	msgs := make([]string, len(e))
	for i, err := range e {
		msgs[i] = err.Error()
	}
	return strings.Join(msgs, "; ")
}

func (e inlineErrors) Unwrap() []error { return e }

func validateEval(e EvalSpec) []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if !slices.Contains(tiePolicies, e.TiePolicy) {
		bad("eval.tie_policy %q: want one of %s", e.TiePolicy, strings.Join(tiePolicies, ", "))
	}
	for _, m := range e.Metrics {
		if !slices.Contains(evalMetrics, m) {
			bad("eval.metrics: unknown metric %q; want some of %s", m, strings.Join(evalMetrics, ", "))
		}
	}
	if len(e.Metrics) == 0 {
		bad("eval.metrics: empty; at least the selection metric %q is needed", e.Select)
	}
	if slices.Contains(e.Metrics, "hits") && len(e.Hits) == 0 {
		bad("eval.hits: empty while eval.metrics asks for hits")
	}
	for _, k := range e.Hits {
		if k < 1 {
			bad("eval.hits: k = %d; want k >= 1", k)
		}
	}
	if (slices.Contains(e.Metrics, "sem") || slices.Contains(e.Metrics, "sem_unfiltered")) && len(e.SemK) == 0 {
		bad("eval.sem_k: empty while eval.metrics asks for sem")
	}
	for _, k := range e.SemK {
		if k < 1 {
			bad("eval.sem_k: k = %d; want k >= 1", k)
		}
	}
	if !slices.Contains(selectMetrics, e.Select) {
		bad("eval.select %q: want one of %s", e.Select, strings.Join(selectMetrics, ", "))
	} else if !slices.Contains(e.Metrics, e.Select) {
		bad("eval.select %q is not among eval.metrics %v", e.Select, e.Metrics)
	}
	switch e.Stop {
	case "select":
	case "select_and_ll":
		if !slices.Contains(e.Metrics, "ll") {
			bad("eval.stop %q needs \"ll\" among eval.metrics %v", e.Stop, e.Metrics)
		}
	default:
		bad("eval.stop %q: want \"select\" or \"select_and_ll\"", e.Stop)
	}
	if e.MinDelta < 0 || math.IsNaN(e.MinDelta) {
		bad("eval.min_delta %v: want a rise >= 0", e.MinDelta)
	}
	if e.LLMinDelta < 0 || math.IsNaN(e.LLMinDelta) {
		bad("eval.ll_min_delta %v: want a rise >= 0", e.LLMinDelta)
	}
	if e.Negatives < 0 || e.Negatives > 16383 {
		bad("eval.negatives %d: want 0 (rank against every entity) or a number of sampled negatives per side up to 16383", e.Negatives)
	}
	if e.BatchSize <= 0 {
		bad("eval.batch_size %d: want a positive size", e.BatchSize)
	}
	if e.Every < 1 {
		bad("eval.every %d: want validation every n >= 1 epochs", e.Every)
	}
	if e.MaxValid < 0 {
		bad("eval.max_valid %d: want 0 (all) or a positive subset size", e.MaxValid)
	}
	return errs
}

// splitModel splits "complex2" into ("complex", "2") and "cp+" into ("cp", "+").
func splitModel(model string) (family, semantics string) {
	for _, suffix := range []string{"+", "2"} {
		if f, ok := strings.CutSuffix(model, suffix); ok {
			return f, suffix
		}
	}
	return model, ""
}
