package sweep

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"gekc/dist"
	"gekc/grid"
	"gekc/resultsdir"
	"gekc/runspec"
	"gekc/train"
	"gekc/train/ckpt"
)

// searchNations has 6 configurations of 2 seeds; rungs of 1, 3 and 9
// epochs keep 6, 2 and 1 of them.
const searchNations = `name = "halving"
[defaults]
dataset = "nations"
model = "cp2"
objective = "mle"
rank = 4
batch_size = [300, 1000]
learning_rate = [0.003, 0.03, 0.3]
seed = [0, 1]
patience = 2
%s`

const halvingSection = `
[search]
method = "halving"
min_epochs = 1
max_epochs = 9
eta = 3
metric = "ll"
`

func readSearchRecord(t *testing.T, out string) *SearchRecord {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(out, resultsdir.SearchJSONName))
	must(t, err)
	var rec SearchRecord
	must(t, json.Unmarshal(b, &rec))
	return &rec
}

// The search trains every configuration for the first rung, promotes the
// best third by the mean over seeds, continues the promoted runs from
// their states, and a run that reaches the last rung ends with the record
// of the same run trained to max_epochs without a search.
func TestHalvingSearch(t *testing.T) {
	search := newNationsSweep(t, strings.Replace(searchNations, "%s", halvingSection, 1))
	tally, stderr := search.train(t, context.Background(), Train, 0)
	if tally.Finished != 12+4+2 || tally.Failed+tally.Problems != 0 {
		t.Fatalf("tally %+v, want 18 runs trained (12, 4, 2 per rung)\n%s", tally, stderr)
	}
	rec := readSearchRecord(t, search.out)
	if len(rec.Rungs) != 3 {
		t.Fatalf("%d rungs decided, want 3", len(rec.Rungs))
	}
	for k, want := range []struct{ epochs, configs, promoted int }{{1, 6, 2}, {3, 2, 1}, {9, 1, 0}} {
		d := rec.Rungs[k]
		if d.Epochs != want.epochs || len(d.Configs) != want.configs || d.Promoted != want.promoted {
			t.Errorf("rung %d: %d epochs, %d configurations, %d promoted; want %+v", k, d.Epochs, len(d.Configs), d.Promoted, want)
		}
		for i := 1; i < len(d.Configs); i++ {
			if d.Configs[i].Score > d.Configs[i-1].Score {
				t.Errorf("rung %d: configurations not best first: %v after %v", k, d.Configs[i].Score, d.Configs[i-1].Score)
			}
		}
	}
	selected := rec.Rungs[2].Configs[0]
	if rec.Selected != selected.Config || rec.EpochsTrained != rec.Rungs[2].EpochsSoFar {
		t.Errorf("search.json says selected %q after %d epochs; its last rung %q after %d", rec.Selected, rec.EpochsTrained, selected.Config, rec.Rungs[2].EpochsSoFar)
	}
	if !rec.Rungs[1].Configs[0].Promoted || rec.Rungs[1].Configs[0].Config != selected.Config {
		t.Errorf("the last rung's configuration %s is not rung 2's promoted best", selected.Config)
	}

	// The selected configuration's runs against the grid without [search].
	plain := newNationsSweep(t, strings.Replace(searchNations, "%s", "epochs = 9", 1))
	var runs []string
	for _, r := range plain.g.Runs {
		if r.Spec.ConfigID() == selected.Config {
			runs = append(runs, r.ID)
			plain.train(t, context.Background(), Train, 0, r)
		}
	}
	if !reflect.DeepEqual(runs, selected.Runs) {
		t.Fatalf("the plain grid's runs of %s are %v, the search's %v", selected.Config, runs, selected.Runs)
	}
	epochs := 0
	for _, id := range runs {
		got, want := search.record(t, id), plain.record(t, id)
		delete(got.Test, "step_ms") // a timing
		delete(want.Test, "step_ms")
		if !reflect.DeepEqual(got.Valid, want.Valid) || !reflect.DeepEqual(got.Test, want.Test) || got.BestEpoch != want.BestEpoch ||
			len(got.Epochs) != len(want.Epochs) {
			t.Errorf("run %s: the search's record (valid %v, test %v, best epoch %d, %d epochs) differs from the plain grid's (%v, %v, %d, %d)",
				id, got.Valid, got.Test, got.BestEpoch, len(got.Epochs), want.Valid, want.Test, want.BestEpoch, len(want.Epochs))
		}
		for i := range min(len(got.Epochs), len(want.Epochs)) {
			if got.Epochs[i].TrainLoss != want.Epochs[i].TrainLoss {
				t.Errorf("run %s epoch %d: loss %v, the plain grid's %v", id, got.Epochs[i].Epoch, got.Epochs[i].TrainLoss, want.Epochs[i].TrainLoss)
			}
		}
		if got.Rung == nil || got.Rung.Index != 2 || !fileExists(filepath.Join(search.out, "runs", id, "rung-2.json")) {
			t.Errorf("run %s: rung %v, and its rung-2 record kept: %v", id, got.Rung, fileExists(filepath.Join(search.out, "runs", id, "rung-2.json")))
		}
		epochs += resultsdir.TrainedEpochs(got.Epochs)
	}
	for _, r := range search.g.Runs {
		if fileExists(filepath.Join(search.out, "runs", r.ID, ckpt.StateName)) {
			t.Errorf("run %s kept its resume state after the search ended", r.ID)
		}
		// Only the last rung tests: an earlier rung's test would be of an
		// unfinished run.
		if rec := search.record(t, r.ID); rec.Rung.Last() == (rec.Test["mrr"] == 0) {
			t.Errorf("run %s ends at rung %s with test %v", r.ID, rec.Rung, rec.Test)
		}
	}
	if rec.Rungs[2].EpochsSoFar >= 12*9 || rec.Rungs[2].EpochsSoFar < epochs {
		t.Errorf("the search trained %d epochs in all; the full grid takes at most %d, the selected runs alone %d", rec.Rungs[2].EpochsSoFar, 12*9, epochs)
	}
	md, err := os.ReadFile(filepath.Join(search.out, resultsdir.ResultsMDName))
	must(t, err)
	if !strings.Contains(string(md), "| rung |") || !strings.Contains(string(md), "3/3") {
		t.Errorf("results.md has no rung column:\n%s", md)
	}
}

// A search stopped anywhere and started again decides the same rungs and
// ends with the same records as one never stopped.
func TestHalvingSearchResumesExactly(t *testing.T) {
	src := strings.Replace(searchNations, "%s", halvingSection, 1)
	whole := newNationsSweep(t, src)
	whole.train(t, context.Background(), Train, 0)
	want := readSearchRecord(t, whole.out)
	for _, stopAfter := range []int32{5, 13, 16} { // runs started before the stop: in rung 1, 2 and 3
		resumed := newNationsSweep(t, src)
		ctx, cancel := context.WithCancel(context.Background())
		var started atomic.Int32
		stopping := func(ctx context.Context, job Job) (*Outcome, error) {
			if started.Add(1) == stopAfter {
				job.Observer = cancelAtEpochEnd{Observer: job.Observer, cancel: cancel}
			}
			return Train(ctx, job)
		}
		tally, _ := resumed.train(t, ctx, stopping, 0)
		cancel()
		if tally.Interrupted != 1 {
			t.Fatalf("stop after %d: tally %+v, want one run interrupted", stopAfter, tally)
		}
		resumed.train(t, context.Background(), Train, 0)
		got := readSearchRecord(t, resumed.out)
		if len(got.Rungs) != len(want.Rungs) {
			t.Fatalf("stop after %d: %d rungs decided, want %d", stopAfter, len(got.Rungs), len(want.Rungs))
		}
		for k := range want.Rungs {
			g, w := got.Rungs[k], want.Rungs[k]
			g.DecidedAt = w.DecidedAt
			if !reflect.DeepEqual(g, w) {
				t.Errorf("stop after %d: rung %d decided\n%+v\nwant\n%+v", stopAfter, k, g, w)
			}
		}
		for _, r := range resumed.g.Runs {
			g, w := resumed.record(t, r.ID), whole.record(t, r.ID)
			delete(g.Test, "step_ms") // a timing
			delete(w.Test, "step_ms")
			if !reflect.DeepEqual(g.Valid, w.Valid) || !reflect.DeepEqual(g.Test, w.Test) || !reflect.DeepEqual(g.Rung, w.Rung) {
				t.Errorf("stop after %d: run %s ends at rung %v with valid %v, test %v; the search never stopped: %v, %v, %v",
					stopAfter, r.ID, g.Rung, g.Valid, g.Test, w.Rung, w.Valid, w.Test)
			}
		}
	}
}

// record reads the metrics.json of run id.
func (ts toySweep) record(t *testing.T, id string) *resultsdir.Record {
	t.Helper()
	rec, err := resultsdir.ReadRecord(filepath.Join(ts.out, "runs", id))
	must(t, err)
	if rec == nil {
		t.Fatalf("run %s has no record", id)
	}
	return rec
}

// cancelAtEpochEnd cancels the sweep's context when the run's first epoch
// (of this attempt) ends.
type cancelAtEpochEnd struct {
	train.Observer
	cancel context.CancelFunc
}

func (c cancelAtEpochEnd) EpochEnd(rec train.EpochRecord) {
	c.Observer.EpochEnd(rec)
	c.cancel()
}

// Each committed search grid's full grid (grids/<name>-full.toml, the
// check of results/<name>/) expands to the same runs, trained to
// max_epochs.
func TestSearchStudyGridsMatchTheirFullGrids(t *testing.T) {
	searches, err := filepath.Glob(filepath.Join("..", "grids", "*-halving.toml"))
	must(t, err)
	if len(searches) == 0 {
		t.Fatal("no grids/*-halving.toml")
	}
	for _, path := range searches {
		g, err := grid.LoadGrid(path, runspec.Validate)
		must(t, err)
		full, err := grid.LoadGrid(strings.TrimSuffix(path, ".toml")+"-full.toml", runspec.Validate)
		must(t, err)
		if g.Search == nil || full.Search != nil {
			t.Fatalf("%s must have [search] and its full grid none", path)
		}
		if len(g.Runs) != len(full.Runs) {
			t.Fatalf("%s: %d runs, its full grid %d", path, len(g.Runs), len(full.Runs))
		}
		for i := range g.Runs {
			if g.Runs[i].ID != full.Runs[i].ID || !reflect.DeepEqual(g.Runs[i].Spec, full.Runs[i].Spec) {
				t.Errorf("%s: run %d is %s, the full grid's %s", path, i, g.Runs[i].ID, full.Runs[i].ID)
			}
		}
	}
}

// Rungs trained run by run, as SLURM array tasks do (-rung K -task I), with
// a promote step after each, decide what one process deciding them all
// does, and end with the same records.
func TestRungTasksEqualOneProcess(t *testing.T) {
	src := strings.Replace(searchNations, "%s", halvingSection, 1)
	whole := newNationsSweep(t, src)
	whole.train(t, context.Background(), Train, 0)
	want := readSearchRecord(t, whole.out)

	tasks := newNationsSweep(t, src)
	step := func(o Options) Tally {
		o.Out, o.DataRoot, o.Run, o.Quiet = tasks.out, tasks.data, Train, true
		s := New(tasks.g, tasks.g.Runs, o)
		must(t, s.Prepare())
		return s.Run(context.Background())
	}
	for k, n := range []int{12, 4, 2} {
		for i := n + 1; i >= 1; i-- { // backwards, and one task too many
			tally := step(Options{Rung: k + 1, RungTask: i})
			if trained := tally.Finished; (i > n) != (trained == 0) || tally.Problems != 0 {
				t.Fatalf("rung %d task %d: tally %+v", k+1, i, tally)
			}
		}
		if tally := step(Options{Rung: k + 1, Promote: true}); tally.Finished != 0 || tally.Problems != 0 {
			t.Fatalf("promote step of rung %d: tally %+v", k+1, tally)
		}
	}
	got := readSearchRecord(t, tasks.out)
	if len(got.Rungs) != len(want.Rungs) {
		t.Fatalf("%d rungs decided, want %d", len(got.Rungs), len(want.Rungs))
	}
	for k := range want.Rungs {
		got.Rungs[k].DecidedAt = want.Rungs[k].DecidedAt
		if !reflect.DeepEqual(got.Rungs[k], want.Rungs[k]) {
			t.Errorf("rung %d decided\n%+v\nwant\n%+v", k, got.Rungs[k], want.Rungs[k])
		}
	}
	for _, r := range tasks.g.Runs {
		g, w := tasks.record(t, r.ID), whole.record(t, r.ID)
		if !reflect.DeepEqual(g.Valid, w.Valid) || !reflect.DeepEqual(g.Rung, w.Rung) {
			t.Errorf("run %s ends at rung %v with valid %v; in one process at %v with %v", r.ID, g.Rung, g.Valid, w.Rung, w.Valid)
		}
	}
}

// What a search cannot do is refused before anything is trained.
func TestSearchRefusals(t *testing.T) {
	search := strings.Replace(searchNations, "%s", halvingSection, 1)
	plain := strings.Replace(searchNations, "%s", "epochs = 9", 1)
	for _, c := range []struct {
		name, src string
		o         Options
		only      string
		want      string
	}{
		{"rung without a search", plain, Options{Rung: 1}, "", "has none"},
		{"rung out of range", search, Options{Rung: 4}, "", "rungs 1 to 3"},
		{"task without rung", search, Options{RungTask: 2}, "", "go with -rung"},
		{"no states", search, Options{StateEvery: -1}, "", "-state-every"},
		{"a selection", search, Options{}, "0-3", "-only selected 4 of 12"},
		{"distillation", strings.Replace(search, "patience = 2", "patience = 2\ndistill_from = \"x\"", 1), Options{}, "", "distill_from"},
		{"ll of an energy model", strings.Replace(strings.Replace(search, `"cp2"`, `"cp"`, 1), `"mle"`, `"pll"`, 1), Options{}, "", "energy-based"},
		{"a metric not validated", strings.Replace(search, "patience = 2", "patience = 2\neval = { metrics = [\"mrr\", \"hits\"] }", 1), Options{}, "", "not among its eval.metrics"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ts := newNationsSweep(t, c.src)
			runs, err := grid.Select(c.only, ts.g.Runs)
			must(t, err)
			c.o.Out, c.o.DataRoot = ts.out, ts.data
			err = New(ts.g, runs, c.o).Prepare()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Prepare: %v, want an error saying %q", err, c.want)
			}
		})
	}
	// A results directory holding the plain grid's finished runs.
	ts := newNationsSweep(t, plain)
	ts.train(t, context.Background(), Train, 0, ts.g.Runs[0])
	s, err := grid.ParseGrid("g.toml", []byte(search), runspec.Validate)
	must(t, err)
	err = New(s, s.Runs, Options{Out: ts.out, DataRoot: ts.data}).Prepare()
	if err == nil || !strings.Contains(err.Error(), "needs a results directory of its own") {
		t.Errorf("a search over a plain grid's runs: %v", err)
	}
}

// -j trains a rung's runs at once; the decisions are those of one at a
// time.
func TestHalvingSearchWithJobs(t *testing.T) {
	src := strings.Replace(searchNations, "%s", halvingSection, 1)
	serial, parallel := newNationsSweep(t, src), newNationsSweep(t, src)
	serial.train(t, context.Background(), Train, 0)
	s := New(parallel.g, parallel.g.Runs, Options{Out: parallel.out, DataRoot: parallel.data, Jobs: 3, Quiet: true})
	must(t, s.Prepare())
	if tally := s.Run(context.Background()); tally.Finished != 18 {
		t.Fatalf("tally %+v, want 18 runs trained", tally)
	}
	want, got := readSearchRecord(t, serial.out), readSearchRecord(t, parallel.out)
	for k := range want.Rungs {
		got.Rungs[k].DecidedAt = want.Rungs[k].DecidedAt
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("with -j 3 the search decided\n%+v\nwant\n%+v", got, want)
	}
}

// Diverged configurations are never promoted; when every one of a rung
// diverges, the later rungs train nothing and the search selects none,
// saying so, rather than failing.
func TestHalvingSearchWhenRunsDiverge(t *testing.T) {
	src := `name = "toy"
[defaults]
dataset = "toy"
model = "cp2"
objective = "mle"
rank = 4
batch_size = 10
learning_rate = [0.1, 0.01, 0.001, 0.0001]
[search]
method = "halving"
min_epochs = 1
max_epochs = 4
eta = 2
`
	for _, c := range []struct {
		name, diverge string
		selected      bool
	}{{"one", "lr0.1-", true}, {"all", ".", false}} {
		t.Run(c.name, func(t *testing.T) {
			ts := newSweepOf(t, src)
			fake := newFake()
			fake.Diverge = regexp.MustCompile(c.diverge)
			tally := ts.run(t, fake, 1)
			if tally.Problems != 0 {
				t.Fatalf("tally %+v", tally)
			}
			rec := readSearchRecord(t, ts.out)
			if len(rec.Rungs) != 3 || (rec.Selected != "") != c.selected {
				t.Fatalf("%d rungs decided, selected %q", len(rec.Rungs), rec.Selected)
			}
			for _, d := range rec.Rungs {
				for _, cs := range d.Configs {
					if cs.Promoted && regexp.MustCompile(c.diverge).MatchString(cs.Config) {
						t.Errorf("rung %d promoted the diverged %s", d.Rung+1, cs.Config)
					}
				}
			}
			md, err := os.ReadFile(filepath.Join(ts.out, resultsdir.SearchMDName))
			must(t, err)
			if strings.Contains(string(md), "Selected:") != c.selected {
				t.Errorf("search.md:\n%s", md)
			}
		})
	}
}

// A search over runs sharded across two processes (dist.Local, process 1
// following) saves every rung's final state on both: the processes agree
// on SaveFinal, or the gather of the state would wait forever. Its
// decisions are those of one process (float64: the sharded step sums in
// another order, which rounding alone cannot reorder here).
func TestHalvingSearchSharded(t *testing.T) {
	src := strings.Replace(strings.Replace(searchNations, "%s", halvingSection+"", 1), "patience = 2", "patience = 2\ndtype = \"float64\"\nprocesses = 2", 1)
	one := newNationsSweep(t, strings.Replace(src, "processes = 2", "", 1))
	one.train(t, context.Background(), Train, 0)
	want := readSearchRecord(t, one.out)

	two := newNationsSweep(t, src)
	comms := dist.Local(2)
	followed := make(chan error, 1)
	go func() { followed <- Follow(context.Background(), comms[1]) }()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run := Sharded(comms[0], Train, func(err error) { t.Errorf("aborted: %v", err) }, func() { t.Error("stopped") })
	s := New(two.g, two.g.Runs, Options{Out: two.out, DataRoot: two.data, Run: run, Quiet: true})
	must(t, s.Prepare())
	tally := s.Run(ctx)
	must(t, EndFollowers(comms[0]))
	must(t, <-followed)
	if ctx.Err() != nil || tally.Finished != 18 {
		t.Fatalf("tally %+v (%v): want 18 runs trained", tally, ctx.Err())
	}
	got := readSearchRecord(t, two.out)
	for k := range want.Rungs {
		if k >= len(got.Rungs) {
			t.Fatalf("%d rungs decided, want %d", len(got.Rungs), len(want.Rungs))
		}
		for i, c := range want.Rungs[k].Configs {
			g := got.Rungs[k].Configs[i]
			if g.Config != c.Config || g.Promoted != c.Promoted {
				t.Errorf("rung %d, rank %d: %s (promoted %v); one process: %s (%v)", k+1, i+1, g.Config, g.Promoted, c.Config, c.Promoted)
			}
		}
	}
}
