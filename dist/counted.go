package dist

import (
	"time"
	"unsafe"
)

// Counted wraps a Comm and counts what this process sends through it and
// the time it spends in its collectives (waiting included): the
// communication figures a sharded run records.
type Counted struct {
	Comm
	Sent  int64         // bytes this process handed to collectives to send
	Calls int64         // collectives called
	Time  time.Duration // spent inside them
}

func (c *Counted) count(bytes int, start time.Time) {
	c.Sent += int64(bytes)
	c.Calls++
	c.Time += time.Since(start)
}

// bytesOf is the size of a slice's elements.
func bytesOf[T any](x []T) int {
	var z T
	return len(x) * int(unsafe.Sizeof(z))
}

// A sum sends its buffer (whatever MPI's algorithm does on the wire: a
// reduction and broadcast move about twice that over a ring).
func (c *Counted) SumFloat32(x []float32) error {
	defer c.count(bytesOf(x), time.Now())
	return c.Comm.SumFloat32(x)
}

func (c *Counted) SumFloat64(x []float64) error {
	defer c.count(bytesOf(x), time.Now())
	return c.Comm.SumFloat64(x)
}

func (c *Counted) SumInt64(x []int64) error {
	defer c.count(bytesOf(x), time.Now())
	return c.Comm.SumInt64(x)
}

func (c *Counted) MaxInt64(x []int64) error {
	defer c.count(bytesOf(x), time.Now())
	return c.Comm.MaxInt64(x)
}

// An exchange sends what goes to the other processes, not its own part.
func (c *Counted) AlltoallvFloat32(send []float32, sc []int, recv []float32, rc []int) error {
	defer c.count(4*others(sc, c.Rank()), time.Now())
	return c.Comm.AlltoallvFloat32(send, sc, recv, rc)
}

func (c *Counted) AlltoallvFloat64(send []float64, sc []int, recv []float64, rc []int) error {
	defer c.count(8*others(sc, c.Rank()), time.Now())
	return c.Comm.AlltoallvFloat64(send, sc, recv, rc)
}

func (c *Counted) AllgathervFloat32(send, recv []float32, counts []int, unit int) error {
	defer c.count(bytesOf(send)*(c.Size()-1), time.Now())
	return c.Comm.AllgathervFloat32(send, recv, counts, unit)
}

func (c *Counted) AllgathervFloat64(send, recv []float64, counts []int, unit int) error {
	defer c.count(bytesOf(send)*(c.Size()-1), time.Now())
	return c.Comm.AllgathervFloat64(send, recv, counts, unit)
}

func others(counts []int, me int) int {
	n := 0
	for q, c := range counts {
		if q != me {
			n += c
		}
	}
	return n
}

func (c *Counted) Broadcast(b []byte) ([]byte, error) {
	n := 0
	if c.Rank() == 0 {
		n = len(b) * (c.Size() - 1)
	}
	defer c.count(n, time.Now())
	return c.Comm.Broadcast(b)
}
