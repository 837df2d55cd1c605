package sweep

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"gekc/grid"
	"gekc/report"
	"gekc/resultsdir"
	"gekc/runspec"
	"gekc/train"
)

// TestDemoReference checks that the committed run of the demo grid, kept
// for comparison under results/umls-reference (the demo itself writes
// results/umls, so that it trains on a fresh clone), is that grid's: the
// same grid file and one finished row per run.
func TestDemoReference(t *testing.T) {
	gridFile, err := os.ReadFile(filepath.Join("..", "grids", "umls.toml"))
	must(t, err)
	ref := filepath.Join("..", "results", "umls-reference")
	copied, err := os.ReadFile(filepath.Join(ref, resultsdir.GridCopyName))
	must(t, err)
	if !bytes.Equal(gridFile, copied) {
		t.Errorf("%s differs from grids/umls.toml", filepath.Join(ref, resultsdir.GridCopyName))
	}
	g, err := grid.LoadGrid(filepath.Join("..", "grids", "umls.toml"), runspec.Validate)
	must(t, err)
	if g.Name != "umls" {
		t.Errorf("the demo grid is named %q: its default results directory would not be results/umls", g.Name)
	}
	table, err := report.ReadTSV(filepath.Join(ref, "results.tsv"))
	must(t, err)
	rows := table.Rows
	finished := map[string]bool{}
	for _, r := range rows {
		if train.Status(r["status"]) == train.Finished {
			finished[r["id"]] = true
		}
	}
	for _, r := range g.Runs {
		if !finished[r.ID] {
			t.Errorf("run %s of grids/umls.toml has no finished row in %s", r.ID, ref)
		}
	}
	if len(rows) != len(g.Runs) {
		t.Errorf("%d rows in the reference, %d runs in the grid", len(rows), len(g.Runs))
	}
}
