package dist

import (
	"fmt"
	"sync"
)

// Comm is a group of processes and the collectives a sharded step uses.
// Every process of the group calls each collective in the same order;
// mpi.World is the real one, Local a group of goroutines in one process.
type Comm interface {
	Rank() int
	Size() int
	Barrier() error
	// SumFloat32 replaces x on every process by the elementwise sum over
	// the processes, the same bits on every process.
	SumFloat32(x []float32) error
	SumFloat64(x []float64) error
	SumInt64(x []int64) error
	MaxInt64(x []int64) error
	// AlltoallvFloat32 sends consecutive segments of send, sendCounts[q]
	// values to process q, and receives recvCounts[q] values from each q
	// into consecutive segments of recv, in rank order.
	AlltoallvFloat32(send []float32, sendCounts []int, recv []float32, recvCounts []int) error
	AlltoallvFloat64(send []float64, sendCounts []int, recv []float64, recvCounts []int) error
	// AllgathervFloat32 concatenates every process's send into recv in rank
	// order; counts[q] is the length of process q's send in units of unit
	// values (a table's rows, say: MPI counts and offsets are C ints, so a
	// table of more than 2³¹ values is gathered by rows).
	AllgathervFloat32(send, recv []float32, counts []int, unit int) error
	AllgathervFloat64(send, recv []float64, counts []int, unit int) error
	// Broadcast returns process 0's b on every process (the others' b is
	// ignored).
	Broadcast(b []byte) ([]byte, error)
}

// Local returns a group of n processes that are goroutines of this one:
// each Comm is used by one goroutine. It runs the sharded algorithm
// without MPI, in tests and on one machine; sums are taken in rank order.
func Local(n int) []Comm {
	g := &group{n: n, slots: make([]any, n)}
	g.cond = sync.NewCond(&g.mu)
	out := make([]Comm, n)
	for r := range out {
		out[r] = &local{g: g, rank: r}
	}
	return out
}

type group struct {
	n        int
	mu       sync.Mutex
	cond     *sync.Cond
	arrived  int
	gen      int
	slots    []any
	failures int // processes that found their call malformed in this collective
}

// barrier waits for every member; it returns whether any member reported
// a malformed call since the previous barrier.
func (g *group) barrier(failed bool) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if failed {
		g.failures++
	}
	gen := g.gen
	g.arrived++
	if g.arrived == g.n {
		g.arrived = 0
		g.gen++
		g.cond.Broadcast()
	} else {
		for gen == g.gen {
			g.cond.Wait()
		}
	}
	return g.failures > 0
}

type local struct {
	g    *group
	rank int
}

func (c *local) Rank() int { return c.rank }
func (c *local) Size() int { return c.g.n }
func (c *local) Barrier() error {
	c.g.barrier(false)
	return nil
}

// collective publishes this member's argument, runs read once every member
// has published (read must not write what others read), and then write
// once every member has read. A malformed call fails the collective on
// every member, and every later one: the group is then unusable, as an
// MPI communicator after an error.
func (c *local) collective(arg any, read func(all []any) error, write func()) error {
	c.g.slots[c.rank] = arg
	c.g.barrier(false)
	err := read(c.g.slots)
	if c.g.barrier(err != nil) {
		if err == nil {
			err = fmt.Errorf("dist: a collective failed on another process")
		}
		return err
	}
	write()
	c.g.barrier(false)
	return nil
}

func (c *local) SumFloat32(x []float32) error { return localSum(c, x) }
func (c *local) SumFloat64(x []float64) error { return localSum(c, x) }
func (c *local) SumInt64(x []int64) error     { return localSum(c, x) }

func (c *local) MaxInt64(x []int64) error {
	out := make([]int64, len(x))
	return c.collective(x, func(all []any) error {
		copy(out, x)
		for _, a := range all {
			y := a.([]int64)
			if len(y) != len(x) {
				return fmt.Errorf("dist: MaxInt64 of %d values here, %d elsewhere", len(x), len(y))
			}
			for i, v := range y {
				out[i] = max(out[i], v)
			}
		}
		return nil
	}, func() { copy(x, out) })
}

func localSum[T float32 | float64 | int64](c *local, x []T) error {
	out := make([]T, len(x))
	return c.collective(x, func(all []any) error {
		for _, a := range all {
			y := a.([]T)
			if len(y) != len(x) {
				return fmt.Errorf("dist: a sum of %d values here, %d elsewhere", len(x), len(y))
			}
			for i, v := range y {
				out[i] += v
			}
		}
		return nil
	}, func() { copy(x, out) })
}

type exchange[T any] struct {
	send   []T
	counts []int
}

func (c *local) AlltoallvFloat32(send []float32, sc []int, recv []float32, rc []int) error {
	return localAlltoallv(c, send, sc, recv, rc)
}

func (c *local) AlltoallvFloat64(send []float64, sc []int, recv []float64, rc []int) error {
	return localAlltoallv(c, send, sc, recv, rc)
}

func localAlltoallv[T any](c *local, send []T, sendCounts []int, recv []T, recvCounts []int) error {
	return c.collective(exchange[T]{send, sendCounts}, func(all []any) error {
		at := 0
		for q, a := range all {
			x := a.(exchange[T])
			off := 0
			for _, n := range x.counts[:c.rank] {
				off += n
			}
			n := x.counts[c.rank]
			if n != recvCounts[q] {
				return fmt.Errorf("dist: process %d sends %d values to %d, which expects %d", q, n, c.rank, recvCounts[q])
			}
			copy(recv[at:at+n], x.send[off:off+n])
			at += n
		}
		return nil
	}, func() {})
}

func (c *local) AllgathervFloat32(send, recv []float32, counts []int, unit int) error {
	return localAllgatherv(c, send, recv, counts, unit)
}

func (c *local) AllgathervFloat64(send, recv []float64, counts []int, unit int) error {
	return localAllgatherv(c, send, recv, counts, unit)
}

func localAllgatherv[T any](c *local, send, recv []T, counts []int, unit int) error {
	return c.collective(send, func(all []any) error {
		at := 0
		for q, a := range all {
			x := a.([]T)
			if len(x) != counts[q]*unit {
				return fmt.Errorf("dist: process %d gathers %d values, %d expected", q, len(x), counts[q]*unit)
			}
			copy(recv[at:], x)
			at += len(x)
		}
		return nil
	}, func() {})
}

func (c *local) Broadcast(b []byte) ([]byte, error) {
	var out []byte
	err := c.collective(b, func(all []any) error {
		out = append([]byte(nil), all[0].([]byte)...)
		return nil
	}, func() {})
	return out, err
}
