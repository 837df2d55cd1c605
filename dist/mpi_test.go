package dist_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	"gekc/dist/mpi/mpitest"
)

// mpiCase is a line of mpicheck's output.
type mpiCase struct {
	Model, Objective, Dtype string
	Processes, Steps        int
	LossRel, ParamRel       float64
	Tolerance               float64
}

// TestShardedUnderMPIRun builds mpicheck against the machine's MPI and runs
// it under mpirun -np 1, 2 and 3 (oversubscribed): the sharded training of
// six tiny models agrees with one process's in every loss and parameter.
// Without OpenMPI (scripts/deps installs it) the test fails; GEKC_MPI=off
// skips it, saying so.
func TestShardedUnderMPIRun(t *testing.T) {
	mpirun := mpitest.Mpirun(t)
	bin := filepath.Join(t.TempDir(), "mpicheck")
	build := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-tags", "mpi", "-o", bin, "gekc/dist/internal/mpicheck")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build -tags mpi: %v\n%s", err, out)
	}
	for _, np := range []int{1, 2, 3} {
		cmd := exec.Command(mpirun, "--oversubscribe", "-np", strconv.Itoa(np), bin, "-steps", "12")
		cmd.Env = append(os.Environ(), mpitest.Env...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("mpirun -np %d: %v\n%s%s", np, err, out, stderr.Bytes())
		}
		n := 0
		for sc := bufio.NewScanner(bytes.NewReader(out)); sc.Scan(); n++ {
			var c mpiCase
			if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
				t.Fatalf("-np %d: line %q: %v", np, sc.Text(), err)
			}
			if c.Processes != np || c.Steps != 12 {
				t.Errorf("-np %d: %+v ran on %d processes", np, c, c.Processes)
			}
			if !(c.LossRel <= c.Tolerance) || !(c.ParamRel <= 10*c.Tolerance) {
				t.Errorf("-np %d: %s by %s in %s: losses differ by %.3g, parameters by %.3g (tolerance %g)",
					np, c.Model, c.Objective, c.Dtype, c.LossRel, c.ParamRel, c.Tolerance)
			}
		}
		if n != 6 {
			t.Errorf("-np %d: %d cases reported, want 6:\n%s", np, n, out)
		}
	}
}
