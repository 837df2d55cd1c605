package openblas_test

import (
	"runtime"
	"sync"
	"testing"

	"gekc/graph"
	_ "gekc/graph/openblas"
)

// Every thread the program computes on flushes subnormals: the main one and
// threads the Go runtime creates later (goroutines locked to their own OS
// threads); OpenBLAS's own threads: TestSubnormalsFlushedInBLASThreads.
func TestSubnormalsFlushedOnEveryThread(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skipf("the floating-point mode is set on amd64 only (GOARCH %s)", runtime.GOARCH)
	}
	tiny := []float32{1e-20, 1e-20}
	var wg sync.WaitGroup
	errs := make(chan string, 16)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread() // a goroutine that exits locked takes its thread with it: the next ones get new threads
			if !graph.SubnormalsFlushed() {
				errs <- "a thread does not flush subnormals"
			}
			if p := tiny[0] * tiny[1]; p != 0 {
				errs <- "1e-20·1e-20 in float32 is not flushed"
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
}
