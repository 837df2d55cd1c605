package sweep

import (
	"path/filepath"
	"strconv"
	"testing"

	"gekc/grid"
	"gekc/report"
)

func TestShellQuote(t *testing.T) {
	tests := map[string]string{
		"plain/path-1.toml": "plain/path-1.toml",
		"":                  "''",
		"with space":        "'with space'",
		"it's":              `'it'\''s'`,
		"$HOME":             "'$HOME'",
	}
	for in, want := range tests {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

// The memory asked for is at least what the committed UMLS sweep measured
// (peak_rss_mb of results/umls-reference/results.tsv), run by run.
func TestMemoryEstimateCoversMeasuredPeaks(t *testing.T) {
	data := shippedData(t, "umls")
	ds, err := loadDataset(filepath.Join(data, "umls"))
	must(t, err)
	table, err := report.ReadTSV(filepath.Join("..", "results", "umls-reference", resultsTSVName))
	must(t, err)
	n := 0
	for _, row := range table.Rows {
		spec := grid.DefaultRunSpec()
		spec.Model, spec.DType = row["model"], "float32"
		spec.Rank, _ = strconv.Atoi(row["rank"])
		spec.BatchSize, _ = strconv.Atoi(row["batch_size"])
		peak, err := strconv.ParseFloat(row["peak_rss_mb"], 64)
		if err != nil || spec.Rank == 0 {
			continue
		}
		est, err := estimateMemoryBytes(spec, ds.Entities.Len(), ds.Relations.Len())
		must(t, err)
		if float64(est) < peak*(1<<20) {
			t.Errorf("%s: estimate %d MiB, measured %.0f MiB", row["id"], est>>20, peak)
		}
		n++
	}
	if n == 0 {
		t.Fatal("no rows checked")
	}
}
