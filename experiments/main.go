package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"gekc/analysis"
	_ "gekc/graph/openblas" // OpenBLAS and flushed subnormals for this process (see its doc)
	"gekc/grid"
	"gekc/kg"
	"gekc/report"
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
func mainWith(run sweep.RunFunc, check sweep.Preflight) int {
	return mainWithin(context.Background(), run, check)
}

// mainWithin is mainWith under a parent context, whose cancellation stops
// the command as a signal does.
func mainWithin(parent context.Context, run sweep.RunFunc, check sweep.Preflight) int {
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
		stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv, run: run, validate: sweep.Validate, preflight: check,
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
	preflight sweep.Preflight
	quiet     bool // no per-epoch progress, as -q
}

const usageText = `usage: go run ./experiments -grid FILE [flags]
       go run ./experiments -scaling [-out DIR] [-scaling-* flags]
       go run ./experiments query -run RUN [-s NAME] [-r NAME] [-o NAME] [flags]   (see query -h)
       go run ./experiments synth (-run RUN | -planted MODEL ...) -out DIR -train N -valid N -test N   (see synth -h)

Expands a TOML grid of training runs and trains them into a results
directory: runs/<id>/{config.toml,metrics.json,checkpoint.npz}, results.tsv
and results.md, updated as each run ends. The sweep ends by printing the
best configuration of each model and objective on stdout (test MRR,
Hits@10, log-likelihood, time); progress goes to stderr. -grid NAME that is
not a file means grids/NAME or grids/NAME.toml of the repository. Before
any training, the grid and the data sets are checked and every problem
found is reported at once. Stop it at any time and start it
again: finished runs are kept and never repeated. Several processes may share
one results directory (-j, SLURM arrays, two terminals). Each finished or
diverged run also gets runs/<id>/curves.png (loss and validation metrics by
epoch), and runs/<id>/calibration.png when eval.metrics has "ece".

-analyze works on the finished runs of the grid in -out instead of training:
  samples      sample triples from each GeKC into runs/<id>/samples.tsv, and
               audit them against its exact probabilities (each split's
               mass and share of the samples, the entropy):
               sample-audit.tsv and sample-audit.md
  ktd          kernel triple distance of the samples (needs -features)
  tsne         the paper's t-SNE figure of test and sampled triples (their
               product units under -features' model): runs/<id>/tsne.png
  calibration  ECE of every run on the test split (logistic and min-max);
               runs/<id>/calibration.png, calibration.tsv and calibration.md
  plots        draw runs/<id>/curves.png again from metrics.json
  paper        the best configurations beside the paper's Table 2 values
               (-reference FILE for another table, and for a grid with
               paper = false): writes paper.md

-scaling measures the time and peak memory of one PLL training step of
complex, complex+ and complex2 on a synthetic graph of ogbl-wikikg2's size,
by batch size and by number of entities (the paper's figure 4), each point
in a child process with a memory cap: <out>/scaling.{tsv,md,png}, default
out results/scaling. Like a sweep it resumes where it stopped.

flags:
`

func runCLI(ctx context.Context, args []string, env cliEnv) int {
	if len(args) > 0 && args[0] == "query" {
		return runQuery(ctx, args[1:], env)
	}
	if len(args) > 0 && args[0] == "synth" {
		return runSynth(ctx, args[1:], env)
	}
	if job := env.getenv(scalingChildEnv); job != "" {
		return runScalingChild(job, env.stdout, env.stderr)
	}
	fs := flag.NewFlagSet("experiments", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	var (
		gridPath   = fs.String("grid", "", "grid `file` (required), e.g. grids/umls.toml; a NAME that is no file means grids/NAME[.toml] of the repository")
		dataFlag   = fs.String("data", "", "data root holding one directory per dataset (default $GEKC_DATA, else <repository>/data)")
		outFlag    = fs.String("out", "", "results `directory` (default <repository>/results/<grid name>)")
		dryRun     = fs.Bool("dry-run", false, "list the expanded runs and their state, and exit")
		listFormat = fs.String("format", "text", "with -dry-run: text (tables for a person) or json (one object per run and line, for scripts)")
		resume     = fs.Bool("resume", true, "skip finished runs; false refuses to start if -out holds any")
		only       = fs.String("only", "", "run only these: indices and ranges (3 or 0-5,9), or re:EXPR matching run IDs")
		jobs       = fs.Int("j", 1, "runs trained at once by this process")
		emit       = fs.String("emit", "", `write a job script instead of running: "slurm" writes <out>/sbatch.sh`)
		samples    = fs.Int("samples", -1, "sample `N` triples after each run trained now, in place of the grid's samples (0: none; absent: the grid's); with -analyze, the samples per run (default 25000)")
		analyze    = fs.String("analyze", "", "analyse finished runs instead of training: \"samples\", \"ktd\", \"tsne\", \"calibration\", \"plots\", \"paper\" or \"tables\" (results.tsv, results.md and paper.md again from the run records)")
		features   = fs.String("features", "", "for -analyze ktd and tsne: ID or directory of the finished ComplEx `run` giving ψ")
		ktdTable   = fs.String("ktd-table", "", "for -analyze ktd: write the tables as `name`.tsv and .md (default ktd), e.g. beside those of another ψ")
		nnmf       = fs.Bool("nnmfaug", false, "for -analyze ktd: also measure the NNMFAug baseline (Chauhan et al. 2021) and say its test log-likelihood; minutes on a benchmark")
		reference  = fs.String("reference", "", "the reference `table` that paper.md compares with (default <repository>/results/paper-reference.tsv, the paper's; none for a grid with paper = false)")
		adopt      = fs.String("adopt-state", "", "continue the one run -only selects from another run's resume state `file`, when the two differ only in a larger patience or epoch bound (that run must be in the grid, or its config.toml beside the file)")
		stateEvery = fs.Duration("state-every", 5*time.Minute, "save each unfinished run's resume state at most this `often`, after an epoch or inside a long one (0: after every epoch only, negative: never)")
		verbose    = fs.Bool("v", false, "verbose: a line for every epoch of every run (loss, validation metrics)")
		memory     = fs.String("memory", "", "memory budget of each run whose grid sets no memory key, e.g. 12GiB (default GOMEMLIMIT, else 90% of the machine's memory): the evaluation batch is cut to fit it, and a run that cannot fit is refused before training")
		quiet      = fs.Bool("q", false, "quiet: no per-epoch progress, only a line per run")
		scaling    = addScalingFlags(fs)
		slurm      = addSlurmFlags(fs)
	)
	fs.Usage = func() {
		fmt.Fprint(env.stderr, usageText)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(env.stderr, "experiments: "+format+"\n", a...)
		return code
	}
	switch {
	case fs.NArg() > 0:
		return fail(exitUsage, "unexpected argument %q; flags come before nothing else (see -h)", fs.Arg(0))
	case scaling.enabled:
		return runScaling(ctx, fs, scaling, env)
	case *gridPath == "":
		return fail(exitUsage, "-grid is required, e.g. -grid grids/umls.toml")
	case *jobs < 1:
		return fail(exitUsage, "-j %d: want at least 1", *jobs)
	case *listFormat != "text" && *listFormat != "json":
		return fail(exitUsage, "-format %q: want text or json", *listFormat)
	case *listFormat != "text" && !*dryRun:
		return fail(exitUsage, "-format goes with -dry-run")
	case *emit != "" && *emit != "slurm":
		return fail(exitUsage, "-emit %q: only \"slurm\" is supported", *emit)
	case *verbose && *quiet:
		return fail(exitUsage, "-v and -q: choose one")
	case *adopt != "" && (*analyze != "" || *dryRun || *emit != ""):
		return fail(exitUsage, "-adopt-state trains a run: it cannot go with -analyze, -dry-run or -emit")
	case *analyze != "" && *samples == 0:
		return fail(exitUsage, "-samples 0 with -analyze: an analysis of samples needs some; give N > 0, or leave -samples out for 25000")
	}

	wd, err := workDir(env.dir)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	repo := findRepoRoot(wd)
	validate := env.validate
	if validate == nil {
		validate = grid.DefaultValidator
	}
	g, err := grid.LoadGrid(resolveGridPath(*gridPath, wd, repo), validate)
	if errors.Is(err, os.ErrNotExist) && repo != "" {
		return fail(exitUsage, "%v (nor is there %s or %s.toml)", err, filepath.Join(repo, "grids", *gridPath), filepath.Join(repo, "grids", *gridPath))
	}
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	selected, err := grid.Select(*only, g.Runs)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	if *memory != "" {
		if _, err := sweep.MemoryBudget(grid.RunSpec{Memory: *memory}); err != nil {
			return fail(exitUsage, "-memory: %v", err)
		}
		// The key is not part of a run's ID: setting it changes no run.
		for i := range selected {
			if selected[i].Spec.Memory == "" {
				selected[i].Spec.Memory = *memory
			}
		}
	}
	if *adopt != "" && len(selected) != 1 {
		return fail(exitUsage, "-adopt-state needs -only to select one run of %s, not %d", g.Path, len(selected))
	}

	dataRoot := inDir(wd, resolveDataRoot(*dataFlag, env.getenv("GEKC_DATA"), repo))
	out := inDir(wd, cmp.Or(*outFlag, filepath.Join(resultsDir(repo, wd), g.Name)))

	if !g.Named() && sameFile(*gridPath, filepath.Join(out, sweep.GridCopyName)) {
		// Run from its own copy (as SLURM tasks are), an unnamed grid would
		// be called "grid"; the results directory names it better.
		g.Name = filepath.Base(out)
	}
	if *dryRun {
		list := sweep.WriteRunList
		if *listFormat == "json" {
			list = sweep.WriteRunJSON
		}
		if err := list(env.stdout, g, selected, out, dataRoot); err != nil {
			return fail(exitRunsFailed, "%v", err)
		}
		return exitOK
	}
	if split, err := kg.TrainingSplit(out); (split != "" || err != nil) && *analyze == "" {
		return fail(exitUsage, "-out %s is a data set (%s): results go into a directory of their own, e.g. results/%s", out, cmp.Or(filepath.Base(split), fmt.Sprint(err)), g.Name)
	}
	if *emit == "slurm" {
		if err := slurm.Check(); err != nil {
			return fail(exitUsage, "%v", err)
		}
		slurm.Out, slurm.DataRoot, slurm.Repo, slurm.Args = out, dataRoot, cmp.Or(repo, wd), args
		slurm.Samples, slurm.NoSamples = *samples, *samples == 0
		if err := slurm.Emit(env.stdout, env.stderr, g, selected); err != nil {
			return fail(exitRunsFailed, "%v", err)
		}
		return exitOK
	}
	if !*resume {
		ids, err := sweep.FinishedRuns(out)
		if err != nil {
			return fail(exitUsage, "%v", err)
		}
		if len(ids) > 0 {
			return fail(exitUsage, "%s already holds %d finished runs (e.g. %s) and -resume=false; pick another -out or remove the directory",
				out, len(ids), ids[0])
		}
	}
	// Plots and the comparison with the paper read only the record: they
	// need no dataset.
	if *analyze != "plots" && *analyze != "paper" && *analyze != "tables" {
		if err := sweep.CheckDatasets(dataRoot, selected); err != nil {
			return fail(exitUsage, "%v (the comments of %s may say where to get it)", err, g.Path)
		}
	}
	if *analyze == "" && env.preflight != nil {
		notes, err := env.preflight(g, dataRoot, out, sweep.Unfinished(out, selected))
		for _, n := range notes {
			fmt.Fprintln(env.stderr, n)
		}
		if err != nil {
			return fail(exitUsage, "%v\nnothing was trained: fix the grid (or the data) and start again", err)
		}
	}
	// The paper's values (or -reference's): a sweep writes paper.md beside
	// results.md when they cover one of its datasets. Without -reference a
	// missing default file (outside the repository) only means no paper.md.
	// Run from outside the repository (a sweep kept elsewhere), the grid's
	// repository still has the paper's values.
	paperResults := resultsDir(cmp.Or(repo, findRepoRoot(filepath.Dir(inDir(wd, g.Path)))), wd)
	// A grid with paper = false (its runs follow another protocol) is
	// compared with nothing unless -reference asks.
	refPath := *reference
	switch {
	case refPath != "":
		refPath = inDir(wd, refPath)
	case g.NotPaper:
		if *analyze == "paper" {
			return fail(exitUsage, "%s says paper = false (its runs do not follow the paper's protocol): -analyze paper compares it only with -reference FILE", g.Path)
		}
		if _, err := os.Stat(filepath.Join(out, sweep.PaperMDName)); err == nil {
			fmt.Fprintf(env.stderr, "note: %s is left from before: %s says paper = false, so nothing writes it now; remove it\n",
				filepath.Join(out, sweep.PaperMDName), g.Path)
		}
	default:
		refPath = filepath.Join(paperResults, "paper-reference.tsv")
	}
	if *analyze != "" {
		// The paper's KTDs, whatever -reference says of Table 2's values.
		a := &sweep.Analysis{Kind: *analyze, Title: g.Name, Features: *features, KTDTable: *ktdTable, NNMFAug: *nnmf, Reference: refPath,
			KTDReference: filepath.Join(paperResults, analysis.KTDReferenceName), Samples: *samples, Out: out,
			DataRoot: dataRoot, Runs: selected, Stdout: env.stdout, Stderr: env.stderr}
		if err := a.Run(ctx); err != nil {
			return fail(exitRunsFailed, "%v", err)
		}
		return exitOK
	}

	var ref *report.Reference
	if refPath != "" {
		if ref, err = report.ReadReference(refPath); err != nil && (*reference != "" || !errors.Is(err, os.ErrNotExist)) {
			return fail(exitUsage, "%v", err)
		}
	}
	s := sweep.New(g, selected, sweep.Options{Reference: ref,
		Out: out, DataRoot: dataRoot, Jobs: *jobs, Samples: *samples, NoSamples: *samples == 0, StateEvery: *stateEvery, Run: env.run,
		Stdout: env.stdout, Stderr: env.stderr, Bars: *jobs == 1 && isTerminal(env.stderr), Quiet: env.quiet || *quiet,
		Verbose: *verbose, Command: append([]string{"experiments"}, args...),
	})
	if err := s.Prepare(); err != nil {
		return fail(exitRunsFailed, "preparing %s: %v", out, err)
	}
	if *adopt != "" {
		note, err := sweep.AdoptState(out, g.Runs, selected[0], inDir(wd, *adopt))
		if err != nil {
			return fail(exitUsage, "-adopt-state: %v", err)
		}
		fmt.Fprintf(env.stderr, "%s: %s\n", selected[0].ID, note)
	}
	fmt.Fprintf(env.stderr, "sweep %s: %d of %d runs selected, results in %s\n", g.Name, len(selected), len(g.Runs), out)
	r := s.Run(ctx)
	fmt.Fprintf(env.stderr, "sweep %s: %d finished, %d diverged, %d failed now; %d were already done; %d being trained elsewhere; %d interrupted, %d not started. Tables: %s\n",
		g.Name, r.Finished, r.Diverged, r.Failed, r.AlreadyDone, r.Busy, r.Interrupted, r.NotStarted, filepath.Join(out, sweep.ResultsMDName))
	if err := s.PrintSummary(); err != nil {
		// Like a failed results table: the runs are safe, the command fails.
		fmt.Fprintf(env.stderr, "error: printing the results table: %v\n", err)
		r.Problems++
	}
	if r.NoCheckpoint > 0 {
		fmt.Fprintf(env.stderr, "note: %d of the runs finished before have no readable checkpoint (named above): their rows stand, analyses pass them over\n", r.NoCheckpoint)
	}
	if *samples > 0 && r.AlreadyDone > 0 {
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

func sameFile(a, b string) bool {
	sa, err := os.Stat(a)
	if err != nil {
		return false
	}
	sb, err := os.Stat(b)
	return err == nil && os.SameFile(sa, sb)
}

// isTerminal reports whether w is a terminal, where progress bars make sense.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
