package resultsdir

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"gekc/grid"
	"gekc/models"
	"gekc/train"
	"gekc/train/ckpt"
)

// Every registered model's finished run loads back (as query, synth and
// the analyses load it) with exactly the parameters its checkpoint holds.
func TestLoadFinishedEveryModel(t *testing.T) {
	data := shippedData(t, "umls")
	dir := t.TempDir()
	for _, name := range models.Names() {
		spec := grid.DefaultRunSpec()
		spec.Dataset, spec.Model, spec.Rank, spec.Objective = "umls", name, 4, "mle"
		spec.LearningRate, spec.BatchSize, spec.Epochs = 1e-2, 100, 1
		run := filepath.Join(dir, spec.ID())
		must(t, os.MkdirAll(run, 0o755))
		m, err := models.New(name, models.Sizes{Entities: 135, Relations: 46, Rank: 4}, models.Options{Seed: 7})
		must(t, err)
		must(t, ckpt.Write(filepath.Join(run, ckpt.CheckpointName), m))
		must(t, WriteRecord(filepath.Join(run, MetricsName), &Record{ID: spec.ID(), Status: train.Finished, Spec: spec}))

		fr, err := LoadFinished(run, data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if fr.Model.Name != name || fr.Data.Name != "umls" || fr.ID != spec.ID() {
			t.Errorf("%s: loaded model %s on %s as %s", name, fr.Model.Name, fr.Data.Name, fr.ID)
		}
		for _, p := range m.ParamNames() {
			if !slices.Equal(m.Param(p).Data().([]float32), fr.Model.Param(p).Data().([]float32)) {
				t.Errorf("%s: table %s differs from the checkpoint's", name, p)
			}
		}
	}
}
