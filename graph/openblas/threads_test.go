package openblas

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"gekc/graph"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	G "gorgonia.org/gorgonia"
)

// Importing the package makes levelThree the BLAS of Gorgonia and of
// gonum's blas64 and blas32, which graph's own products use.
func TestImportSelectsLevelThree(t *testing.T) {
	for name, impl := range map[string]any{"Gorgonia": G.WhichBLAS(), "blas64": blas64.Implementation(), "blas32": blas32.Implementation()} {
		if _, ok := impl.(levelThree); !ok {
			t.Errorf("%s's BLAS is %T, want levelThree", name, impl)
		}
	}
}

// inChild runs the test named test again in a child process with env added
// to the environment (OpenBLAS's and Go's thread variables removed first:
// both are read at start) and returns what it printed. A test calls it
// unless childEnv is set, in which case it is the child.
func inChild(t *testing.T, test string, env ...string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.v")
	for _, kv := range os.Environ() {
		switch strings.SplitN(kv, "=", 2)[0] {
		case "GOMAXPROCS", "OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS":
			continue
		}
		cmd.Env = append(cmd.Env, kv)
	}
	cmd.Env = append(append(cmd.Env, childEnv+"=1"), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %v\n%s", env, err, out)
	}
	return string(out)
}

const childEnv = "GEKC_OPENBLAS_CHILD"

// OpenBLAS's threads follow GOMAXPROCS unless OpenBLAS's own variable is
// set.
func TestThreadsFollowGOMAXPROCS(t *testing.T) {
	if os.Getenv(childEnv) != "" {
		fmt.Printf("threads=%d\n", graph.BLASThreads()) // asks levelThree.Threads
		return
	}
	for _, c := range []struct {
		env  []string
		want int
	}{
		{[]string{"GOMAXPROCS=1"}, 1},
		{[]string{"GOMAXPROCS=2", "OPENBLAS_NUM_THREADS=1"}, 1}, // OpenBLAS's own setting wins
		{[]string{"GOMAXPROCS=1", "OPENBLAS_NUM_THREADS=2"}, 2},
	} {
		out := inChild(t, "TestThreadsFollowGOMAXPROCS", c.env...)
		_, after, ok := strings.Cut(out, "threads=")
		got, _ := strconv.Atoi(strings.Fields(after + " x")[0])
		if !ok || got != c.want {
			t.Errorf("%v: OpenBLAS threads %d, want %d\n%s", c.env, got, c.want, out)
		}
	}
}

// OpenBLAS's worker threads flush subnormals too: a product of 1e-20s
// (1e-40, subnormal) large enough to be split, on two OpenBLAS threads
// whatever GOMAXPROCS the tests run with.
func TestSubnormalsFlushedInBLASThreads(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skipf("the floating-point mode is set on amd64 only (GOARCH %s)", runtime.GOARCH)
	}
	if os.Getenv(childEnv) == "" {
		inChild(t, "TestSubnormalsFlushedInBLASThreads", "OPENBLAS_NUM_THREADS=2")
		return
	}
	if n := threads(); n != 2 {
		t.Fatalf("OpenBLAS computes on %d threads, want 2", n)
	}
	if !graph.SubnormalsFlushed() {
		t.Fatal("the main thread does not flush subnormals")
	}
	const n = 256
	a := make([]float32, n*n)
	for i := range a {
		a[i] = 1e-20
	}
	c := make([]float32, n*n)
	G.WhichBLAS().Sgemm(blas.NoTrans, blas.NoTrans, n, n, n, 1, a, n, a, n, 0, c, n)
	for i, x := range c {
		if x != 0 {
			t.Fatalf("entry %d of a product of 1e-20s is %v, not flushed", i, x)
		}
	}
}
