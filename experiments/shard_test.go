package main

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"gekc/dist/mpi/mpitest"
	"gekc/resultsdir"

	"github.com/sbinet/npyio/npz"
)

// shardGrid trains a squared and a non-negative model by PLL and MLE, and
// an energy-based one by PLL, on Nations, in float64, so that a sharded
// run must equal the one-process run to summation order.
const shardGrid = `name = "sharded"
[defaults]
dataset = "nations"
rank = 8
batch_size = 64
learning_rate = 5e-3
epochs = 4
patience = 0
seed = 1
dtype = "float64"

[[sweep]]
model = ["complex2", "cp+"]
objective = ["pll", "mle"]

[[sweep]]
model = "complex"
objective = "pll"
n3 = 0.01
`

// TestShardedCommandMatchesOneProcess builds bin/gekc-mpi as make mpi does
// and trains shardGrid with it alone and under mpirun -np 2 and 3: each
// run's record (every epoch's loss and validation metrics, the test
// metrics) equals the one-process run's within 1e-9, and says it was
// sharded. GEKC_MPI=off skips it, saying so; without mpirun it fails.
func TestShardedCommandMatchesOneProcess(t *testing.T) {
	bin, mpirun := buildMPI(t)
	dir := t.TempDir()
	grid := filepath.Join(dir, "sharded.toml")
	must(t, os.WriteFile(grid, []byte(shardGrid), 0o644))
	data := shippedData(t, "nations")
	train := func(np int) string {
		out := filepath.Join(dir, "out"+strconv.Itoa(np))
		args := []string{"-grid", grid, "-data", data, "-out", out, "-q"}
		cmd := exec.Command(bin, args...)
		if np > 1 {
			cmd = exec.Command(mpirun, append([]string{"--oversubscribe", "-np", strconv.Itoa(np), bin}, args...)...)
		}
		cmd.Env = append(os.Environ(), mpitest.Env...)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("-np %d: %v\n%s", np, err, b)
		}
		return out
	}
	one := train(1)
	ids, err := os.ReadDir(filepath.Join(one, "runs"))
	must(t, err)
	if len(ids) != 5 {
		t.Fatalf("%d runs trained, want 5", len(ids))
	}
	for _, np := range []int{2, 3} {
		out := train(np)
		for _, id := range ids {
			name := fmt.Sprintf("-np %d %s", np, id.Name())
			got := sameRecords(t, name, filepath.Join(one, "runs", id.Name()), filepath.Join(out, "runs", id.Name()),
				fmt.Sprintf("sharded over %d processes", np))
			if len(got.Processes) != np {
				t.Errorf("%s: %d processes recorded", name, len(got.Processes))
			}
			sameCheckpoints(t, name, filepath.Join(one, "runs", id.Name(), "checkpoint.npz"), filepath.Join(out, "runs", id.Name(), "checkpoint.npz"))
		}
	}
}

// sameRecords compares a run's record with the one-process run's: every
// epoch's loss and validation metrics and the test metrics within 1e-9;
// its notes must hold note.
func sameRecords(t *testing.T, name, oneDir, dir, note string) *resultsdir.Record {
	t.Helper()
	want, err := readRecord(filepath.Join(oneDir, "metrics.json"))
	must(t, err)
	got, err := readRecord(filepath.Join(dir, "metrics.json"))
	must(t, err)
	if !strings.Contains(strings.Join(got.Notes, "\n"), note) {
		t.Errorf("%s: notes %q do not say %q", name, got.Notes, note)
	}
	if want.Processes != nil {
		t.Errorf("%s: the one-process run records processes %+v", name, want.Processes)
	}
	for q, p := range got.Processes {
		if p.Rank != q || p.PeakRSSBytes <= 0 || p.Steps <= 0 || p.StepSeconds <= 0 || !(p.CommShare > 0 && p.CommShare < 1) || p.SentBytesPerStep <= 0 {
			t.Errorf("%s: process %d's account %+v", name, q, p)
		}
	}
	if len(got.Epochs) != len(want.Epochs) || got.BestEpoch != want.BestEpoch || got.Status != want.Status {
		t.Fatalf("%s: %s, %d epochs, best %d; alone: %s, %d, %d", name, got.Status, len(got.Epochs), got.BestEpoch,
			want.Status, len(want.Epochs), want.BestEpoch)
	}
	for i, e := range got.Epochs {
		w := want.Epochs[i]
		if !within(e.TrainLoss, w.TrainLoss) {
			t.Errorf("%s: epoch %d loss %.12g, alone %.12g", name, e.Epoch, e.TrainLoss, w.TrainLoss)
		}
		for k, v := range w.Valid {
			if !within(e.Valid[k], v) {
				t.Errorf("%s: epoch %d valid %s %.12g, alone %.12g", name, e.Epoch, k, e.Valid[k], v)
			}
		}
	}
	for k, v := range want.Test {
		if k != "step_ms" && !within(float64(got.Test[k]), float64(v)) {
			t.Errorf("%s: test %s %.12g, alone %.12g", name, k, got.Test[k], v)
		}
	}
	return got
}

// sameCheckpoints compares a sharded run's checkpoint, its entity rows
// gathered from every process as process 0 wrote it, with the
// one-process run's: the same arrays, shapes and values within 1e-9.
func sameCheckpoints(t *testing.T, name, want, got string) {
	t.Helper()
	w, err := npz.Open(want)
	must(t, err)
	defer w.Close()
	g, err := npz.Open(got)
	must(t, err)
	defer g.Close()
	if !slices.Equal(g.Keys(), w.Keys()) {
		t.Fatalf("%s: checkpoint arrays %v, alone %v", name, g.Keys(), w.Keys())
	}
	for _, k := range w.Keys() {
		var a, b []float64
		must(t, w.Read(k, &a))
		must(t, g.Read(k, &b))
		if !slices.Equal(g.Header(k).Descr.Shape, w.Header(k).Descr.Shape) || len(a) != len(b) {
			t.Fatalf("%s: checkpoint %s has shape %v, alone %v", name, k, g.Header(k).Descr.Shape, w.Header(k).Descr.Shape)
		}
		for i := range a {
			if !within(b[i], a[i]) {
				t.Errorf("%s: checkpoint %s[%d] = %.12g, alone %.12g", name, k, i, b[i], a[i])
				break
			}
		}
	}
}

func within(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

var mpiBuild struct {
	once     sync.Once
	dir, err string
}

// removeMPIBuild removes what buildMPI built (TestMain calls it).
func removeMPIBuild() {
	if mpiBuild.dir != "" {
		os.RemoveAll(mpiBuild.dir)
	}
}

// buildMPI builds bin/gekc-mpi as make mpi does, once per test binary, and
// finds mpirun. GEKC_MPI=off skips the calling test, saying so; without
// mpirun it fails.
func buildMPI(t *testing.T) (bin, mpirun string) {
	t.Helper()
	mpirun = mpitest.Mpirun(t)
	mpiBuild.once.Do(func() {
		dir, err := os.MkdirTemp("", "gekc-mpi")
		if err != nil {
			mpiBuild.err = err.Error()
			return
		}
		mpiBuild.dir = dir
		build := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-tags", "mpi", "-o", filepath.Join(dir, "gekc-mpi"), ".")
		if out, err := build.CombinedOutput(); err != nil {
			mpiBuild.err = fmt.Sprintf("go build -tags mpi: %v\n%s", err, out)
		}
	})
	if mpiBuild.err != "" {
		t.Fatal(mpiBuild.err)
	}
	return filepath.Join(mpiBuild.dir, "gekc-mpi"), mpirun
}

// TestShardedCommandStopsAndResumesWithAnotherCount: mpirun -np 2 is sent
// SIGTERM once the run has saved a state; every process stops at the same
// step and process 0 saves the state there. Launched again under -np 3,
// the run resumes from it and ends as the uninterrupted one-process run.
func TestShardedCommandStopsAndResumesWithAnotherCount(t *testing.T) {
	bin, mpirun := buildMPI(t)
	dir := t.TempDir()
	grid := filepath.Join(dir, "long.toml")
	must(t, os.WriteFile(grid, []byte(strings.Replace(strings.Replace(shardGrid, "epochs = 4", "epochs = 400", 1),
		`model = ["complex2", "cp+"]`, `model = "complex2"`, 1)), 0o644))
	data := shippedData(t, "nations")
	args := func(out string) []string {
		return []string{"-grid", grid, "-data", data, "-out", out, "-q", "-only", "0"}
	}
	one := filepath.Join(dir, "one")
	if b, err := exec.Command(bin, args(one)...).CombinedOutput(); err != nil {
		t.Fatalf("alone: %v\n%s", err, b)
	}
	runs, err := os.ReadDir(filepath.Join(one, "runs"))
	must(t, err)
	id := runs[0].Name()

	out := filepath.Join(dir, "sharded")
	cmd := exec.Command(mpirun, append([]string{"--oversubscribe", "-np", "2", bin}, append(args(out), "-state-every", "0")...)...)
	cmd.Env = append(os.Environ(), mpitest.Env...)
	var log strings.Builder
	cmd.Stdout, cmd.Stderr = &log, &log
	must(t, cmd.Start())
	waitFor(t, 60*time.Second, "the first resume state", func() bool {
		return fileExists(filepath.Join(out, "runs", id, "state.npz"))
	})
	must(t, cmd.Process.Signal(syscall.SIGTERM))
	if err := cmd.Wait(); err == nil || !strings.Contains(log.String(), "interrupted") {
		t.Fatalf("mpirun -np 2 after SIGTERM: %v, want the sweep interrupted:\n%s", err, log.String())
	}
	again := exec.Command(mpirun, append([]string{"--oversubscribe", "-np", "3", bin}, args(out)...)...)
	again.Env = append(os.Environ(), mpitest.Env...)
	if b, err := again.CombinedOutput(); err != nil {
		t.Fatalf("-np 3: %v\n%s", err, b)
	}
	sameRecords(t, "stopped on 2, resumed on 3", filepath.Join(one, "runs", id), filepath.Join(out, "runs", id), "resumed ")
}
