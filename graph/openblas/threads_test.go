package openblas

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// OpenBLAS's threads follow GOMAXPROCS unless OpenBLAS's own variable is
// set; checked in a child process, since both are read at start.
func TestThreadsFollowGOMAXPROCS(t *testing.T) {
	if os.Getenv("GEKC_THREADS_CHILD") != "" {
		fmt.Printf("threads=%d\n", threads())
		return
	}
	for _, c := range []struct {
		env  []string
		want int
	}{
		{[]string{"GOMAXPROCS=1"}, 1},
		{[]string{"GOMAXPROCS=2", "OPENBLAS_NUM_THREADS=1"}, 1}, // OpenBLAS's own setting wins
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestThreadsFollowGOMAXPROCS$")
		for _, kv := range os.Environ() {
			switch strings.SplitN(kv, "=", 2)[0] {
			case "GOMAXPROCS", "OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS":
				continue
			}
			cmd.Env = append(cmd.Env, kv)
		}
		cmd.Env = append(cmd.Env, "GEKC_THREADS_CHILD=1")
		cmd.Env = append(cmd.Env, c.env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %v\n%s", c.env, err, out)
		}
		_, after, ok := strings.Cut(string(out), "threads=")
		got, _ := strconv.Atoi(strings.Fields(after + " x")[0])
		if !ok || got != c.want {
			t.Errorf("%v: OpenBLAS threads %d, want %d\n%s", c.env, got, c.want, out)
		}
	}
}
