package main

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// shardGrid trains a squared and a non-negative model by PLL and MLE on
// Nations, in float64, so that a sharded run must equal the one-process
// run to summation order.
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
`

// TestShardedCommandMatchesOneProcess builds bin/gekc-mpi as make mpi does
// and trains shardGrid with it alone and under mpirun -np 2 and 3: each
// run's record (every epoch's loss and validation metrics, the test
// metrics) equals the one-process run's within 1e-9, and says it was
// sharded. GEKC_MPI=off skips it, saying so; without mpirun it fails.
func TestShardedCommandMatchesOneProcess(t *testing.T) {
	if os.Getenv("GEKC_MPI") == "off" {
		t.Skip("GEKC_MPI=off: the MPI tests are switched off")
	}
	if testing.Short() {
		t.Skip("-short: builds against MPI and launches mpirun")
	}
	mpirun, err := exec.LookPath("mpirun")
	if err != nil {
		t.Fatal("mpirun not found: install OpenMPI (scripts/deps does), or set GEKC_MPI=off")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "gekc-mpi")
	build := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-tags", "mpi", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build -tags mpi: %v\n%s", err, out)
	}
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
		cmd.Env = append(os.Environ(), "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
			"OMPI_MCA_btl_vader_single_copy_mechanism=none")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("-np %d: %v\n%s", np, err, b)
		}
		return out
	}
	one := train(1)
	ids, err := os.ReadDir(filepath.Join(one, "runs"))
	must(t, err)
	if len(ids) != 4 {
		t.Fatalf("%d runs trained, want 4", len(ids))
	}
	for _, np := range []int{2, 3} {
		out := train(np)
		for _, id := range ids {
			want, err := readRecord(filepath.Join(one, "runs", id.Name(), "metrics.json"))
			must(t, err)
			got, err := readRecord(filepath.Join(out, "runs", id.Name(), "metrics.json"))
			must(t, err)
			name := fmt.Sprintf("-np %d %s", np, id.Name())
			if !strings.Contains(strings.Join(got.Notes, "\n"), fmt.Sprintf("sharded over %d processes", np)) {
				t.Errorf("%s: notes %q do not say it was sharded", name, got.Notes)
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
		}
	}
}

func within(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }
