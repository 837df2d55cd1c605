package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gekc/resultsdir"
	"gekc/sweep"
	"gekc/sweep/sweeptest"
)

// The command's side of a sweep with bad runs (the runner's records,
// tables, counts and retries are sweep.TestDivergedAndFailedRunsAreRecorded
// and TestRunCountsLeaveOutFailedRuns): exit code exitRunsFailed, a line
// per bad run on stderr, a closing line counting failed runs apart from
// finished ones and a diverged run final but not finished, and on stdout
// the table of the best configurations and nothing else; resumed with the
// failures gone, exit 0 and the runs done before counted as already done.
func TestSweepDivergedAndFailedRuns(t *testing.T) {
	fx := newSweepFixture(t, sweeptest.ToyGrid)
	ids := fx.runIDs(t)
	diverged, failed, panicked := ids[3], ids[5], ids[7]
	fake := newFake()
	fake.Diverge = sweeptest.IDs(diverged)
	fake.Fail = sweeptest.IDs(failed)
	fake.Panic = sweeptest.IDs(panicked)
	code, stdout, stderr := runInProcess(t, context.Background(), fake, fx.args()...)
	if code != exitRunsFailed {
		t.Fatalf("exit %d, want %d (a run failed): %s", code, exitRunsFailed, stderr)
	}
	if err := containsAll(stderr, diverged+" diverged", failed+" failed", "error: fake failure",
		"sweep toy: 9 finished, 1 diverged, 2 failed now; 0 were already done; 0 being trained elsewhere; 0 interrupted, 0 not started."); err != nil {
		t.Errorf("per-run lines on stderr: %v\n%s", err, stderr)
	}
	// stdout has the table of the best configurations, and nothing else.
	if err := containsAll(stdout, "best configuration per model and objective", " model ", " MRR ", " Hits@10 ", " LL ", "| cp2      | pll       | 0.3080 ± 0.0071 |"); err != nil {
		t.Errorf("stdout: %v\n%s", err, stdout)
	}
	if strings.Contains(stdout, failed) || strings.Contains(stdout, "epoch") {
		t.Errorf("stdout has progress:\n%s", stdout)
	}
	fake.Fail, fake.Panic, fake.Diverge = nil, nil, nil
	code, _, stderr = runInProcess(t, context.Background(), fake, fx.args()...)
	if code != exitOK {
		t.Fatalf("resumed sweep: exit %d: %s", code, stderr)
	}
	if want := "sweep toy: 2 finished, 0 diverged, 0 failed now; 10 were already done;"; !strings.Contains(stderr, want) {
		t.Errorf("resumed closing line: want %q in\n%s", want, stderr)
	}
}
func TestResumeFalseRefusesFinishedRuns(t *testing.T) {
	fx := newSweepFixture(t, sweeptest.ToyGrid)
	fake := newFake()
	// Nothing finished yet: -resume=false starts.
	if code, _, stderr := runInProcess(t, context.Background(), fake, fx.args("-resume=false", "-only", "0")...); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	code, _, stderr := runInProcess(t, context.Background(), fake, fx.args("-resume=false")...)
	if code != exitUsage {
		t.Fatalf("exit %d, want %d", code, exitUsage)
	}
	if err := containsAll(stderr, "1 finished runs", "-resume=false", "another -out"); err != nil {
		t.Errorf("message %q: %v", stderr, err)
	}
	if fake.TotalCalls() != 1 {
		t.Errorf("%d runs trained", fake.TotalCalls())
	}
}

// The command's side of a cancelled sweep (the runner's tally, files and
// restart are sweep.TestCancelledSweepTalliesEveryRun): exit
// exitInterrupted, and its closing line counts the stopped run
// interrupted and every other run of the sweep not started.
func TestInterruptExitsAndCountsEveryRun(t *testing.T) {
	fx := newSweepFixture(t, sweeptest.ToyGrid)
	ids := fx.runIDs(t)
	fake := newFake()
	fake.Block = make(chan struct{}) // the first run waits for the interrupt
	fake.Started = make(chan string, len(ids))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int)
	var tally string
	go func() {
		code, _, stderr := runInProcess(t, ctx, fake, fx.args()...)
		tally = stderr
		done <- code
	}()
	<-fake.Started
	cancel() // what SIGINT does, through signal.NotifyContext
	if code := <-done; code != exitInterrupted {
		t.Fatalf("exit %d, want %d", code, exitInterrupted)
	}
	if want := fmt.Sprintf("0 finished, 0 diverged, 0 failed now; 0 were already done; 0 being trained elsewhere; 1 interrupted, %d not started.", len(ids)-1); !strings.Contains(tally, want) {
		t.Errorf("tally of a sweep of %d runs cancelled in its first: want %q in\n%s", len(ids), want, tally)
	}
	sweeptest.NoTempFiles(t, fx.dir)
}

// -only, -samples, -data, -out and -state-every reach the runner (which
// trains the selection with the override: sweep's
// TestSelectionAndSamplesOverride).
func TestOnlyAndSamplesOverride(t *testing.T) {
	fx := newSweepFixture(t, sweeptest.ToyGrid)
	ids := fx.runIDs(t)
	fake := newFake()
	code, _, stderr := runInProcess(t, context.Background(), fake, fx.args("-only", "3,10-11", "-samples", "7", "-state-every", "1h")...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	sweeptest.EachRowOnce(t, fx.out, []string{ids[3], ids[10], ids[11]})
	job := fake.jobs[ids[3]]
	if abs, _ := filepath.Abs(fx.data); job.Spec.Samples != 7 || job.StateEvery != time.Hour || job.DataRoot != abs ||
		job.RunDir != filepath.Join(fx.out, "runs", ids[3]) {
		t.Errorf("job %s: samples %d, state every %v, paths %q %q", job.ID, job.Spec.Samples, job.StateEvery, job.DataRoot, job.RunDir)
	}
}

// -samples: absent keeps the grid's samples, N > 0 replaces them, 0 drops
// them, for runs trained now.
func TestSamplesFlag(t *testing.T) {
	grid := strings.Replace(sweeptest.ToyGrid, "epochs = 3\n", "epochs = 3\nsamples = 11\n", 1)
	for _, c := range []struct {
		args []string
		want int
	}{
		{nil, 11},
		{[]string{"-samples", "7"}, 7},
		{[]string{"-samples", "0"}, 0},
	} {
		fx := newSweepFixture(t, grid)
		id := fx.runIDs(t)[0]
		fake := newFake()
		code, _, stderr := runInProcess(t, context.Background(), fake, fx.args(append([]string{"-only", "0"}, c.args...)...)...)
		if code != exitOK {
			t.Fatalf("%q: exit %d: %s", c.args, code, stderr)
		}
		job, ok := fake.jobs[id]
		if !ok {
			t.Fatalf("%q: the run was not trained", c.args)
		}
		if got := job.Spec.Samples; got != c.want {
			t.Errorf("%q: the run samples %d triples, want %d", c.args, got, c.want)
		}
	}
}

func TestCommandLineErrors(t *testing.T) {
	fx := newSweepFixture(t, sweeptest.ToyGrid)
	tests := []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"no grid", []string{}, exitUsage, []string{"-grid is required"}},
		{"bad grid", []string{"-grid", filepath.Join(fx.dir, "missing.toml")}, exitUsage, []string{"missing.toml"}},
		{"bad -only", fx.args("-only", "99"), exitUsage, []string{"-only", "runs 0-11"}},
		{"bad -j", fx.args("-j", "0"), exitUsage, []string{"-j 0"}},
		{"bad -emit", fx.args("-emit", "pbs"), exitUsage, []string{`-emit "pbs"`}},
		{"stray argument", append(fx.args(), "extra"), exitUsage, []string{`"extra"`}},
		{"-samples 0 with -analyze", fx.args("-analyze", "ktd", "-samples", "0"), exitUsage, []string{"-samples 0 with -analyze"}},
		{"missing dataset", []string{"-grid", fx.grid, "-data", filepath.Join(fx.dir, "elsewhere"), "-out", fx.out}, exitUsage,
			[]string{filepath.Join(fx.dir, "elsewhere", "toy"), "-data", "GEKC_DATA"}},
		{"help", []string{"-h"}, exitOK, []string{"usage:", "-only"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runInProcess(t, context.Background(), newFake(), tt.args...)
			if code != tt.code {
				t.Errorf("exit %d, want %d: %s", code, tt.code, stderr)
			}
			if err := containsAll(stderr, tt.want...); err != nil {
				t.Errorf("stderr %q: %v", stderr, err)
			}
		})
	}
}

func TestDryRun(t *testing.T) {
	fx := newSweepFixture(t, sweeptest.ToyGrid)
	ids := fx.runIDs(t)
	fake := newFake()
	code, stdout, stderr := runInProcess(t, context.Background(), fake, fx.args("-dry-run")...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(fx.out); !os.IsNotExist(err) {
		t.Error("-dry-run created the output directory")
	}
	if err := containsAll(stdout, "12 runs", ids[0], ids[11], "[[sweep]] block 2 (14)", "complex2 mle d=4", "pending"); err != nil {
		t.Errorf("%v\n%s", err, stdout)
	}
	runInProcess(t, context.Background(), fake, fx.args("-only", "1")...)
	_, stdout, _ = runInProcess(t, context.Background(), fake, fx.args("-dry-run", "-only", "0-1")...)
	var last string // run 1's line
	for _, l := range strings.Split(stdout, "\n") {
		if strings.Contains(l, ids[1]) {
			last = l
		}
	}
	if !strings.HasSuffix(last, "finished") || !strings.Contains(stdout, "2 selected") {
		t.Errorf("dry run after training run 1:\n%s", stdout)
	}
	if fake.TotalCalls() != 1 {
		t.Errorf("-dry-run trained something")
	}
}

func TestDataAndOutDefaults(t *testing.T) {
	repo := t.TempDir()
	must(t, os.WriteFile(filepath.Join(repo, "go.mod"), []byte("module x\n"), 0o644))
	sub := filepath.Join(repo, "a", "b")
	must(t, os.MkdirAll(sub, 0o755))
	// With no -data and -out, the command uses <repo>/data and
	// <repo>/results/<grid name>, from any subdirectory.
	must(t, os.MkdirAll(filepath.Join(repo, "data", "toy"), 0o755))
	grid := filepath.Join(repo, "toy.toml")
	must(t, os.WriteFile(grid, []byte(sweeptest.ToyGrid), 0o644))
	var out strings.Builder
	code := runCLI(context.Background(), []string{"-grid", grid, "-dry-run"}, cliEnv{stdout: &out, stderr: &out,
		getenv: func(string) string { return "" }, dir: sub, run: newFake().run})
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, out.String())
	}
	if err := containsAll(out.String(), "out  "+filepath.Join(repo, "results", "toy"), "data "+filepath.Join(repo, "data")); err != nil {
		t.Errorf("%v\n%s", err, out.String())
	}
	out.Reset()
	runCLI(context.Background(), []string{"-grid", grid, "-dry-run"}, cliEnv{stdout: &out, stderr: &out,
		getenv: func(k string) string { return map[string]string{"GEKC_DATA": "/from/env"}[k] }, dir: sub})
	if !strings.Contains(out.String(), "data /from/env") {
		t.Errorf("GEKC_DATA ignored:\n%s", out.String())
	}
}

func TestUnnamedGridRunFromItsCopy(t *testing.T) {
	fx := newSweepFixture(t, strings.Replace(sweeptest.ToyGrid, "name = \"toy\"\n", "", 1))
	fake := newFake()
	if code, _, stderr := runInProcess(t, context.Background(), fake, fx.args("-only", "0")...); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	md, _ := os.ReadFile(filepath.Join(fx.out, resultsdir.ResultsMDName))
	if !strings.HasPrefix(string(md), "# Results: toy\n") {
		t.Errorf("title from the file name: %.40q", md)
	}
	// As a SLURM task runs it: from the copy in the results directory.
	copyArgs := []string{"-grid", filepath.Join(fx.out, resultsdir.GridCopyName), "-data", fx.data, "-out", fx.out, "-only", "1"}
	if code, _, stderr := runInProcess(t, context.Background(), fake, copyArgs...); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	md, _ = os.ReadFile(filepath.Join(fx.out, resultsdir.ResultsMDName))
	if !strings.HasPrefix(string(md), "# Results: out\n") {
		t.Errorf("title when run from the copy: %.40q", md)
	}
	_, _, stderr := runInProcess(t, context.Background(), fake, fx.args("-only", "0-2", "-samples", "5")...)
	if !strings.Contains(stderr, "-samples applies to runs trained now; the 2 runs") {
		t.Errorf("no note on -samples and finished runs: %s", stderr)
	}
}

// -memory budgets the runs whose grid says nothing: the dry run's estimate
// shows it, and a value that is no amount of memory is a usage error.
func TestMemoryFlag(t *testing.T) {
	fx := newSweepFixture(t, sweeptest.ToyGrid)
	for _, split := range []string{"train.txt", "valid.txt", "test.txt"} {
		data, err := os.ReadFile(filepath.Join("..", "data", "nations", split))
		must(t, err)
		must(t, os.WriteFile(filepath.Join(fx.data, "toy", split), data, 0o644))
	}
	code, stdout, stderr := runInProcess(t, context.Background(), newFake(), fx.args("-dry-run", "-memory", "3GiB")...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "  3 GiB  ") {
		t.Errorf("no 3 GiB budget in the estimate:\n%s", stdout)
	}
	code, _, stderr = runInProcess(t, context.Background(), newFake(), fx.args("-dry-run", "-memory", "lots")...)
	if code != exitUsage || !strings.Contains(stderr, `-memory: memory: "lots" is not an amount of memory`) {
		t.Errorf("-memory lots: exit %d, %s", code, stderr)
	}
}

// -dry-run -format json lists one run a line for scripts: index, ID, block,
// line, processes and state; -format without -dry-run, or another format,
// is a usage error.
func TestDryRunJSON(t *testing.T) {
	fx := newSweepFixture(t, sweeptest.ToyGrid)
	ids := fx.runIDs(t)
	fake := newFake()
	runInProcess(t, context.Background(), fake, fx.args("-only", "1")...)
	code, stdout, stderr := runInProcess(t, context.Background(), fake, fx.args("-dry-run", "-format", "json")...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != len(ids) {
		t.Fatalf("%d lines for %d runs:\n%s", len(lines), len(ids), stdout)
	}
	for i, l := range lines {
		var r sweep.RunJSON
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("line %d %q: %v", i, l, err)
		}
		want := "pending"
		if i == 1 {
			want = "finished"
		}
		if r.Index != i || r.ID != ids[i] || r.Processes != 1 || r.Line <= 0 || !strings.HasPrefix(r.Block, "[[sweep]] block") || r.Status != want {
			t.Errorf("line %d: %+v", i, r)
		}
	}
	for _, args := range [][]string{{"-format", "json"}, {"-dry-run", "-format", "yaml"}} {
		if code, _, stderr := runInProcess(t, context.Background(), fake, fx.args(args...)...); code != exitUsage || !strings.Contains(stderr, "-format") {
			t.Errorf("%v: exit %d, %s", args, code, stderr)
		}
	}
}

// A sweep writes no results into a data set's directory.
func TestSweepRefusesADataSetAsOut(t *testing.T) {
	fx := newSweepFixture(t, sweeptest.ToyGrid)
	data := filepath.Join(t.TempDir(), "some-data-set")
	must(t, os.MkdirAll(data, 0o755))
	must(t, os.WriteFile(filepath.Join(data, "train.txt"), []byte("a\tr\tb\n"), 0o644))
	entries, err := os.ReadDir(data)
	must(t, err)
	code, _, stderr := runInProcess(t, context.Background(), newFake(), "-grid", fx.grid, "-data", fx.data, "-out", data)
	if code != exitUsage || !strings.Contains(stderr, "is a data set") {
		t.Errorf("exit %d: %s", code, stderr)
	}
	after, err := os.ReadDir(data)
	must(t, err)
	if len(after) != len(entries) {
		t.Errorf("the data set's directory holds %d entries, had %d", len(after), len(entries))
	}
}
