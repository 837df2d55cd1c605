package sweep

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gekc/grid"
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

func containsAll(s string, subs ...string) error {
	var missing []string
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			missing = append(missing, fmt.Sprintf("%q", sub))
		}
	}
	if len(missing) > 0 {
		return errors.New("missing " + strings.Join(missing, ", "))
	}
	return nil
}

// shippedData returns the repository's data root, which must hold the named
// dataset: it is shipped with the code, so its absence is a failure.
func shippedData(t *testing.T, dataset string) string {
	t.Helper()
	data, err := filepath.Abs(filepath.Join("..", "data"))
	must(t, err)
	if !fileExists(filepath.Join(data, dataset, "train.txt")) {
		t.Fatalf("no data/%s", dataset)
	}
	return data
}

func exampleSpec() grid.RunSpec {
	s := grid.DefaultRunSpec()
	s.Dataset, s.Model, s.Objective = "FB15k-237", "complex2", "pll"
	s.Rank, s.BatchSize, s.LearningRate, s.Epochs, s.Seed = 200, 1000, 0.001, 30, 0
	return s
}
