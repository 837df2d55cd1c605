package sweeptest

import (
	"os"
	"path/filepath"
	"testing"

	"gekc/grid"
	"gekc/internal/atomicfile"
	"gekc/report"
)

// ToyGrid expands to 12 runs on the data set "toy": 8 from its first
// block, 4 (seeds) from its second. The fake trainer reads no data, so an
// empty directory "toy" under the data root is all it needs.
const ToyGrid = `name = "toy"
[defaults]
dataset = "toy"
rank = 4
batch_size = 10
learning_rate = 0.01
epochs = 3

[[sweep]]
model = ["cp2", "complex2"]
objective = ["pll", "mle"]
seed = [0, 1]

[[sweep]]
model = "cp"
objective = "pll"
seeds = 4
`

// ToyBase is a [defaults] block on the data set "toy" that satisfies
// grid.DefaultValidator, so that test grids only state what they test.
const ToyBase = `[defaults]
dataset = "toy"
model = "cp"
objective = "pll"
rank = 4
batch_size = 10
learning_rate = 0.01
epochs = 2
`

// EachRowOnce checks that the results.tsv in out has exactly one row per
// ID and no other rows.
func EachRowOnce(t testing.TB, out string, ids []string) {
	t.Helper()
	table, err := report.ReadTSV(filepath.Join(out, "results.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, r := range table.Rows {
		count[r["id"]]++
	}
	for _, id := range ids {
		if count[id] != 1 {
			t.Errorf("results.tsv has %d rows for %s, want 1", count[id], id)
		}
		delete(count, id)
	}
	for id, n := range count {
		t.Errorf("results.tsv has %d unexpected rows for %s", n, id)
	}
}

// NoTempFiles checks that no atomicfile temporary is left under root.
func NoTempFiles(t testing.TB, root string) {
	t.Helper()
	filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err == nil && atomicfile.IsTemp(d.Name()) {
			t.Errorf("temporary file left behind: %s", path)
		}
		return nil
	})
}

// ShippedData returns the repository's data root, seen from a package one
// directory below it, which must hold the named dataset: it is shipped
// with the code, so its absence is a failure.
func ShippedData(t testing.TB, dataset string) string {
	t.Helper()
	data, err := filepath.Abs(filepath.Join("..", "data"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(data, dataset, "train.txt")); err != nil {
		t.Fatalf("no data/%s: %v", dataset, err)
	}
	return data
}

// NewToy parses the grid src (a grid on the data set "toy", such as
// ToyGrid) and returns it with a results directory to be and a data root
// holding "toy" as an empty directory, both in t's temporary directory.
func NewToy(t testing.TB, src string) (g *grid.Grid, out, data string) {
	t.Helper()
	g, err := grid.ParseGrid("toy.toml", []byte(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	out, data = filepath.Join(dir, "out"), filepath.Join(dir, "data")
	if err := os.MkdirAll(filepath.Join(data, "toy"), 0o755); err != nil {
		t.Fatal(err)
	}
	return g, out, data
}

// ExampleSpec is a valid run spec (ComplEx² by PLL on FB15k-237, d = 200)
// for tests that need one and change what they test.
func ExampleSpec() grid.RunSpec {
	s := grid.DefaultRunSpec()
	s.Dataset, s.Model, s.Objective = "FB15k-237", "complex2", "pll"
	s.Rank, s.BatchSize, s.LearningRate, s.Epochs, s.Seed = 200, 1000, 0.001, 30, 0
	return s
}
