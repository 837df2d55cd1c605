package report

import (
	"testing"

	"gekc/report/reporttest"
)

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// containsAll returns an error naming the substrings s lacks.
var containsAll = reporttest.ContainsAll
