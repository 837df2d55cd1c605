package sweep

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"gekc/grid"
	"gekc/internal/atomicfile"
	"gekc/report"
	"gekc/report/reporttest"
	"gekc/resultsdir"
	"gekc/sweep/sweeptest"
	"gekc/train"
)

// The states a SIGKILL can leave, recreated by hand (experiments'
// process tests kill real processes): a record without its results.tsv
// row, a run without its record but with a partial checkpoint and a
// temporary, a temporary of results.tsv. A resumed sweep gives every run
// one row, retrains only the run without a record, and leaves no
// temporary.
func TestResumeRepairsCrashStates(t *testing.T) {
	ts := newToySweep(t)
	ids := ts.ids()
	fake := newFake()
	if tally := ts.run(t, fake, 1); tally.Finished != len(ids) {
		t.Fatalf("%+v", tally)
	}

	// Killed between metrics.json and its row: drop two rows.
	tsvPath := filepath.Join(ts.out, resultsdir.ResultsTSVName)
	table, err := report.ReadTSV(tsvPath)
	must(t, err)
	var kept []report.Row
	for _, r := range table.Rows {
		if r["id"] != ids[1] && r["id"] != ids[8] {
			kept = append(kept, r)
		}
	}
	table.Rows = kept
	must(t, atomicfile.WriteFile(tsvPath, table.TSV(), 0o644))

	// Killed mid-run: no metrics.json, a partial checkpoint, a temporary.
	midRun := filepath.Join(ts.out, resultsdir.RunsDirName, ids[4])
	must(t, os.Remove(filepath.Join(midRun, resultsdir.MetricsName)))
	must(t, os.WriteFile(filepath.Join(midRun, "checkpoint.npz"), []byte("partial"), 0o644))
	must(t, os.WriteFile(filepath.Join(midRun, ".metrics.json.tmp-123"), []byte("{"), 0o644))
	// Killed while rewriting results.tsv.
	must(t, os.WriteFile(filepath.Join(ts.out, ".results.tsv.tmp-456"), []byte("id\n"), 0o644))

	if tally := ts.run(t, fake, 1); tally.Finished != 1 || tally.AlreadyDone != len(ids)-1 || tally.Failed != 0 {
		t.Fatalf("resumed: %+v; want the one run without a record trained, the rest already done", tally)
	}
	sweeptest.EachRowOnce(t, ts.out, ids)
	for _, id := range ids {
		want := 1
		if id == ids[4] {
			want = 2
		}
		if got := fake.Calls(id); got != want {
			t.Errorf("%s trained %d times, want %d", id, got, want)
		}
	}
	ckpt, _ := os.ReadFile(filepath.Join(midRun, "checkpoint.npz"))
	if string(ckpt) != "final "+ids[4] {
		t.Errorf("restarted run's checkpoint: %q", ckpt)
	}
	sweeptest.NoTempFiles(t, ts.out)
}

// Several runs at once in one process: each trained once, one row each,
// and each record says its peak memory is the whole process's.
func TestParallelJobsInOneProcess(t *testing.T) {
	ts := newToySweep(t)
	ids := ts.ids()
	fake := newFake()
	fake.Sleep = 5 * time.Millisecond
	if tally := ts.run(t, fake, 4); tally.Finished != len(ids) {
		t.Fatalf("%+v", tally)
	}
	sweeptest.EachRowOnce(t, ts.out, ids)
	for _, id := range ids {
		if n := fake.Calls(id); n != 1 {
			t.Errorf("%s trained %d times", id, n)
		}
	}
	rec, err := resultsdir.ReadRecord(resultsdir.RunDir(ts.out, ids[0]))
	must(t, err)
	if !strings.Contains(strings.Join(rec.Notes, " "), "peak of the whole process") {
		t.Errorf("-j > 1 run lacks the note on peak RSS: %v", rec.Notes)
	}
}

// A sweep goes on past every bad run: a diverged run is final, recorded
// with its NaN loss; a failed run and a panicking one are recorded as
// failed with their error, listed in results.md, and retried (and their
// rows replaced) when the sweep is resumed; the diverged run is not.
func TestDivergedAndFailedRunsAreRecorded(t *testing.T) {
	ts := newToySweep(t)
	ids := ts.ids()
	diverged, failed, panicked := ids[3], ids[5], ids[7]
	fake := newFake()
	fake.Diverge = sweeptest.IDs(diverged)
	fake.Fail = sweeptest.IDs(failed)
	fake.Panic = sweeptest.IDs(panicked)
	if tally := ts.run(t, fake, 1); tally.Finished != 9 || tally.Diverged != 1 || tally.Failed != 2 {
		t.Fatalf("%+v; want 9 finished, 1 diverged, 2 failed", tally)
	}
	sweeptest.EachRowOnce(t, ts.out, ids)
	for _, id := range ids {
		want := train.Finished
		switch id {
		case diverged:
			want = train.Diverged
		case failed, panicked:
			want = train.Failed
		}
		rec, err := resultsdir.ReadRecord(resultsdir.RunDir(ts.out, id))
		must(t, err)
		if rec == nil || rec.Status != want {
			t.Errorf("%s: record %+v, want status %s", id, rec, want)
		}
	}
	rec, err := resultsdir.ReadRecord(resultsdir.RunDir(ts.out, failed))
	must(t, err)
	if !strings.Contains(rec.Error, "fake failure for "+failed) {
		t.Errorf("failed run's error: %q", rec.Error)
	}
	rec, err = resultsdir.ReadRecord(resultsdir.RunDir(ts.out, panicked))
	must(t, err)
	if !strings.Contains(rec.Error, "panic: fake panic") {
		t.Errorf("panicked run's error: %q", rec.Error)
	}
	data, err := os.ReadFile(filepath.Join(ts.out, resultsdir.RunsDirName, diverged, resultsdir.MetricsName))
	must(t, err)
	if !strings.Contains(string(data), `"train_loss": "NaN"`) {
		t.Errorf("diverged run's NaN loss is not recorded:\n%s", data)
	}
	md, _ := os.ReadFile(filepath.Join(ts.out, resultsdir.ResultsMDName))
	if err := containsAll(string(md), "1 diverged", "## Failed runs", failed); err != nil {
		t.Errorf("results.md: %v\n%s", err, md)
	}

	fake.Fail, fake.Panic, fake.Diverge = nil, nil, nil
	if tally := ts.run(t, fake, 1); tally.Finished != 2 || tally.AlreadyDone != 10 || tally.Failed != 0 {
		t.Fatalf("resumed: %+v; want the 2 failed runs retried", tally)
	}
	sweeptest.EachRowOnce(t, ts.out, ids)
	for id, want := range map[string]int{failed: 2, panicked: 2, diverged: 1, ids[0]: 1} {
		if got := fake.Calls(id); got != want {
			t.Errorf("%s trained %d times, want %d", id, got, want)
		}
	}
	table, err := report.ReadTSV(filepath.Join(ts.out, resultsdir.ResultsTSVName))
	must(t, err)
	for _, r := range table.Rows {
		if r["id"] == failed && r["status"] != "finished" {
			t.Errorf("retried run's row: %v", r)
		}
	}
}

// A sweep of several runs cancelled during its first (what SIGINT does)
// counts the stopped run interrupted and the others not started;
// the stopped run leaves only its lock, no row and no temporary; no run
// starts after the cancel; started again, the sweep trains every run once.
func TestCancelledSweepTalliesEveryRun(t *testing.T) {
	ts := newToySweep(t)
	ids := ts.ids()
	fake := newFake()
	fake.Block = make(chan struct{}) // the first run waits for the cancel
	fake.Started = make(chan string, len(ids))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan Tally)
	go func() { done <- ts.runCtx(t, ctx, fake, 1) }()
	first := <-fake.Started
	cancel()
	tally := <-done
	if tally.Interrupted != 1 || tally.NotStarted != len(ids)-1 || tally.Finished+tally.Failed+tally.Diverged+tally.AlreadyDone != 0 {
		t.Errorf("tally %+v; want the first run interrupted and the %d others not started", tally, len(ids)-1)
	}
	entries, err := os.ReadDir(filepath.Join(ts.out, resultsdir.RunsDirName, first))
	must(t, err)
	for _, e := range entries {
		if e.Name() != resultsdir.RunLockName {
			t.Errorf("interrupted run left %s", e.Name())
		}
	}
	if table, err := report.ReadTSV(filepath.Join(ts.out, resultsdir.ResultsTSVName)); err != nil || len(table.Rows) != 0 {
		t.Errorf("an interrupted run has a row (%v)", err)
	}
	total := 0
	for _, id := range ids {
		total += fake.Calls(id)
	}
	if total != 1 {
		t.Errorf("%d runs started after the cancel", total-1)
	}
	sweeptest.NoTempFiles(t, ts.out)
	fake.Started = nil
	if tally := ts.run(t, fake, 1); tally.Finished != len(ids) {
		t.Fatalf("restart: %+v", tally)
	}
	sweeptest.EachRowOnce(t, ts.out, ids)
}

// A run distilled from another run of the sweep trains after it, whatever
// their order in the grid, and receives its checkpoint; a source that has
// not finished makes the run fail, saying so.
func TestDistillOrderAndSource(t *testing.T) {
	g, err := grid.ParseGrid("g.toml", []byte(sweeptest.ToyBase+"[[sweep]]\nmodel = \"cp\"\n"), nil)
	must(t, err)
	srcID := g.Runs[0].ID
	// The distilled run comes first in the file; it must still run second.
	src := sweeptest.ToyBase + "[[sweep]]\nmodel = \"cp2\"\ndistill_from = \"" + srcID + "\"\n[[sweep]]\nmodel = \"cp\"\n"
	ts := newSweepOf(t, src)
	ids := ts.ids()
	fake := newFake()
	fake.Started = make(chan string, 2)
	if tally := ts.run(t, fake, 2); tally.Finished != 2 {
		t.Fatalf("%+v", tally)
	}
	if first := <-fake.Started; first != srcID {
		t.Errorf("%s started before its source %s", first, srcID)
	}
	if want := filepath.Join(ts.out, resultsdir.RunsDirName, srcID, "checkpoint.npz"); fake.jobs[ids[0]].DistillCheckpoint != want {
		t.Errorf("DistillCheckpoint = %q, want %q", fake.jobs[ids[0]].DistillCheckpoint, want)
	}

	// Only the distilled run, its source not trained: it fails, saying why.
	ts2 := newSweepOf(t, src)
	s := New(ts2.g, ts2.g.Runs[:1], Options{Out: ts2.out, DataRoot: ts2.data, Run: newFake().run, Quiet: true})
	must(t, s.Prepare())
	if tally := s.Run(context.Background()); tally.Failed != 1 {
		t.Fatalf("%+v; want the distilled run failed", tally)
	}
	rec, err := resultsdir.ReadRecord(resultsdir.RunDir(ts2.out, ids[0]))
	must(t, err)
	if !strings.Contains(rec.Error, "distill_from") {
		t.Errorf("error %q", rec.Error)
	}
}

// The counts a sweep reports — its tally, the head of results.md, each
// configuration's n, the finished runs FinishedRuns lists — leave failed
// runs out; a diverged run is final but not finished.
func TestRunCountsLeaveOutFailedRuns(t *testing.T) {
	ts := newToySweep(t)
	ids := ts.ids()
	diverged, failed, panicked := ids[3], ids[5], ids[7]
	fake := newFake()
	fake.Diverge = sweeptest.IDs(diverged)
	fake.Fail = sweeptest.IDs(failed, panicked)
	if tally := ts.run(t, fake, 1); tally.Finished != 9 || tally.Diverged != 1 || tally.Failed != 2 {
		t.Fatalf("%+v", tally)
	}
	md, err := os.ReadFile(filepath.Join(ts.out, resultsdir.ResultsMDName))
	must(t, err)
	if want := "12 runs in 5 configurations: 9 finished, 1 diverged, 2 failed."; !strings.Contains(string(md), want) {
		t.Errorf("results.md: want %q in\n%s", want, md)
	}
	// n per configuration: the seeds that finished.
	wantN := map[string]int{}
	for _, r := range ts.g.Runs {
		wantN[r.Spec.ConfigID()] += 0
		if r.ID != diverged && r.ID != failed && r.ID != panicked {
			wantN[r.Spec.ConfigID()]++
		}
	}
	_, all, _ := strings.Cut(string(md), "## All configurations")
	header, rows := reporttest.MarkdownCells(all)
	for _, cells := range rows {
		cfg := strings.Trim(cells[slices.Index(header, "config")], "`")
		if n := cells[slices.Index(header, "n")]; n != strconv.Itoa(wantN[cfg]) {
			t.Errorf("%s: n = %s, want %d (its finished seeds)", cfg, n, wantN[cfg])
		}
	}
	if len(rows) != len(wantN) {
		t.Errorf("%d configurations in results.md, want %d", len(rows), len(wantN))
	}
	final, err := resultsdir.FinishedRuns(ts.out)
	must(t, err)
	if len(final) != 10 || slices.Contains(final, failed) || slices.Contains(final, panicked) {
		t.Errorf("FinishedRuns: %v; want the 9 finished and the diverged one", final)
	}
	fake.Fail, fake.Diverge = nil, nil
	if tally := ts.run(t, fake, 1); tally.Finished != 2 || tally.AlreadyDone != 10 {
		t.Errorf("resumed: %+v; want the 2 failed runs trained, 10 already done", tally)
	}
}

// A sweep trains each run once into its directory: config.toml with the
// run's ID, metrics.json (status, host, epochs, test metrics, times, the
// environment that changes speed), the run function's checkpoint, a copy
// of the grid and the tables; swept again it trains nothing and leaves
// results.tsv as it was.
func TestSweepEndToEnd(t *testing.T) {
	ts := newToySweep(t)
	ids := ts.ids()
	fake := newFake()
	if tally := ts.run(t, fake, 1); tally.Finished != len(ids) {
		t.Fatalf("%+v", tally)
	}
	sweeptest.EachRowOnce(t, ts.out, ids)
	for _, id := range ids {
		if n := fake.Calls(id); n != 1 {
			t.Errorf("%s trained %d times", id, n)
		}
		dir := filepath.Join(ts.out, resultsdir.RunsDirName, id)
		spec, err := resultsdir.ReadConfig(filepath.Join(dir, resultsdir.ConfigName))
		must(t, err)
		if spec.ID() != id {
			t.Errorf("config.toml of %s has ID %s", id, spec.ID())
		}
		rec, err := resultsdir.ReadRecord(dir)
		must(t, err)
		if rec.Status != train.Finished || rec.ID != id || rec.Host == "" || rec.GoVersion == "" || len(rec.Epochs) != 3 ||
			rec.Test["mrr"] == 0 || rec.FinishedAt.Before(rec.StartedAt) || rec.SecondsPerEpoch < 0 {
			t.Errorf("metrics.json of %s: %+v", id, rec)
		}
		if _, ok := rec.Env["OPENBLAS_CORETYPE"]; !ok {
			t.Errorf("metrics.json of %s lacks OPENBLAS_CORETYPE", id)
		}
		ckpt, err := os.ReadFile(filepath.Join(dir, "checkpoint.npz"))
		must(t, err)
		if string(ckpt) != "final "+id {
			t.Errorf("checkpoint of %s: %q", id, ckpt)
		}
	}
	copied, err := os.ReadFile(filepath.Join(ts.out, resultsdir.GridCopyName))
	must(t, err)
	if string(copied) != sweeptest.ToyGrid {
		t.Error("grid.toml is not a copy of the grid")
	}
	md, err := os.ReadFile(filepath.Join(ts.out, resultsdir.ResultsMDName))
	must(t, err)
	if err := containsAll(string(md), "# Results: toy", "Best configuration", "complex2", "test MRR", "test ece"); err != nil {
		t.Errorf("results.md: %v", err)
	}
	sweeptest.NoTempFiles(t, ts.out)

	tsvBefore, _ := os.ReadFile(filepath.Join(ts.out, resultsdir.ResultsTSVName))
	if tally := ts.run(t, fake, 1); tally.AlreadyDone != len(ids) || tally.Finished != 0 {
		t.Fatalf("second sweep: %+v", tally)
	}
	if tsvAfter, _ := os.ReadFile(filepath.Join(ts.out, resultsdir.ResultsTSVName)); string(tsvAfter) != string(tsvBefore) {
		t.Error("results.tsv changed on a sweep that trained nothing")
	}
}

// distill_from may also name an .npz file of embeddings trained elsewhere:
// the run receives it as its checkpoint; a file that is not there makes
// the run fail, saying so.
func TestDistillFromNpzFile(t *testing.T) {
	// The fixture of package ckpt, which reads such archives.
	npz, err := filepath.Abs(filepath.Join("..", "train", "ckpt", "testdata", "numpy-complex.npz"))
	must(t, err)
	ts := newSweepOf(t, sweeptest.ToyBase+"[[sweep]]\nmodel = \"complex2\"\ndistill_from = \""+npz+"\"\n")
	fake := newFake()
	if tally := ts.run(t, fake, 1); tally.Finished != 1 {
		t.Fatalf("%+v", tally)
	}
	if job := fake.jobs[ts.ids()[0]]; job.DistillCheckpoint != npz {
		t.Errorf("DistillCheckpoint = %q, want %q", job.DistillCheckpoint, npz)
	}
	ts2 := newSweepOf(t, sweeptest.ToyBase+"[[sweep]]\nmodel = \"complex2\"\ndistill_from = \"missing.npz\"\n")
	if tally := ts2.run(t, newFake(), 1); tally.Failed != 1 {
		t.Fatalf("%+v; want the run failed", tally)
	}
	rec, err := resultsdir.ReadRecord(resultsdir.RunDir(ts2.out, ts2.ids()[0]))
	must(t, err)
	if !strings.Contains(rec.Error, `distill_from "missing.npz"`) {
		t.Errorf("error %q", rec.Error)
	}
}
