package sweep

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"gekc/grid"
	"gekc/train"
	"gekc/train/ckpt"
)

// stateWatcher reads the resume state on disk after each step of epoch 1.
type stateWatcher struct {
	path, id string
	epoch    int
	batches  []int // the state's Batch after steps 1, 2, ...
}

func (w *stateWatcher) EpochStart(epoch, _ int) { w.epoch = epoch }
func (w *stateWatcher) Step(done int, _ float64) {
	if w.epoch != 1 {
		return
	}
	st, _, err := ckpt.ReadState(w.path, w.id)
	if err != nil {
		w.batches = append(w.batches, -1)
		return
	}
	w.batches = append(w.batches, st.Batch)
}
func (w *stateWatcher) EpochEnd(train.EpochRecord) {}
func (w *stateWatcher) Log(string)                 {}

// A job's StateEvery reaches the training loop: at an interval shorter
// than a step, the state on disk after step k of an epoch is the one
// saved before it, at step boundary k-1 (none before step 2).
func TestStateEveryReachesTheRun(t *testing.T) {
	spec := grid.DefaultRunSpec()
	spec.Dataset, spec.Model, spec.Objective, spec.Rank = "nations", "cp2", "pll", 4
	spec.BatchSize, spec.LearningRate, spec.Epochs = 300, 0.01, 2
	dir := t.TempDir()
	w := &stateWatcher{path: filepath.Join(dir, ckpt.StateName), id: spec.ID()}
	if _, err := Train(context.Background(), Job{ID: spec.ID(), Spec: spec, DataRoot: shippedData(t, "nations"), RunDir: dir,
		Observer: w, StatePath: w.path, StateEvery: time.Nanosecond}); err != nil {
		t.Fatal(err)
	}
	want := []int{-1, 1, 2, 3, 4, 5} // Nations: 6 steps of 300
	if len(w.batches) != len(want) {
		t.Fatalf("states after the steps of epoch 1: %v, want %v", w.batches, want)
	}
	for i := range want {
		if w.batches[i] != want[i] {
			t.Errorf("states after the steps of epoch 1: %v, want %v", w.batches, want)
			break
		}
	}
}
