package mpi

import "fmt"

// maxCount is the largest element count or offset MPI's int arguments take.
const maxCount = 1<<31 - 1

func countOK(n int) error {
	if n > maxCount {
		return fmt.Errorf("mpi: a buffer of %d elements is more than MPI's int counts (%d)", n, maxCount)
	}
	return nil
}
