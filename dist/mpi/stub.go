//go:build !mpi

package mpi

// Enabled reports whether this binary calls a real MPI library.
const Enabled = false

// Init does nothing: without the "mpi" build tag there is one process.
func Init() error { return nil }

// Finalize does nothing.
func Finalize() error { return nil }

// Abort does nothing; the caller exits.
func Abort(int) {}

// World is the only process.
type World struct{}

func (World) Rank() int                  { return 0 }
func (World) Size() int                  { return 1 }
func (World) Barrier() error             { return nil }
func (World) SumFloat32([]float32) error { return nil }
func (World) SumFloat64([]float64) error { return nil }
func (World) SumInt64([]int64) error     { return nil }
func (World) MaxInt64([]int64) error     { return nil }
func (World) AlltoallvFloat32(send []float32, _ []int, recv []float32, _ []int) error {
	copy(recv, send)
	return nil
}
func (World) AlltoallvFloat64(send []float64, _ []int, recv []float64, _ []int) error {
	copy(recv, send)
	return nil
}
func (World) AllgathervFloat32(send, recv []float32, _ []int, _ int) error {
	copy(recv, send)
	return nil
}
func (World) AllgathervFloat64(send, recv []float64, _ []int, _ int) error {
	copy(recv, send)
	return nil
}

// Broadcast returns b.
func (World) Broadcast(b []byte) ([]byte, error) { return b, nil }
