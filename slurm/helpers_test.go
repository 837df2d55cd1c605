package slurm

import (
	"os"
	"testing"

	"gekc/grid"
	"gekc/report/reporttest"
	"gekc/resultsdir"
	"gekc/sweep/sweeptest"
)

const (
	GridCopyName   = resultsdir.GridCopyName
	resultsTSVName = resultsdir.ResultsTSVName
)

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// containsAll returns an error naming the substrings s lacks.
var containsAll = reporttest.ContainsAll

// shippedData returns the repository's data root, which must hold the
// named dataset.
func shippedData(t *testing.T, dataset string) string { return sweeptest.ShippedData(t, dataset) }

// toySweep is a results directory, its grid and a data root.
type toySweep struct {
	g         *grid.Grid
	out, data string
}

// newToySweep is sweeptest.ToyGrid on an empty data set "toy".
func newToySweep(t *testing.T) toySweep { return newSweepOf(t, sweeptest.ToyGrid) }

func newSweepOf(t *testing.T, src string) toySweep {
	t.Helper()
	g, out, data := sweeptest.NewToy(t, src)
	return toySweep{g: g, out: out, data: data}
}
