package sweep

import (
	"fmt"
	"time"

	"gekc/internal/procstat"
	"gekc/tfevents"
	"gekc/train"
)

// eventObserver passes progress on to a run's observer and appends each
// epoch's scalars to the TensorBoard event file in its run directory
// (package tfevents): the training loss, the validation metrics, the
// epoch, step and validation times, the learning rate and the process's
// peak RSS, at step = the epoch. A file that cannot be written is said
// once; the run goes on.
type eventObserver struct {
	train.Observer
	w      *tfevents.Writer
	lr     float64
	steps  int
	failed bool
}

// withEvents returns obs with the run's event file attached, cut after
// epoch keep (the epochs a resumed run holds; 0 for a run from scratch),
// and the function that closes it. Only a sharded run's process 0 writes.
func withEvents(job Job, obs train.Observer, lr float64, keep int) (train.Observer, func()) {
	if job.RunDir == "" || (job.Shard != nil && job.Shard.Rank() != 0) {
		return obs, func() {}
	}
	w, err := tfevents.Open(job.RunDir, int64(keep))
	if err != nil {
		obs.Log(fmt.Sprintf("training curves for TensorBoard not written: %v", err))
		return obs, func() {}
	}
	return &eventObserver{Observer: obs, w: w, lr: lr}, func() { w.Close() }
}

func (o *eventObserver) EpochStart(epoch, steps int) {
	o.steps = steps
	o.Observer.EpochStart(epoch, steps)
}

func (o *eventObserver) EpochEnd(rec train.EpochRecord) {
	o.Observer.EpochEnd(rec)
	if o.failed {
		return
	}
	vals := map[string]float64{"train/loss": rec.TrainLoss, "time/epoch_seconds": rec.Seconds, "lr": o.lr}
	if o.steps > 0 {
		vals["time/step_ms"] = 1000 * rec.Seconds / float64(o.steps)
	}
	if rec.Valid != nil {
		vals["time/eval_seconds"] = rec.EvalSeconds
		for k, v := range rec.Valid {
			vals["valid/"+k] = v
		}
	}
	if peak, err := procstat.PeakRSS(); err == nil {
		vals["memory/peak_rss_mb"] = float64(peak) / (1 << 20)
	}
	if err := o.w.Scalars(int64(rec.Epoch), time.Now(), vals); err != nil {
		o.failed = true
		o.Observer.Log(fmt.Sprintf("training curves for TensorBoard not written: %v", err))
	}
}
