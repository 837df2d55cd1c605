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

// OpenBLAS starts as many threads as the machine has cores, whatever
// GOMAXPROCS says, so a run given one core (GOMAXPROCS=1, or taskset, which
// Go reads into GOMAXPROCS) still computed its products on two threads, and
// beside another job each threaded call waited for the busy core. Unless
// the user sets OpenBLAS's own variables, its threads follow GOMAXPROCS: one
// knob for both.
func init() {
	for _, v := range []string{"OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS"} {
		if os.Getenv(v) != "" {
			return
		}
	}
	C.gekc_set_threads(C.int(runtime.GOMAXPROCS(0)))
}

// threads returns the number of threads OpenBLAS computes on (-1 without
// OpenBLAS).
func threads() int { return int(C.gekc_get_threads()) }
