package runspec

import (
	"os"
	"testing"

	"gekc/grid"
	"gekc/report/reporttest"
	"gekc/sweep/sweeptest"
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

// shippedData returns the repository's data root, which must hold the
// named dataset.
func shippedData(t *testing.T, dataset string) string { return sweeptest.ShippedData(t, dataset) }

func exampleSpec() grid.RunSpec { return sweeptest.ExampleSpec() }

// containsAll returns an error naming the substrings s lacks.
var containsAll = reporttest.ContainsAll
