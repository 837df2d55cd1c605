package sweeptest

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"

	"gekc/grid"
	"gekc/train"
)

type nop struct{}

func (nop) EpochStart(int, int)        {}
func (nop) Step(int, float64)          {}
func (nop) EpochEnd(train.EpochRecord) {}
func (nop) Log(string)                 {}

// The fake does what its fields say to exactly the runs they name, and a
// finished run has the metrics and final checkpoint its doc promises.
func TestTrainer(t *testing.T) {
	if re := IDs("a.b", "c"); !re.MatchString("a.b") || re.MatchString("axb") || re.MatchString("a.b2") || !re.MatchString("c") {
		t.Errorf("IDs matches more or less than the IDs: %v", re)
	}
	spec := grid.DefaultRunSpec()
	spec.Model, spec.Seed, spec.Epochs = "cp2", 2, 5
	f := &Trainer{Fail: IDs("bad"), Diverge: IDs("nan")}
	dir := t.TempDir()
	r, err := f.Run(context.Background(), "good", spec, dir, nop{})
	if err != nil {
		t.Fatal(err)
	}
	if want := 0.3 + 0.02 + 0.003; r.Status != train.Finished || len(r.Epochs) != 3 || r.BestEpoch != 3 || math.Abs(r.Test["mrr"]-want) > 1e-12 {
		t.Errorf("finished run: %+v, want 3 epochs and test MRR %v", r, want)
	}
	if ck, _ := os.ReadFile(filepath.Join(dir, "checkpoint.npz")); string(ck) != "final good" {
		t.Errorf("checkpoint %q", ck)
	}
	if _, err := f.Run(context.Background(), "bad", spec, dir, nop{}); err == nil {
		t.Error("run bad did not fail")
	}
	if r, err := f.Run(context.Background(), "nan", spec, dir, nop{}); err != nil || r.Status != train.Diverged || !math.IsNaN(r.Epochs[0].TrainLoss) {
		t.Errorf("run nan: %+v, %v", r, err)
	}
	f.Run(context.Background(), "good", spec, dir, nop{})
	if f.Calls("good") != 2 || f.TotalCalls() != 4 {
		t.Errorf("calls: good %d, all %d; want 2 and 4", f.Calls("good"), f.TotalCalls())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := f.Run(ctx, "late", spec, dir, nop{}); err != context.Canceled {
		t.Errorf("a cancelled run: %v", err)
	}
}
