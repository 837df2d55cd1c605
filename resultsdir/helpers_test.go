package resultsdir

import (
	"testing"

	"gekc/grid"
	"gekc/sweep/sweeptest"
)

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// shippedData returns the repository's data root, which must hold the
// named dataset.
func shippedData(t *testing.T, dataset string) string { return sweeptest.ShippedData(t, dataset) }

func exampleSpec() grid.RunSpec { return sweeptest.ExampleSpec() }
