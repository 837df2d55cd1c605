//go:build mpi

package mpi

/*
#cgo pkg-config: ompi-c
#include <mpi.h>
#include <stdlib.h>

// MPI's handles are macros or link-time objects; C wrappers give cgo names.
static MPI_Comm world(void) { return MPI_COMM_WORLD; }
static MPI_Datatype f32(void) { return MPI_FLOAT; }
static MPI_Datatype f64(void) { return MPI_DOUBLE; }
static MPI_Datatype i64(void) { return MPI_INT64_T; }
static MPI_Datatype byteType(void) { return MPI_BYTE; }
static MPI_Op opSum(void) { return MPI_SUM; }
static MPI_Op opMax(void) { return MPI_MAX; }

// MPI_IN_PLACE is (void *) 1 in OpenMPI: held in a Go frame it is a
// pointer-typed value the runtime rejects when it moves the stack
// ("invalid pointer found on stack"), so it never leaves C.
static int allreduceInPlace(void *buf, int n, MPI_Datatype dt, MPI_Op op) {
	return MPI_Allreduce(MPI_IN_PLACE, buf, n, dt, op, MPI_COMM_WORLD);
}
static int reduceInPlaceAtRoot(void *buf, int n, MPI_Datatype dt, MPI_Op op) {
	return MPI_Reduce(MPI_IN_PLACE, buf, n, dt, op, 0, MPI_COMM_WORLD);
}

static int initSerialized(int *provided) {
	int rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, provided);
	if (rc != MPI_SUCCESS) return rc;
	return MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// Enabled reports whether this binary calls a real MPI library.
const Enabled = true

// Init initialises MPI (MPI_THREAD_SERIALIZED) and makes errors on
// MPI_COMM_WORLD return rather than abort.
func Init() error {
	var provided C.int
	if err := check("MPI_Init_thread", C.initSerialized(&provided)); err != nil {
		return err
	}
	if provided < C.MPI_THREAD_SERIALIZED {
		return fmt.Errorf("mpi: the MPI library provides thread level %d, gekc needs MPI_THREAD_SERIALIZED", int(provided))
	}
	return nil
}

// Finalize shuts MPI down; call it once, after the last collective.
func Finalize() error { return check("MPI_Finalize", C.MPI_Finalize()) }

// Abort ends every process of the job with the given exit code.
func Abort(code int) { C.MPI_Abort(C.world(), C.int(code)) }

// World is MPI_COMM_WORLD.
type World struct{}

// Rank returns this process's rank.
func (World) Rank() int {
	var r C.int
	C.MPI_Comm_rank(C.world(), &r)
	return int(r)
}

// Size returns the number of processes.
func (World) Size() int {
	var n C.int
	C.MPI_Comm_size(C.world(), &n)
	return int(n)
}

// Barrier waits for every process.
func (World) Barrier() error { return check("MPI_Barrier", C.MPI_Barrier(C.world())) }

// SumFloat32 replaces x on every process by its elementwise sum over the
// processes. The sum is reduced on rank 0 and broadcast, so every process
// holds the same bits (replicated parameters stay identical).
func (w World) SumFloat32(x []float32) error { return w.sum(ptr(x), len(x), C.f32()) }

// SumFloat64 is SumFloat32 for float64.
func (w World) SumFloat64(x []float64) error { return w.sum(ptr(x), len(x), C.f64()) }

// SumInt64 is SumFloat32 for int64 (exact: any order gives the same sum).
func (World) SumInt64(x []int64) error {
	if len(x) == 0 {
		return nil
	}
	return check("MPI_Allreduce", C.allreduceInPlace(ptr(x), C.int(len(x)), C.i64(), C.opSum()))
}

// MaxInt64 replaces x by its elementwise maximum over the processes.
func (World) MaxInt64(x []int64) error {
	if len(x) == 0 {
		return nil
	}
	return check("MPI_Allreduce", C.allreduceInPlace(ptr(x), C.int(len(x)), C.i64(), C.opMax()))
}

func (w World) sum(p unsafe.Pointer, n int, dt C.MPI_Datatype) error {
	if n == 0 {
		return nil
	}
	if err := countOK(n); err != nil {
		return err
	}
	var rc C.int
	if w.Rank() == 0 {
		rc = C.reduceInPlaceAtRoot(p, C.int(n), dt, C.opSum())
	} else {
		rc = C.MPI_Reduce(p, nil, C.int(n), dt, C.opSum(), 0, C.world())
	}
	if err := check("MPI_Reduce", rc); err != nil {
		return err
	}
	return check("MPI_Bcast", C.MPI_Bcast(p, C.int(n), dt, 0, C.world()))
}

// Broadcast returns rank 0's b on every process: its length, then its
// bytes.
func (w World) Broadcast(b []byte) ([]byte, error) {
	n := []int64{0}
	if w.Rank() == 0 {
		n[0] = int64(len(b))
	}
	if err := check("MPI_Bcast", C.MPI_Bcast(ptr(n), 1, C.i64(), 0, C.world())); err != nil {
		return nil, err
	}
	if err := countOK(int(n[0])); err != nil {
		return nil, err
	}
	out := make([]byte, n[0])
	if w.Rank() == 0 {
		copy(out, b)
	}
	if n[0] == 0 {
		return out, nil
	}
	return out, check("MPI_Bcast", C.MPI_Bcast(ptr(out), C.int(n[0]), C.byteType(), 0, C.world()))
}

// AlltoallvFloat32 sends send[off_q : off_q+sendCounts[q]] to each process
// q (offsets are running sums of the counts) and receives recvCounts[q]
// values from each q into recv, in rank order.
func (World) AlltoallvFloat32(send []float32, sendCounts []int, recv []float32, recvCounts []int) error {
	return alltoallv(ptr(send), sendCounts, ptr(recv), recvCounts, C.f32())
}

// AlltoallvFloat64 is AlltoallvFloat32 for float64.
func (World) AlltoallvFloat64(send []float64, sendCounts []int, recv []float64, recvCounts []int) error {
	return alltoallv(ptr(send), sendCounts, ptr(recv), recvCounts, C.f64())
}

// AllgathervFloat64 gathers every process's send into recv, in rank
// order; counts[q] is process q's length in units of unit values, which
// MPI sees as one contiguous type: a table of more than 2³¹ values gathers
// by rows.
func (World) AllgathervFloat64(send []float64, recv []float64, counts []int, unit int) error {
	return allgatherv(ptr(send), len(send), ptr(recv), counts, unit, C.f64())
}

// AllgathervFloat32 is AllgathervFloat64 for float32.
func (World) AllgathervFloat32(send []float32, recv []float32, counts []int, unit int) error {
	return allgatherv(ptr(send), len(send), ptr(recv), counts, unit, C.f32())
}

func allgatherv(send unsafe.Pointer, n int, recv unsafe.Pointer, counts []int, unit int, dt C.MPI_Datatype) error {
	if unit < 1 || n%unit != 0 {
		return fmt.Errorf("mpi: gathering %d values in units of %d", n, unit)
	}
	if unit > 1 {
		var rows C.MPI_Datatype
		if err := check("MPI_Type_contiguous", C.MPI_Type_contiguous(C.int(unit), dt, &rows)); err != nil {
			return err
		}
		defer C.MPI_Type_free(&rows)
		if err := check("MPI_Type_commit", C.MPI_Type_commit(&rows)); err != nil {
			return err
		}
		dt = rows
	}
	cs, ds, err := countsAndDispls(counts)
	if err != nil {
		return err
	}
	defer C.free(unsafe.Pointer(cs))
	return check("MPI_Allgatherv", C.MPI_Allgatherv(send, C.int(n/unit), dt, recv, cs, ds, dt, C.world()))
}

func alltoallv(send unsafe.Pointer, sendCounts []int, recv unsafe.Pointer, recvCounts []int, dt C.MPI_Datatype) error {
	sc, sd, err := countsAndDispls(sendCounts)
	if err != nil {
		return err
	}
	defer C.free(unsafe.Pointer(sc))
	rc, rd, err := countsAndDispls(recvCounts)
	if err != nil {
		return err
	}
	defer C.free(unsafe.Pointer(rc))
	return check("MPI_Alltoallv", C.MPI_Alltoallv(send, sc, sd, dt, recv, rc, rd, dt, C.world()))
}

// countsAndDispls copies counts into C memory (one allocation holding the
// counts, then their displacements), for MPI's v-collectives.
func countsAndDispls(counts []int) (*C.int, *C.int, error) {
	n := len(counts)
	buf := (*[1 << 28]C.int)(C.malloc(C.size_t(2*n+1) * C.size_t(unsafe.Sizeof(C.int(0)))))[: 2*n+1 : 2*n+1]
	off := 0
	for i, c := range counts {
		if c < 0 || off+c > maxCount {
			C.free(unsafe.Pointer(&buf[0]))
			return nil, nil, fmt.Errorf("mpi: count %d at offset %d does not fit MPI's int", c, off)
		}
		buf[i], buf[n+i] = C.int(c), C.int(off)
		off += c
	}
	return &buf[0], &buf[n], nil
}

// ptr returns the address of a slice's first element, or a valid dummy
// address for an empty slice (MPI reads nothing at a zero count).
func ptr[T any](x []T) unsafe.Pointer {
	if len(x) == 0 {
		return unsafe.Pointer(&dummy)
	}
	return unsafe.Pointer(&x[0])
}

var dummy [8]byte

// check turns an MPI return code into an error naming the call.
func check(call string, rc C.int) error {
	if rc == C.MPI_SUCCESS {
		return nil
	}
	var buf [C.MPI_MAX_ERROR_STRING]C.char
	var n C.int
	C.MPI_Error_string(rc, &buf[0], &n)
	return fmt.Errorf("mpi: %s: %s (error %d)", call, C.GoStringN(&buf[0], n), int(rc))
}
