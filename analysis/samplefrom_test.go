package analysis

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gekc/resultsdir"
	"gekc/train/ckpt"
)

// sample_from = "ll" (real training on Nations): the run writes the
// parameters of its best validation log-likelihood to checkpoint-ll.npz
// beside the selected ones, draws its samples from them, and says so;
// -analyze samples draws the same samples again from that file, and
// without it passes the run over, saying so. The run's ranking and ID are those of the
// run without the key.
func TestSampleFromBestLL(t *testing.T) {
	data := shippedData(t, "nations")
	const src = `name = "from-ll"
[defaults]
dataset = "nations"
model = "complex2"
objective = "pll"
rank = 4
batch_size = 100
learning_rate = 0.05
epochs = 8
patience = 0
samples = 300
%s
[[sweep]]
`
	ts := trainedSweep(t, fmt.Sprintf(src, `sample_from = "ll"`), data)
	plain := trainedSweep(t, fmt.Sprintf(src, ""), data)
	id := ts.ids()[0]
	if plain.ids()[0] != id {
		t.Fatalf("sample_from changed the run's ID: %s and %s", id, plain.ids()[0])
	}
	dir := filepath.Join(ts.out, runsDirName, id)
	rec, err := readRecord(filepath.Join(dir, metricsName))
	must(t, err)
	llEpoch, best := -1, 0.0
	for _, e := range rec.Epochs {
		if ll, ok := e.Valid["ll"]; ok && (llEpoch < 0 || ll > best) {
			llEpoch, best = e.Epoch, ll
		}
	}
	if llEpoch == rec.BestEpoch {
		t.Fatalf("the best MRR and the best log-likelihood are both at epoch %d: pick a run where they differ", llEpoch)
	}
	note := fmt.Sprintf("samples drawn from the parameters at the best validation log-likelihood, epoch %d (%s)", llEpoch, ckpt.CheckpointLLName)
	if !slices.Contains(rec.Notes, note) {
		t.Errorf("notes %q do not say %q", rec.Notes, note)
	}
	plainRec, err := readRecord(filepath.Join(plain.out, runsDirName, id, metricsName))
	must(t, err)
	if rec.Test["mrr"] != plainRec.Test["mrr"] || rec.Test["ll"] != plainRec.Test["ll"] {
		t.Errorf("test metrics %v, want those of the run without sample_from, %v", rec.Test, plainRec.Test)
	}

	// The samples are those of the best-LL parameters, not of the selected ones.
	fr, err := resultsdir.LoadFinished(dir, data)
	must(t, err)
	fromSelected, _, err := resultsdir.Sample(fr.Model, nil, 300, uint64(fr.Spec.Seed))
	must(t, err)
	must(t, ckpt.Load(filepath.Join(dir, ckpt.CheckpointLLName), fr.Model))
	fromLL, _, err := resultsdir.Sample(fr.Model, nil, 300, uint64(fr.Spec.Seed))
	must(t, err)
	stored, err := resultsdir.ReadSamples(filepath.Join(dir, samplesName), fr.Data)
	must(t, err)
	if !slices.Equal(stored, fromLL) {
		t.Errorf("samples.tsv is not drawn from %s", ckpt.CheckpointLLName)
	}
	if slices.Equal(stored, fromSelected) {
		t.Errorf("samples.tsv equals the selected parameters' samples: the two checkpoints sample alike")
	}
	if _, err := os.Stat(filepath.Join(plain.out, runsDirName, id, ckpt.CheckpointLLName)); err == nil {
		t.Errorf("the run without sample_from wrote %s", ckpt.CheckpointLLName)
	}

	// -analyze samples draws them again from checkpoint-ll.npz.
	must(t, os.Remove(filepath.Join(dir, samplesName)))
	mustAnalyze(t, analysisJob{Kind: "samples", Samples: 300, Out: ts.out, DataRoot: data, Runs: ts.g.Runs})
	again, err := resultsdir.ReadSamples(filepath.Join(dir, samplesName), fr.Data)
	must(t, err)
	if !slices.Equal(again, stored) {
		t.Errorf("-analyze samples drew other samples than the run did")
	}
	must(t, os.Remove(filepath.Join(dir, samplesName)))
	must(t, os.Remove(filepath.Join(dir, ckpt.CheckpointLLName)))
	// Without it (a run resumed from a state that did not keep it) the run
	// is passed over, and said so; loading it directly names the file.
	_, stderr, err := runAnalysis(analysisJob{Kind: "samples", Samples: 300, Out: ts.out, DataRoot: data, Runs: ts.g.Runs})
	if err != nil || !strings.Contains(stderr, id+`: no samples: sample_from = "ll", and the run kept no `+ckpt.CheckpointLLName) {
		t.Errorf("-analyze samples without %s: %v\n%s", ckpt.CheckpointLLName, err, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, samplesName)); err == nil {
		t.Errorf("-analyze samples drew samples without %s", ckpt.CheckpointLLName)
	}
	if _, err := runSamples(fr, 300, io.Discard); err == nil || !strings.Contains(err.Error(), ckpt.CheckpointLLName) {
		t.Errorf("runSamples without %s: %v", ckpt.CheckpointLLName, err)
	}

	// A grid asking sample_from = "ll" of a run trained without it: the
	// run's record decides, and the analysis says so.
	_, stderr, err = runAnalysis(analysisJob{Kind: "samples", Samples: 300, Out: plain.out, DataRoot: data, Runs: ts.g.Runs})
	if err != nil || !strings.Contains(stderr, id+`: trained with sample_from = "select", not the grid's "ll"`) {
		t.Errorf("-analyze samples with the grid's sample_from unlike the record's: %v\n%s", err, stderr)
	}
}
