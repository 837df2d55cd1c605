package openblas_test

import (
	"math"
	"runtime"
	"sync"
	"testing"

	"gekc/graph"
	_ "gekc/graph/openblas"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/blas/gonum"
	G "gorgonia.org/gorgonia"
)

// Importing the package makes OpenBLAS Gorgonia's BLAS for matrix
// products, which graph's own products use too.
func TestImportSelectsOpenBLAS(t *testing.T) {
	if _, ok := G.WhichBLAS().(gonum.Implementation); ok {
		t.Fatalf("Gorgonia's BLAS is gonum's, want OpenBLAS's level 3")
	}
	if _, ok := blas64.Implementation().(gonum.Implementation); ok {
		t.Fatalf("gonum's blas64 is gonum's own, want OpenBLAS's level 3")
	}
}

// Every thread the program computes on flushes subnormals: the main one and
// threads the Go runtime creates later (goroutines locked to their own OS
// threads), in Go arithmetic and in BLAS, whose products of 1e-20s are
// 1e-40, subnormal.
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
	// A product large enough for OpenBLAS to split across its threads.
	const n = 256
	a := make([]float32, n*n)
	for i := range a {
		a[i] = 1e-20
	}
	c := make([]float32, n*n)
	G.WhichBLAS().Sgemm(blas.NoTrans, blas.NoTrans, n, n, n, 1, a, n, a, n, 0, c, n)
	for i, x := range c {
		if x != 0 {
			t.Fatalf("BLAS: entry %d of a product of 1e-20s is %v, not flushed", i, x)
		}
	}
	if math.Float32bits(tiny[0]) == 0 {
		t.Fatal("unreachable")
	}
}
