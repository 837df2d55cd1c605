package sweep

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"gekc/grid"
	"gekc/runspec"
)

// eval.test_on reaches the training run: testing on a data set with the
// same names and triples as the run's own gives its own test metrics, and
// the record says what was tested on.
func TestTrainTestsOnAnotherDataSet(t *testing.T) {
	data := shippedData(t, "nations")
	spec := grid.DefaultRunSpec()
	spec.Dataset, spec.Model, spec.Objective = "nations", "complex2", "pll"
	spec.Rank, spec.BatchSize, spec.LearningRate, spec.Epochs = 4, 300, 0.01, 2
	run := func(spec grid.RunSpec) *Outcome {
		t.Helper()
		out, err := Train(context.Background(), Job{ID: spec.ID(), Spec: spec, DataRoot: data, RunDir: t.TempDir(),
			Observer: nopObserver{}, StateEvery: -1})
		must(t, err)
		return out
	}
	own := run(spec)
	spec.Eval.TestOn = "nations"
	other := run(spec)
	delete(own.Test, "step_ms") // a timing
	delete(other.Test, "step_ms")
	if !reflect.DeepEqual(own.Test, other.Test) {
		t.Errorf("tested on nations by name: %v\nwant %v", other.Test, own.Test)
	}
	if !strings.Contains(strings.Join(other.Notes, "\n"), "tested on nations's test split (201 triples)") {
		t.Errorf("notes %q do not say what was tested on", other.Notes)
	}
	spec.Eval.TestOn = "no-such-data-set"
	if _, err := Train(context.Background(), Job{ID: spec.ID(), Spec: spec, DataRoot: data, RunDir: t.TempDir(),
		Observer: nopObserver{}, StateEvery: -1}); err == nil || !strings.Contains(err.Error(), "eval.test_on") {
		t.Errorf("a missing test_on data set: %v", err)
	}
}

// Preflight refuses a test_on data set that shares no test triple's names
// with the training data (UMLS and Nations name different things), naming
// the grid line.
func TestPreflightChecksTestOn(t *testing.T) {
	data := shippedData(t, "umls")
	src := `[defaults]
dataset = "nations"
model = "complex2"
objective = "pll"
rank = 4
batch_size = 100
learning_rate = 0.01
epochs = 1
eval = { test_on = "umls" }
`
	g, err := grid.ParseGrid("t.toml", []byte(src), runspec.Validate)
	must(t, err)
	_, err = runspec.PreflightRuns(g, data, t.TempDir(), g.Runs)
	if err == nil || !strings.Contains(err.Error(), `t.toml:1: [defaults]: run `) ||
		!strings.Contains(err.Error(), `eval.test_on = "umls": none of its 661 test triples names only entities and relations of nations`) {
		t.Errorf("preflight: %v", err)
	}
}
