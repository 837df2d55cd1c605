package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"gekc/dist/mpi"
	"gekc/runspec"
	"gekc/sweep"
)

// mainShardable runs the command in one process of an MPI job. Built
// without the mpi tag, or launched alone, it is the command. Under
// `mpirun -np P bin/gekc-mpi -grid G -only N`, process 0 is the command
// and trains each run it selects sharded over the P processes; the others
// follow it (sweep.Follow), training their rows and writing nothing. An
// error on any process once a run is shared ends the job with its message
// (sweep.Sharded says which runs are shared).
func mainShardable() int {
	if err := mpi.Init(); err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		return exitRunsFailed
	}
	w := mpi.World{}
	finalize := func(code int) int {
		if err := mpi.Finalize(); err != nil {
			fmt.Fprintf(os.Stderr, "error: %v\n", err)
			return max(code, exitRunsFailed)
		}
		return code
	}
	if w.Size() == 1 {
		return finalize(mainWith(sweep.Train, runspec.PreflightRuns))
	}
	abort := func(err error) {
		fmt.Fprintf(os.Stderr, "error: process %d of %d: %v: ending the job\n", w.Rank(), w.Size(), err)
		mpi.Abort(exitRunsFailed)
	}
	if w.Rank() == 0 {
		fmt.Fprintf(os.Stderr, "gekc-mpi: %d processes: each run of a squared or non-negative model is sharded over them; process 0 writes the results\n", w.Size())
		// Another process told to stop stops the group's run, and this
		// command with it, as if it had been told too.
		ctx, stop := context.WithCancel(context.Background())
		defer stop()
		code := mainWithin(ctx, sweep.Sharded(w, sweep.Train, abort, stop), runspec.PreflightRuns)
		if err := sweep.EndFollowers(w); err != nil {
			abort(err)
		}
		return finalize(code)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGUSR1)
	defer stop()
	if err := sweep.Follow(ctx, w); err != nil {
		abort(err)
	}
	return finalize(exitOK)
}
