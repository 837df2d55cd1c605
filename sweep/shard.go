package sweep

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"gekc/dist"
	"gekc/grid"
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
}

// Sharded returns the RunFunc of process 0 of a group: before each run it
// tells the other processes (which Follow) which run to train, then trains
// it with run, sharded over the group. A run that fails once the others
// train it cannot be left half-done on them: abort is called with the
// error (it ends the whole job, as MPI_Abort does).
//
// The group trains one run at a time: with -j above 1 the runs wait for
// each other.
func Sharded(comm dist.Comm, run RunFunc, abort func(error)) RunFunc {
	var one sync.Mutex
	return func(ctx context.Context, job Job) (*Outcome, error) {
		one.Lock()
		defer one.Unlock()
		budget, err := MemoryBudget(job.Spec)
		if err != nil {
			return nil, err
		}
		msg, err := json.Marshal(announcement{ID: job.ID, Spec: job.Spec, DataRoot: job.DataRoot,
			DistillCheckpoint: job.DistillCheckpoint, MemoryBudget: budget})
		if err != nil {
			return nil, err
		}
		if _, err := comm.Broadcast(msg); err != nil {
			abort(err)
			return nil, err
		}
		job.Shard = comm
		out, err := run(ctx, job)
		if err != nil && !errors.Is(err, context.Canceled) && ctx.Err() == nil {
			abort(fmt.Errorf("run %s: %w", job.ID, err))
		}
		return out, err
	}
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
		job := Job{ID: a.ID, Spec: a.Spec, DataRoot: a.DataRoot, DistillCheckpoint: a.DistillCheckpoint, Shard: comm}
		cfg, ds, err := runConfig(job, a.MemoryBudget)
		if err != nil {
			return fmt.Errorf("run %s: %w", a.ID, err)
		}
		if _, err := train.Run(ctx, cfg, ds, nil); err != nil && !errors.Is(err, context.Canceled) {
			return fmt.Errorf("run %s: %w", a.ID, err)
		}
	}
}
