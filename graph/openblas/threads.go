package openblas

/*
// Weak, as in fpmode_amd64.c: with another BLAS linked they are absent and
// its own threading is left alone.
extern void openblas_set_num_threads(int) __attribute__((weak));
extern int openblas_get_num_threads(void) __attribute__((weak));

static void gekc_set_threads(int n) {
	if (openblas_set_num_threads) openblas_set_num_threads(n);
}
static int gekc_get_threads(void) {
	return openblas_get_num_threads ? openblas_get_num_threads() : -1;
}
*/
import "C"

import (
	"os"
	"runtime"
)

// OpenBLAS starts a thread for every core the process may run on, whatever
// GOMAXPROCS says, so a run given one core by GOMAXPROCS=1 still computed
// its products on two threads, and beside another job each threaded call
// waited for the busy core. Unless the user sets OpenBLAS's own variables,
// its threads follow GOMAXPROCS (at most one a core: more would only spin):
// one knob for both. Read once, at start; a later runtime.GOMAXPROCS call
// leaves OpenBLAS as it was.
func init() {
	for _, v := range []string{"OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS"} {
		if os.Getenv(v) != "" {
			return
		}
	}
	C.gekc_set_threads(C.int(min(runtime.GOMAXPROCS(0), runtime.NumCPU())))
}

// threads returns the number of threads OpenBLAS computes on (-1 without
// OpenBLAS).
func threads() int { return int(C.gekc_get_threads()) }

// Threads is the number of threads a level-3 product computes on
// (graph.BLASThreads asks it).
func (levelThree) Threads() int { return threads() }
