package analysis

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"gekc/kg"
	"gekc/metrics"
	"gekc/models"
)

func nations(t *testing.T) *kg.Dataset {
	t.Helper()
	ds, err := kg.Load(filepath.Join("..", "data", "nations"))
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// The TSV CalibrationTables writes reads back into the same rows; runs
// lookup does not know are dropped.
func TestCalibrationTSVRoundTrip(t *testing.T) {
	runs := map[string]Run{
		"a": {ID: "a", Dataset: "umls", Model: "complex2", Objective: "mle", Constraints: "domain", Rank: 50, Seed: 1},
		"b": {ID: "b", Dataset: "nations", Model: "cp", Objective: "pll", Constraints: "none", Rank: 8, Seed: 0},
	}
	rows := []CalibrationRow{
		{Run: runs["b"], Cal: &metrics.Calibration{Logistic: metrics.Reliability{ECE: 0.25}, MinMax: metrics.Reliability{ECE: 0.125}, TrainMin: -3.5, TrainMax: 2, Positives: 201, Negatives: 150}},
		{Run: runs["a"], Cal: &metrics.Calibration{Logistic: metrics.Reliability{ECE: 0.0625}, MinMax: metrics.Reliability{ECE: 0.5}, TrainMin: -9, TrainMax: -1.5, Positives: 661, Negatives: 517}},
	}
	tsv, md, err := CalibrationTables(rows)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "| d-complex2 |") {
		t.Errorf("the domain-constrained run is not d-complex2 in:\n%s", md)
	}
	path := filepath.Join(t.TempDir(), CalibrationTSVName)
	if err := os.WriteFile(path, tsv, 0o644); err != nil {
		t.Fatal(err)
	}
	lookup := func(id string) (Run, bool, error) { r, ok := runs[id]; return r, ok, nil }
	back, err := ReadCalibrationTSV(path, lookup)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, rows) {
		t.Errorf("read back %+v, wrote %+v", back, rows)
	}
	delete(runs, "b")
	if back, err := ReadCalibrationTSV(path, lookup); err != nil || len(back) != 1 || back[0].Run.ID != "a" {
		t.Errorf("without run b: %+v, %v", back, err)
	}
	if rows, err := ReadCalibrationTSV(filepath.Join(t.TempDir(), "missing.tsv"), lookup); rows != nil || err != nil {
		t.Errorf("a missing file: %v, %v; want no rows, no error", rows, err)
	}
}

// Calibrate uses every test triple as a positive, and the batch size does
// not change the result.
func TestCalibrate(t *testing.T) {
	ds := nations(t)
	m, err := models.New("complex2", models.Sizes{Entities: ds.Entities.Len(), Relations: ds.Relations.Len(), Rank: 4}, models.Options{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	filter := kg.NewFilter(ds.Train, ds.Valid, ds.Test)
	c, err := Calibrate(m, nil, 0, ds, filter, 5)
	if err != nil {
		t.Fatal(err)
	}
	if c.Positives != len(ds.Test) || c.Negatives == 0 || c.Negatives > len(ds.Test) {
		t.Errorf("%d positives, %d negatives; want %d, between 1 and that", c.Positives, c.Negatives, len(ds.Test))
	}
	small, err := Calibrate(m, nil, 7, ds, filter, 5)
	if err != nil {
		t.Fatal(err)
	}
	if small.Positives != c.Positives || small.Negatives != c.Negatives || small.TrainMin != c.TrainMin || small.TrainMax != c.TrainMax {
		t.Errorf("batch 7: %+v; default batch: %+v", small, c)
	}
}
