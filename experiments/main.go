package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"

	_ "gekc/graph/openblas" // OpenBLAS and flushed subnormals for this process (see its doc)
	"gekc/grid"
	"gekc/runspec"
	"gekc/sweep"

	"golang.org/x/term"
)

// Exit statuses.
const (
	exitOK          = 0
	exitRunsFailed  = 1 // some run failed, or results could not be written
	exitUsage       = 2 // bad flags, grid or data
	exitInterrupted = 130
)

func main() {
	os.Exit(mainShardable())
}

// mainWith is main with the run function and its preflight check as
// parameters, so that tests can run the real command, signals included, in
// a child process with a fake.
func mainWith(run sweep.RunFunc, check runspec.Preflight) int {
	return mainWithin(context.Background(), run, check)
}

// mainWithin is mainWith under a parent context, whose cancellation stops
// the command as a signal does.
func mainWithin(parent context.Context, run sweep.RunFunc, check runspec.Preflight) int {
	// SIGUSR1 is what a SLURM job is sent ahead of its time limit
	// (sbatch --signal): stop like on SIGTERM, saving the resume state.
	ctx, stop := signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM, syscall.SIGUSR1)
	defer stop()
	go func() {
		<-ctx.Done()
		// After the first signal the sweep winds down; a second one kills
		// at once, as users expect of Ctrl-C pressed twice.
		stop()
	}()
	return runCLI(ctx, os.Args[1:], cliEnv{
		stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv, run: run, validate: runspec.Validate, preflight: check,
	})
}

// cliEnv is what runCLI takes from the process, so tests can supply their own.
type cliEnv struct {
	stdout, stderr io.Writer
	getenv         func(string) string
	dir            string // working directory; "" = the process's
	run            sweep.RunFunc
	validate       grid.Validator
	// preflight checks the runs against their data before training; nil
	// checks only that each data set's directory exists (fake runs).
	preflight runspec.Preflight
	quiet     bool // no per-epoch progress, as -q
}

// isTerminal reports whether w is a terminal, where progress bars make sense.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// workDir is the directory relative paths are taken from: dir, or the
// process's working directory when dir is "".
func workDir(dir string) (string, error) {
	if dir != "" {
		return dir, nil
	}
	return os.Getwd()
}
