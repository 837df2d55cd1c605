package sweep

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"gekc/dist"
	"gekc/grid"
	"gekc/internal/procstat"
	"gekc/runspec"
	"gekc/train"
)

// announcement is what process 0 of a sharded sweep tells the others
// before each run it trains: enough to build the same train.Config.
type announcement struct {
	ID                string       `json:"id"`
	Spec              grid.RunSpec `json:"spec"`
	DataRoot          string       `json:"data_root"`
	DistillCheckpoint string       `json:"distill_checkpoint,omitempty"`
	MemoryBudget      int64        `json:"memory_budget"`
	// Resume is the state file process 0 resumes the run from when it
	// reads ("" when the run keeps none); StateEvery is how often the run
	// saves its state.
	Resume     string        `json:"resume,omitempty"`
	StateEvery time.Duration `json:"state_every"`
	// SaveFinal: the run also saves its state after its last epoch (a
	// search's rung): every process must, or the gather would wait.
	SaveFinal bool `json:"save_final,omitempty"`
}

// Sharded returns the RunFunc of process 0 of a group: before each run it
// tells the other processes (which Follow) which run to train, then trains
// it with run, sharded over the group. A run the group cannot shard (an
// energy-based or constrained model) process 0 trains alone, the others
// waiting. Once a run is shared, an error on process 0 (a panic included)
// cannot leave it half-done on the others: abort is called with it (it
// ends the whole job, as MPI_Abort does). When the group stopped a run
// because another process was told to, stop is called: the sweep winds
// down as if this process had been told too.
//
// The group trains one run at a time: with -j above 1 the runs wait for
// each other.
func Sharded(comm dist.Comm, run RunFunc, abort func(error), stop func()) RunFunc {
	var one sync.Mutex
	return func(ctx context.Context, job Job) (out *Outcome, err error) {
		one.Lock()
		defer one.Unlock()
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if why := runspec.Shardable(job.Spec); why != nil {
			out, err := run(ctx, job)
			if out != nil {
				out.Notes = append(out.Notes, fmt.Sprintf("trained by one of the %d processes: %v", comm.Size(), why))
			}
			return out, err
		}
		msg, err := announce(job)
		if err != nil {
			return nil, err
		}
		if _, err := comm.Broadcast(msg); err != nil {
			abort(err)
			return nil, err
		}
		defer func() {
			if p := recover(); p != nil {
				abort(fmt.Errorf("run %s: panic: %v", job.ID, p))
				panic(p)
			}
		}()
		job.Shard = comm
		out, err = run(ctx, job)
		switch {
		case err == nil:
		case !errors.Is(err, context.Canceled):
			abort(fmt.Errorf("run %s: %w", job.ID, err))
		case ctx.Err() == nil:
			stop()
		}
		return out, err
	}
}

// announce encodes what the followers need to train job as process 0 does.
func announce(job Job) ([]byte, error) {
	budget, err := runspec.MemoryBudget(job.Spec)
	if err != nil {
		return nil, err
	}
	a := announcement{ID: job.ID, Spec: job.Spec, DataRoot: job.DataRoot,
		DistillCheckpoint: job.DistillCheckpoint, MemoryBudget: budget, StateEvery: job.StateEvery, SaveFinal: job.SaveFinal}
	if job.StatePath != "" {
		a.Resume = job.StatePath
	}
	return json.Marshal(a)
}

// EndFollowers tells the processes that Follow that no run comes.
func EndFollowers(comm dist.Comm) error {
	_, err := comm.Broadcast(nil)
	return err
}

// Follow is the life of a process other than 0 in a sharded sweep: it
// trains its part of each run process 0 announces (Sharded), writing
// nothing, until process 0 says no run comes (EndFollowers).
func Follow(ctx context.Context, comm dist.Comm) error {
	for {
		msg, err := comm.Broadcast(nil)
		if err != nil {
			return err
		}
		if len(msg) == 0 {
			return nil
		}
		var a announcement
		if err := json.Unmarshal(msg, &a); err != nil {
			return fmt.Errorf("sweep: a run announced by process 0: %w", err)
		}
		if err := follow(ctx, comm, a); err != nil {
			return fmt.Errorf("run %s: %w", a.ID, err)
		}
	}
}

// follow trains this process's part of the announced run as process 0's
// Train does: from the same state, and again afresh where Train finds the
// state does not fit the run.
func follow(ctx context.Context, comm dist.Comm, a announcement) error {
	job := Job{ID: a.ID, Spec: a.Spec, DataRoot: a.DataRoot, DistillCheckpoint: a.DistillCheckpoint, Shard: comm, SaveFinal: a.SaveFinal}
	_ = procstat.ResetPeakRSS() // each run's own peak, as the driver's for process 0 (0 without /proc)
	cfg, ds, err := runConfig(job, a.MemoryBudget)
	if err != nil {
		return err
	}
	cfg.StateEvery = a.StateEvery
	first := cfg
	if a.Resume != "" {
		// As Train: a state that cannot be read is ignored, and the same
		// file reads alike here and on process 0.
		job.StatePath = a.Resume
		if st, _, err := readState(job, cfg, ds); err == nil {
			first.Resume = st
		}
	}
	res, err := train.Run(ctx, first, ds, nil)
	if errors.Is(err, train.ErrStateMismatch) {
		res, err = train.Run(ctx, cfg, ds, nil)
	}
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return nil
		}
		return err
	}
	return gatherCheckpoints(res)
}
