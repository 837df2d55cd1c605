package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"gekc/analysis"
	"gekc/internal/paths"
	"gekc/kg"
	"gekc/report"
	"gekc/resultsdir"
	"gekc/runspec"
	"gekc/slurm"
	"gekc/sweep"
)

// sweepFlags are the sweep verb's flags.
type sweepFlags struct {
	gridFlags
	analysis.Options                         // the analyses' flags, for -analyze
	analyze, listFormat, emit, adopt, memory string
	dryRun, resume, verbose, quiet           bool
	jobs, rung, task                         int
	promote                                  bool
	stateEvery                               time.Duration
	slurm                                    slurm.Array
}

func (f *sweepFlags) register(fs *flag.FlagSet) {
	f.gridFlags.register(fs)
	f.Options.Flags(fs)
	fs.Lookup("samples").Usage = "sample `N` triples after each run trained now, in place of the grid's samples (0: none; absent: the grid's); with -analyze, the samples per run (default 25000)"
	fs.BoolVar(&f.dryRun, "dry-run", false, "list the expanded runs and their state, and exit")
	fs.StringVar(&f.listFormat, "format", "text", "with -dry-run: text (tables for a person) or json (one object per run and line, for scripts)")
	fs.BoolVar(&f.resume, "resume", true, "skip finished runs; false refuses to start if -out holds any")
	fs.IntVar(&f.jobs, "j", 1, "runs trained at once by this process")
	fs.StringVar(&f.emit, "emit", "", `write a job script instead of running: "slurm" writes <out>/sbatch.sh`)
	fs.StringVar(&f.analyze, "analyze", "", "old form of the analyze verb: \"samples\", \"ktd\", \"tsne\", \"calibration\", \"plots\", \"paper\" or \"tables\"")
	fs.StringVar(&f.adopt, "adopt-state", "", "continue the one run -only selects from another run's resume state `file`, when the two differ only in a larger patience or epoch bound (that run must be in the grid, or its config.toml beside the file)")
	fs.DurationVar(&f.stateEvery, "state-every", 5*time.Minute, "save each unfinished run's resume state at most this `often`, after an epoch or inside a long one (0: after every epoch only, negative: never)")
	fs.BoolVar(&f.verbose, "v", false, "verbose: a line for every epoch of every run (loss, validation metrics)")
	fs.StringVar(&f.memory, "memory", "", "memory budget of each run whose grid sets no memory key, e.g. 12GiB (default GOMEMLIMIT, else 90% of the machine's memory): the evaluation batch is cut to fit it, and a run that cannot fit is refused before training")
	fs.BoolVar(&f.quiet, "q", false, "quiet: no per-epoch progress, only a line per run")
	fs.IntVar(&f.rung, "rung", 0, "with a [search] grid: train only rung `K` (from 1), deciding the rung before it first")
	fs.IntVar(&f.task, "task", 0, "with -rung: train only the `I`-th run of the rung (from 1; a SLURM array task)")
	fs.BoolVar(&f.promote, "promote", false, "with -rung: train nothing, decide the rung (the step between two SLURM arrays)")
	f.slurm.Flags(fs)
}

// check refuses flag combinations that mean nothing.
func (f *sweepFlags) check() error {
	switch {
	case f.grid == "":
		return errors.New("-grid is required, e.g. -grid grids/umls.toml")
	case f.jobs < 1:
		return fmt.Errorf("-j %d: want at least 1", f.jobs)
	case f.listFormat != "text" && f.listFormat != "json":
		return fmt.Errorf("-format %q: want text or json", f.listFormat)
	case f.listFormat != "text" && !f.dryRun:
		return errors.New("-format goes with -dry-run")
	case f.emit != "" && f.emit != "slurm":
		return fmt.Errorf("-emit %q: only \"slurm\" is supported", f.emit)
	case f.verbose && f.quiet:
		return errors.New("-v and -q: choose one")
	case f.adopt != "" && (f.analyze != "" || f.dryRun || f.emit != ""):
		return errors.New("-adopt-state trains a run: it cannot go with -analyze, -dry-run or -emit")
	case f.analyze != "":
		return f.CheckFlags()
	}
	return nil
}

// runSweep is the sweep verb, and the command without a verb.
func runSweep(ctx context.Context, args []string, env cliEnv) int {
	if scalingAlias(args) {
		return runScalingVerb(ctx, args, env)
	}
	fs := flag.NewFlagSet("experiments", flag.ContinueOnError)
	var f sweepFlags
	f.register(fs)
	if code, done := parseFlags(fs, usage("sweep"), args, env); done {
		return code
	}
	fail := failer(env)
	if err := f.check(); err != nil {
		return fail(exitUsage, "%v", err)
	}
	o, err := f.open(env)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	if code, done := f.prepare(env, o, args); done {
		return code
	}
	if f.analyze != "" {
		return analyzeRuns(ctx, env, o, f.Options, f.analyze)
	}
	return f.train(ctx, env, o, args)
}

// prepare applies -memory and does what ends before training: the dry
// run, -emit, the refusals of -resume=false and -out, and preflight.
func (f *sweepFlags) prepare(env cliEnv, o *openGrid, args []string) (code int, done bool) {
	fail := failer(env)
	if f.memory != "" {
		if err := runspec.DefaultMemory(o.selected, f.memory); err != nil {
			return fail(exitUsage, "%v", err), true
		}
	}
	if f.adopt != "" && len(o.selected) != 1 {
		return fail(exitUsage, "-adopt-state needs -only to select one run of %s, not %d", o.g.Path, len(o.selected)), true
	}
	if f.dryRun {
		list := sweep.WriteRunList
		if f.listFormat == "json" {
			list = sweep.WriteRunJSON
		}
		if err := list(env.stdout, o.g, o.selected, o.out, o.dataRoot); err != nil {
			return fail(exitRunsFailed, "%v", err), true
		}
		return exitOK, true
	}
	if split, err := kg.TrainingSplit(o.out); (split != "" || err != nil) && f.analyze == "" {
		return fail(exitUsage, "-out %s is a data set (%s): results go into a directory of their own, e.g. results/%s", o.out, cmp.Or(filepath.Base(split), fmt.Sprint(err)), o.g.Name), true
	}
	if f.emit == "slurm" {
		return f.emitSlurm(env, o, args), true
	}
	if !f.resume {
		ids, err := resultsdir.FinishedRuns(o.out)
		if err != nil {
			return fail(exitUsage, "%v", err), true
		}
		if len(ids) > 0 {
			return fail(exitUsage, "%s already holds %d finished runs (e.g. %s) and -resume=false; pick another -out or remove the directory",
				o.out, len(ids), ids[0]), true
		}
	}
	if f.analyze != "" {
		return 0, false
	}
	if err := sweep.CheckDatasets(o.dataRoot, o.selected); err != nil {
		return fail(exitUsage, "%v (the comments of %s may say where to get it)", err, o.g.Path), true
	}
	if env.preflight != nil {
		notes, err := env.preflight(o.g, o.dataRoot, o.out, runspec.Unfinished(o.out, o.selected))
		for _, n := range notes {
			fmt.Fprintln(env.stderr, n)
		}
		if err != nil {
			return fail(exitUsage, "%v\nnothing was trained: fix the grid (or the data) and start again", err), true
		}
	}
	return 0, false
}

// emitSlurm writes the SLURM array script instead of training.
func (f *sweepFlags) emitSlurm(env cliEnv, o *openGrid, args []string) int {
	fail := failer(env)
	if err := f.slurm.Check(); err != nil {
		return fail(exitUsage, "%v", err)
	}
	f.slurm.Out, f.slurm.DataRoot, f.slurm.Repo, f.slurm.Args = o.out, o.dataRoot, cmp.Or(o.repo, o.wd), args
	f.slurm.Samples, f.slurm.NoSamples = f.Samples, f.Samples == 0
	if err := f.slurm.Emit(env.stdout, env.stderr, o.g, o.selected); err != nil {
		return fail(exitRunsFailed, "%v", err)
	}
	return exitOK
}

// train runs the sweep and prints its summary.
func (f *sweepFlags) train(ctx context.Context, env cliEnv, o *openGrid, args []string) int {
	fail := failer(env)
	refPath, err := o.referencePath(f.Reference, false, env)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	// Without -reference a missing default file (outside the repository)
	// only means no paper.md.
	var ref *report.Reference
	if refPath != "" {
		if ref, err = report.ReadReference(refPath); err != nil && (f.Reference != "" || !errors.Is(err, os.ErrNotExist)) {
			return fail(exitUsage, "%v", err)
		}
	}
	s := sweep.New(o.g, o.selected, sweep.Options{Reference: ref,
		Out: o.out, DataRoot: o.dataRoot, Jobs: f.jobs, Samples: f.Samples, NoSamples: f.Samples == 0, StateEvery: f.stateEvery, Run: env.run,
		Stdout: env.stdout, Stderr: env.stderr, Bars: f.jobs == 1 && isTerminal(env.stderr), Quiet: env.quiet || f.quiet,
		Verbose: f.verbose, Command: append([]string{"experiments"}, args...), Rung: f.rung, RungTask: f.task, Promote: f.promote,
	})
	if err := s.Prepare(); err != nil {
		return fail(exitRunsFailed, "preparing %s: %v", o.out, err)
	}
	if f.adopt != "" {
		note, err := sweep.AdoptState(o.out, o.g.Runs, o.selected[0], paths.In(o.wd, f.adopt))
		if err != nil {
			return fail(exitUsage, "-adopt-state: %v", err)
		}
		fmt.Fprintf(env.stderr, "%s: %s\n", o.selected[0].ID, note)
	}
	fmt.Fprintf(env.stderr, "sweep %s: %d of %d runs selected, results in %s\n", o.g.Name, len(o.selected), len(o.g.Runs), o.out)
	r := s.Run(ctx)
	fmt.Fprintf(env.stderr, "sweep %s: %d finished, %d diverged, %d failed now; %d were already done; %d being trained elsewhere; %d interrupted, %d not started. Tables: %s\n",
		o.g.Name, r.Finished, r.Diverged, r.Failed, r.AlreadyDone, r.Busy, r.Interrupted, r.NotStarted, filepath.Join(o.out, resultsdir.ResultsMDName))
	if err := s.PrintSummary(); err != nil {
		// Like a failed results table: the runs are safe, the command fails.
		fmt.Fprintf(env.stderr, "error: printing the results table: %v\n", err)
		r.Problems++
	}
	return f.exitStatus(ctx, env, r)
}

// exitStatus says what the tally leaves to do and returns the status.
func (f *sweepFlags) exitStatus(ctx context.Context, env cliEnv, r sweep.Tally) int {
	if r.NoCheckpoint > 0 {
		fmt.Fprintf(env.stderr, "note: %d of the runs finished before have no readable checkpoint (named above): their rows stand, analyses pass them over\n", r.NoCheckpoint)
	}
	if f.Samples > 0 && r.AlreadyDone > 0 {
		fmt.Fprintf(env.stderr, "note: -samples applies to runs trained now; the %d runs finished before were not sampled again\n", r.AlreadyDone)
	}
	switch {
	case ctx.Err() != nil:
		fmt.Fprintln(env.stderr, "interrupted: unfinished runs keep only their resume state (runs/<id>/state.npz) and continue from it when the sweep is started again")
		return exitInterrupted
	case r.Failed > 0 || r.Problems > 0:
		fmt.Fprintln(env.stderr, "some runs failed: their errors are in runs/<id>/metrics.json; starting the sweep again retries them")
		return exitRunsFailed
	}
	return exitOK
}
