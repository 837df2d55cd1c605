package synth

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gekc/kg"
	"gekc/models"
)

// WriteDataSet writes a planted model's data set that loads back with the
// sizes asked, beside planted.npz, planted.tsv and a SOURCE.md saying how
// it was made.
func TestWriteDataSetOfAPlantedModel(t *testing.T) {
	m, err := Planted("cp2", models.Sizes{Entities: 12, Relations: 2, Rank: 2}, 4, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	src := Source{Model: m, Names: NumberedNames(12, 2), About: []string{"- model: planted for a test"},
		Planted: &PlantedModel{Name: "cp2", Entities: 12, Relations: 2, Rank: 2, Seed: 4}}
	dir := filepath.Join(t.TempDir(), "planted")
	w, err := WriteDataSet(dir, src, Request{Sizes: Splits{Train: 40, Valid: 5, Test: 5}, Draw: Distinct, Seed: 4, Command: "synth …"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ds, err := kg.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds.Train) != 40 || len(ds.Valid) != 5 || len(ds.Test) != 5 || ds.Entities.Len() != 12 {
		t.Errorf("loaded %d/%d/%d triples over %d entities, want 40/5/5 over 12", len(ds.Train), len(ds.Valid), len(ds.Test), ds.Entities.Len())
	}
	for _, f := range []string{"planted.npz", "planted.tsv"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	md, err := os.ReadFile(filepath.Join(dir, "SOURCE.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"- model: planted for a test", "40 train, 5 valid, 5 test", "Command: `synth …`"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("SOURCE.md lacks %q:\n%s", want, md)
		}
	}
	if !(w.LL[0] < 0 && w.LL[2] < 0) {
		t.Errorf("exact LL %v, want negative", w.LL)
	}
	energy, _ := models.New("cp", models.Sizes{Entities: 3, Relations: 1, Rank: 1}, models.Options{Seed: 1})
	if _, err := WriteDataSet(t.TempDir(), Source{Model: energy}, Request{Sizes: Splits{Train: 1}}, io.Discard); err == nil || !strings.Contains(err.Error(), "energy-based") {
		t.Errorf("an energy model: %v", err)
	}
}
