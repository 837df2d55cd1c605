package sweep

import (
	"context"
	"gekc/dist"
	"time"

	"gekc/grid"
	"gekc/report"
	"gekc/resultsdir"
	"gekc/train"
	"gekc/train/ckpt"
)

// RunFunc trains one run. It is the seam between the sweep driver and the
// train package: Train is the one the command uses; tests pass fakes.
//
// The function writes its own artefacts (checkpoint.npz, sample files) into
// job.RunDir, preferably with atomicfile.WriteFile; the driver writes
// config.toml, metrics.json and the results tables. It must return promptly
// with ctx.Err() once ctx is cancelled (SIGINT/SIGTERM): the driver then
// discards the run's directory contents but for its resume state
// (Job.StatePath), and the run continues from that state next time, or
// starts from scratch when it saved none. A NaN/Inf loss is not an error:
// return an Outcome with Status = train.Diverged. Any returned error marks the run failed; the
// sweep goes on either way.
type RunFunc func(ctx context.Context, job Job) (*Outcome, error)

// Job is everything a run function needs.
type Job struct {
	ID       string       // the run's ID, also its directory name
	Spec     grid.RunSpec // fully resolved; Spec.Samples already has any -samples override
	DataRoot string       // the dataset is in DataRoot/Spec.Dataset
	RunDir   string       // <out>/runs/<ID>, exists and is empty but for the driver's files
	// DistillCheckpoint is the checkpoint.npz of the finished run named by
	// Spec.DistillFrom, resolved by the driver; "" when there is none.
	DistillCheckpoint string
	Observer          train.Observer // progress reporting; never nil
	// StatePath is where the run keeps its resume state (ckpt.StateName): the
	// run continues from it when it exists, and saves it at most every
	// StateEvery, after an epoch or inside a long one (train.Config.StateEvery;
	// 0: after every epoch), and at once, at the next step, when ctx is
	// cancelled (StateEvery < 0: never). The driver keeps the file when a run is
	// interrupted or fails and removes it once the run is final.
	StatePath  string
	StateEvery time.Duration
	// SaveFinal also saves the state after the last epoch and at an early
	// stop (train.Config.SaveFinal): a search rung whose runs may be
	// promoted to more epochs.
	SaveFinal bool
	// Shard, when set, trains the run sharded over the group's processes
	// (train.Config.Shard), the others following (Sharded, Follow).
	Shard dist.Comm
}

// final reports whether a run with this status is done for good: resume
// skips it and it has its row in results.tsv.
func final(s train.Status) bool { return report.Final(string(s)) }

// Outcome is what a run function reports.
type Outcome struct {
	Status    train.Status        // train.Finished (also when empty) or train.Diverged
	Epochs    []train.EpochRecord // one per trained epoch
	BestEpoch int                 // the epoch whose parameters were kept (by Spec.Eval.Select)
	// LLEpoch is the epoch of the best validation log-likelihood (the
	// test "ll_at_best_ll" is its); nil when the run validated none.
	LLEpoch *int
	// Valid and Test hold the metrics of the kept parameters, keyed "mrr",
	// "hits@1", "hits@3", "hits@10", "ll" (average log-likelihood per
	// triple), and anything else the run computes ("ece", "sem@1", ...).
	// A metric that does not apply is left out and explained in Notes.
	Valid, Test     map[string]float64
	WallSeconds     float64 // 0: the driver measures it around the call
	SecondsPerEpoch float64 // 0: the driver averages Epochs[].Seconds
	PeakRSSBytes    int64   // 0: the driver reads VmHWM (per process; see package procstat)
	Notes           []string
	// Memory is what the run held, part by part, and its budget; Data the
	// data set's sizes. Both are recorded in metrics.json when set.
	Memory *resultsdir.Memory
	Data   *resultsdir.Data
	// Segments are the processes that trained a run resumed from its
	// state, the first of them unknown but for its wall time and epochs
	// when the state predates the account; nil when one process trained
	// it all.
	Segments []ckpt.Segment
	// Processes is each process's account of a run sharded over several
	// (train.Result.Processes); nil for one process.
	Processes []dist.ProcessStats
}
