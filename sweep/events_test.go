package sweep

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gekc/dist"
	"gekc/tfevents"
	"gekc/train"
)

// An epoch's record becomes one event of its scalars at step = epoch: the
// step time is the epoch's seconds over its steps, in milliseconds.
func TestEventObserverScalars(t *testing.T) {
	dir := t.TempDir()
	obs, done := withEvents(Job{RunDir: dir}, nopObserver{}, 0.01, 0)
	obs.EpochStart(1, 4)
	obs.EpochEnd(train.EpochRecord{Epoch: 1, TrainLoss: 2.5, Seconds: 2, EvalSeconds: 0.5, Valid: map[string]float64{"mrr": 0.25, "ll": -9}})
	obs.EpochStart(2, 4)
	obs.EpochEnd(train.EpochRecord{Epoch: 2, TrainLoss: 2, Seconds: 1})
	done()
	steps, err := tfevents.ReadScalars(dir)
	must(t, err)
	if len(steps) != 2 || steps[0].Step != 1 || steps[1].Step != 2 {
		t.Fatalf("steps %+v, want epochs 1 and 2", steps)
	}
	v := steps[0].Values
	for tag, want := range map[string]float64{"train/loss": 2.5, "time/epoch_seconds": 2, "time/step_ms": 500, "time/eval_seconds": 0.5,
		"valid/mrr": 0.25, "valid/ll": -9, "lr": float64(float32(0.01))} {
		if v[tag] != want {
			t.Errorf("%s = %v, want %v", tag, v[tag], want)
		}
	}
	if !(v["memory/peak_rss_mb"] > 0) {
		t.Errorf("memory/peak_rss_mb = %v", v["memory/peak_rss_mb"])
	}
	if _, ok := steps[1].Values["valid/mrr"]; ok || steps[1].Values["time/step_ms"] != 250 {
		t.Errorf("an epoch without validation: %v", steps[1].Values)
	}
}

// Of a sharded run's processes only process 0 writes the event file.
func TestEventObserverOnlyOnProcessZero(t *testing.T) {
	group := dist.Local(3)
	for rank, comm := range group {
		dir := t.TempDir()
		obs, done := withEvents(Job{RunDir: dir, Shard: comm}, nopObserver{}, 0.01, 0)
		obs.EpochEnd(train.EpochRecord{Epoch: 1})
		done()
		files, _ := filepath.Glob(filepath.Join(dir, tfevents.FilePrefix+"*"))
		if (len(files) == 1) != (rank == 0) {
			t.Errorf("process %d wrote %d event files", rank, len(files))
		}
	}
	// An unwritable run directory is said once; the run goes on.
	var log strings.Builder
	obs, done := withEvents(Job{RunDir: filepath.Join(t.TempDir(), "missing")}, logObserver{&log}, 0.01, 0)
	obs.EpochEnd(train.EpochRecord{Epoch: 1})
	done()
	if !strings.Contains(log.String(), "TensorBoard not written") {
		t.Errorf("log %q", log.String())
	}
	if _, err := os.Stat(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("a run directory was created")
	}
}

type logObserver struct{ w *strings.Builder }

func (logObserver) EpochStart(int, int)        {}
func (logObserver) Step(int, float64)          {}
func (logObserver) EpochEnd(train.EpochRecord) {}
func (o logObserver) Log(msg string)           { o.w.WriteString(msg + "\n") }

// BenchmarkEventObserverEpochEnd is what the event file costs an epoch:
// one event of the scalars a run with the default metrics validates
// (loss, times, lr, memory, MRR, Hits@1/3/10, LL and its per-side MRRs),
// appended to the file. Compare with the run's seconds_per_epoch.
func BenchmarkEventObserverEpochEnd(b *testing.B) {
	obs, done := withEvents(Job{RunDir: b.TempDir()}, nopObserver{}, 0.01, 0)
	defer done()
	valid := map[string]float64{"mrr": 0.3, "hits@1": 0.2, "hits@3": 0.3, "hits@10": 0.5, "ll": -9, "mrr_subject": 0.3, "mrr_object": 0.3}
	obs.EpochStart(1, 11)
	b.ResetTimer()
	for i := range b.N {
		obs.EpochEnd(train.EpochRecord{Epoch: i + 1, TrainLoss: 2, Seconds: 0.02, EvalSeconds: 0.01, Valid: valid})
	}
}
