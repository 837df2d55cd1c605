package sweep

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"gekc/grid"
	"gekc/resultsdir"
	"gekc/train"
	"gekc/train/ckpt"
)

// A state may pass only to a run that would not have stopped before it:
// the same spec but for a patience and an epoch bound at least as large
// (patience 0, none, the largest) and the keys that change no run.
func TestStopsOnlyLater(t *testing.T) {
	base := grid.DefaultRunSpec()
	base.Dataset, base.Model, base.Objective, base.Rank = "nations", "cp2", "pll", 5
	base.LearningRate, base.BatchSize, base.Epochs, base.Patience = 0.01, 300, 10, 3
	for _, c := range []struct {
		name string
		edit func(*grid.RunSpec)
		want string // "" for allowed, else part of the error
	}{
		{"same", func(*grid.RunSpec) {}, ""},
		{"larger patience and epochs", func(s *grid.RunSpec) { s.Patience, s.Epochs = 12, 40 }, ""},
		{"no early stopping", func(s *grid.RunSpec) { s.Patience = 0 }, ""},
		{"ignored keys", func(s *grid.RunSpec) { s.Samples, s.Eval.BatchSize = 1000, 50 }, ""},
		{"smaller patience", func(s *grid.RunSpec) { s.Patience = 2 }, "patience = 2 stops sooner than its 3"},
		{"fewer epochs", func(s *grid.RunSpec) { s.Epochs = 9 }, "epochs = 9 is below its 10"},
		{"learning rate", func(s *grid.RunSpec) { s.LearningRate = 0.02 }, "learning_rate (0.02, not 0.01)"},
		{"stopping rule", func(s *grid.RunSpec) { s.Eval.MinDelta = 1e-3 }, "eval.min_delta"},
		{"seed and metrics", func(s *grid.RunSpec) { s.Seed, s.Eval.Metrics = 1, []string{"mrr"} }, "seed (1, not 0), eval.metrics ([mrr], not [mrr hits ll])"},
	} {
		to := base.Clone()
		c.edit(&to)
		err := stopsOnlyLater(base, to)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v, want allowed", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want an error with %q", c.name, err, c.want)
		}
	}
	none := base.Clone()
	none.Patience = 0
	if err := stopsOnlyLater(none, base); err == nil || !strings.Contains(err.Error(), "0 is none") {
		t.Errorf("patience 3 adopting from a run without early stopping: %v, want refused", err)
	}
}

// countEpochs is an Observer that counts the epochs that end.
type countEpochs struct {
	train.Observer
	n *int
}

func (c countEpochs) EpochEnd(rec train.EpochRecord) {
	c.Observer.EpochEnd(rec)
	*c.n++
}

// Real training on Nations. A run of patience 10 and 7 epochs that adopts
// the state a run of patience 2 and 4 epochs saved after epoch 2 (what is
// done to continue a run that stopped too early) trains on to the record
// it would have had from scratch, and says whose state it continued. A run
// that differs in anything else and a finished run are refused, leaving
// nothing in the run. (-only selecting more than one run is the command's
// refusal.)
func TestRunAdoptsTheStateOfARunThatStopsSooner(t *testing.T) {
	src := `name = "adopt"
[defaults]
dataset = "nations"
model = "cp2"
objective = "pll"
rank = 5
batch_size = 300
learning_rate = 0.01
eval = { metrics = ["mrr", "hits", "ll"] }

[[sweep]]
patience = 2
epochs = 4

[[sweep]]
patience = 10
epochs = 7

[[sweep]]
patience = 10
epochs = 7
learning_rate = 0.02
`
	whole := newNationsSweep(t, src)
	runs := whole.g.Runs
	if tally, stderr := whole.train(t, context.Background(), Train, 0, runs[1]); tally != (Tally{Finished: 1}) {
		t.Fatalf("run 1 from scratch: %+v: %s", tally, stderr)
	}
	ids := whole.ids()

	ts := newNationsSweep(t, src)
	ctx, stopAfter2 := stoppedAfterEpoch(t, 2)
	if tally, stderr := ts.train(t, ctx, stopAfter2, 0, runs[0]); tally != (Tally{Interrupted: 1}) {
		t.Fatalf("run 0 stopped after epoch 2: %+v: %s", tally, stderr)
	}
	state := filepath.Join(ts.out, resultsdir.RunsDirName, ids[0], ckpt.StateName)

	if _, err := AdoptState(ts.out, runs, runs[2], state); err == nil || !strings.Contains(err.Error(), "learning_rate (0.02, not 0.01)") {
		t.Errorf("run 2 adopting run 0's state: %v, want refused for its learning rate", err)
	}
	if fileExists(filepath.Join(ts.out, resultsdir.RunsDirName, ids[2], ckpt.StateName)) || fileExists(filepath.Join(ts.out, resultsdir.RunsDirName, ids[2], resultsdir.MetricsName)) {
		t.Errorf("a refused adoption left a state or a record in run 2")
	}

	note, err := AdoptState(ts.out, runs, runs[1], state)
	if err != nil || !strings.Contains(note, "continued the resume state of run "+ids[0]+" after epoch 2") {
		t.Fatalf("run 1 adopting run 0's state: %v, note %q; want a note naming run 0", err, note)
	}
	trained := 0 // epochs trained now: the adopted run's 3 to 7
	counting := func(ctx context.Context, job Job) (*Outcome, error) {
		job.Observer = countEpochs{Observer: job.Observer, n: &trained}
		return Train(ctx, job)
	}
	if tally, stderr := ts.train(t, context.Background(), counting, 0, runs[1]); tally != (Tally{Finished: 1}) {
		t.Fatalf("run 1 on run 0's state: %+v: %s", tally, stderr)
	}
	if trained != 5 {
		t.Errorf("the adopting run trained %d epochs, want 5: epochs 1 and 2 are the state's", trained)
	}
	got := assertSameTraining(t, ts.out, whole.out, ids[1])
	if notes := strings.Join(got.Notes, "\n"); !strings.Contains(notes, "differ only in patience (10, not 2) and epochs (7, not 4)") {
		t.Errorf("notes %q do not say which run was continued and how the two differ", got.Notes)
	}
	if _, err := AdoptState(ts.out, runs, runs[1], state); err == nil || !strings.Contains(err.Error(), "finished already") {
		t.Errorf("adopting into a finished run: %v, want refused", err)
	}
}
