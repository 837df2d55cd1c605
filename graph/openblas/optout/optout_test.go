// Package optout checks that gekc's library packages change no
// process-wide state when imported: this test binary imports models,
// objectives and metrics but not gekc/graph/openblas.
package optout

import (
	"runtime"
	"testing"

	"gekc/graph"
	_ "gekc/metrics"
	_ "gekc/models"
	_ "gekc/objectives"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/blas/gonum"
	G "gorgonia.org/gorgonia"
)

func TestImportingLibrariesChangesNoProcessState(t *testing.T) {
	if _, ok := G.WhichBLAS().(gonum.Implementation); !ok {
		t.Errorf("Gorgonia's BLAS is %T, want gonum's default", G.WhichBLAS())
	}
	if _, ok := blas64.Implementation().(gonum.Implementation); !ok {
		t.Errorf("gonum's blas64 is %T, want its default", blas64.Implementation())
	}
	if runtime.GOARCH == "amd64" && graph.SubnormalsFlushed() {
		t.Error("subnormals are flushed without gekc/graph/openblas imported")
	}
}
