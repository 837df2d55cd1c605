package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"gekc/resultsdir"
	"gekc/sweep/sweeptest"
	"gekc/train"
)

// These tests run the command as real processes (the test binary
// re-executed, see TestMain) and kill them for real.

// callsIn counts the lines of the fake trainer's call log: how many times
// each run was started, across processes.
func callsIn(t *testing.T, path string) map[string]int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	calls := map[string]int{}
	for _, line := range strings.Fields(string(data)) {
		calls[line]++
	}
	return calls
}

func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

func TestProcessesShareOneResultsDirectory(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	grid := strings.Replace(sweeptest.ToyGrid, "seeds = 4", "seeds = 16", 1) // 24 runs
	fx := newSweepFixture(t, grid)
	ids := fx.runIDs(t)
	calls := filepath.Join(fx.dir, "calls.log")
	env := []string{fakeSleepEnv + "=10ms", fakeCallsEnv + "=" + calls}

	const processes = 4
	var cmds []*exec.Cmd
	var logs []*bytes.Buffer
	for range processes {
		cmd := helperCommand(t, env, fx.args("-j", "2")...)
		var log bytes.Buffer
		cmd.Stdout, cmd.Stderr = &log, &log
		must(t, cmd.Start())
		cmds, logs = append(cmds, cmd), append(logs, &log)
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("process %d: %v\n%s", i, err, logs[i])
		}
	}
	sweeptest.EachRowOnce(t, fx.out, ids)
	got := callsIn(t, calls)
	for _, id := range ids {
		if got[id] != 1 {
			t.Errorf("%s trained %d times", id, got[id])
		}
	}
	if len(got) != len(ids) {
		t.Errorf("%d distinct runs trained, want %d", len(got), len(ids))
	}
	for _, id := range ids {
		if s := recordStatus(t, fx.out, id); s != train.Finished {
			t.Errorf("%s: %s", id, s)
		}
	}
	md, err := os.ReadFile(filepath.Join(fx.out, resultsdir.ResultsMDName))
	must(t, err)
	if !strings.Contains(string(md), "24 runs") {
		t.Errorf("results.md does not count every run:\n%s", md)
	}
	sweeptest.NoTempFiles(t, fx.dir)
}

func TestKillBetweenMetricsAndResultsRow(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	fx := newSweepFixture(t, sweeptest.ToyGrid)
	ids := fx.runIDs(t)
	calls := filepath.Join(fx.dir, "calls.log")
	cmd := helperCommand(t, []string{fakeSleepEnv + "=150ms", fakeCallsEnv + "=" + calls}, fx.args()...)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	must(t, cmd.Start())
	defer cmd.Process.Kill()

	first := filepath.Join(fx.out, "runs", ids[0])
	waitFor(t, 10*time.Second, "the first run to start", func() bool { return fileExists(filepath.Join(first, "config.toml")) })
	// Holding results.lock stops the process right after it writes the
	// first run's metrics.json, before that run's row: the moment to kill.
	lock, err := waitLock(filepath.Join(fx.out, "results.lock"))
	must(t, err)
	waitFor(t, 10*time.Second, "the first run's metrics.json", func() bool {
		rec, err := readRecord(filepath.Join(first, "metrics.json"))
		return err == nil && rec != nil
	})
	must(t, cmd.Process.Kill())
	cmd.Wait()
	lock.unlock()
	for _, r := range readRows(t, fx.out) {
		t.Errorf("row written before the kill: %v", r["id"])
	}

	restart := helperCommand(t, []string{fakeCallsEnv + "=" + calls}, fx.args()...)
	if out, err := restart.CombinedOutput(); err != nil {
		t.Fatalf("restart: %v\n%s", err, out)
	}
	sweeptest.EachRowOnce(t, fx.out, ids)
	for id, n := range callsIn(t, calls) {
		if n != 1 {
			t.Errorf("%s trained %d times; a finished run must not be repeated", id, n)
		}
	}
	sweeptest.NoTempFiles(t, fx.dir)
}

func TestKillMidRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	fx := newSweepFixture(t, sweeptest.ToyGrid)
	ids := fx.runIDs(t)
	calls := filepath.Join(fx.dir, "calls.log")
	cmd := helperCommand(t, []string{fakeSleepEnv + "=40ms", fakeCallsEnv + "=" + calls}, fx.args()...)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	must(t, cmd.Start())
	defer cmd.Process.Kill()

	victim := filepath.Join(fx.out, "runs", ids[2])
	waitFor(t, 10*time.Second, "run 2 to start", func() bool { return fileExists(filepath.Join(victim, "checkpoint.npz")) })
	must(t, cmd.Process.Kill())
	cmd.Wait()
	if fileExists(filepath.Join(victim, "metrics.json")) {
		t.Fatal("run 2 finished before the kill; the test did not kill mid-run")
	}
	before := callsIn(t, calls)

	restart := helperCommand(t, []string{fakeCallsEnv + "=" + calls}, fx.args()...)
	if out, err := restart.CombinedOutput(); err != nil {
		t.Fatalf("restart: %v\n%s", err, out)
	}
	sweeptest.EachRowOnce(t, fx.out, ids)
	after := callsIn(t, calls)
	for _, id := range ids {
		want := 1
		if id == ids[2] {
			want = 2 // killed, then started from scratch
		}
		if after[id] != want {
			t.Errorf("%s trained %d times, want %d (before restart: %d)", id, after[id], want, before[id])
		}
	}
	ckpt, _ := os.ReadFile(filepath.Join(victim, "checkpoint.npz"))
	if string(ckpt) != "final "+ids[2] {
		t.Errorf("restarted run's checkpoint %q", ckpt)
	}
	sweeptest.NoTempFiles(t, fx.dir)
}

// SIGUSR1 is what a SLURM task is sent ahead of its time limit.
func TestSignalsStopGracefully(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGUSR1} {
		t.Run(sig.String(), func(t *testing.T) {
			fx := newSweepFixture(t, sweeptest.ToyGrid)
			ids := fx.runIDs(t)
			cmd := helperCommand(t, []string{fakeSleepEnv + "=10s"}, fx.args()...)
			var log bytes.Buffer
			cmd.Stdout, cmd.Stderr = &log, &log
			must(t, cmd.Start())
			defer cmd.Process.Kill()
			first := filepath.Join(fx.out, "runs", ids[0])
			waitFor(t, 10*time.Second, "the first run to start", func() bool { return fileExists(filepath.Join(first, "checkpoint.npz")) })
			must(t, cmd.Process.Signal(sig))
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				if code := exitCode(err); code != exitInterrupted {
					t.Errorf("exit %d, want %d\n%s", code, exitInterrupted, log.String())
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the process did not stop within 10s of the signal")
			}
			entries, err := os.ReadDir(first)
			must(t, err)
			for _, e := range entries {
				if e.Name() != "lock" {
					t.Errorf("interrupted run left %s", e.Name())
				}
			}
			if !strings.Contains(log.String(), "interrupted") {
				t.Errorf("no word of the interruption:\n%s", log.String())
			}
			sweeptest.NoTempFiles(t, fx.dir)
		})
	}
}
