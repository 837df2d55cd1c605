package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"

	"gekc/analysis"
	"gekc/query"
	"gekc/sweep"
)

const diagUsage = `usage: go run ./experiments diag NAME -run RUN [flags]

Diagnostics of one finished run, which the reproduction report cites:
  ll-by-seen   the test log-likelihood split by what training gave each
               test triple's entities (absent, or only in the other role),
               the mean row norms of role-specific tables (CP) in and out
               of their role, and a squared model's ε floor
RUN is a run directory, its checkpoint.npz, or a run ID (or unique prefix)
under -out's runs/ (default: every results/*/runs/ of the repository).

flags:
`

// diagnostics are the diag verb's names and what each runs.
var diagnostics = map[string]func(env cliEnv, fr *sweep.Finished) error{
	"ll-by-seen": diagLLBySeen,
}

// runDiag is the diag verb: diag NAME [flags].
func runDiag(_ context.Context, args []string, env cliEnv) int {
	fail := failer(env)
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "-help") {
			fmt.Fprint(env.stderr, diagUsage)
			return exitOK
		}
		return fail(exitUsage, "diag needs a NAME: ll-by-seen (see diag -h)")
	}
	diag, ok := diagnostics[args[0]]
	if !ok {
		return fail(exitUsage, "diag %q: want ll-by-seen", args[0])
	}
	fs := flag.NewFlagSet("experiments diag "+args[0], flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	var run, out, data string
	fs.StringVar(&run, "run", "", "finished `run`: directory, checkpoint.npz, or ID (required)")
	fs.StringVar(&out, "out", "", "results `directory` whose runs/ holds the run ID (default: every results/*/ of the repository)")
	fs.StringVar(&data, "data", "", "data root (default $GEKC_DATA, else <repository>/data)")
	fs.Usage = func() { fmt.Fprint(env.stderr, diagUsage); fs.PrintDefaults() }
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if run == "" {
		return fail(exitUsage, "diag %s: -run is required", args[0])
	}
	wd, err := workDir(env.dir)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	repo := findRepoRoot(wd)
	dir, err := findQueryRun(run, out, repo, wd)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	fr, err := sweep.LoadFinished(dir, inDir(wd, resolveDataRoot(data, env.getenv("GEKC_DATA"), repo)))
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	if err := diag(env, fr); err != nil {
		return fail(exitRunsFailed, "diag %s: %v", args[0], err)
	}
	return exitOK
}

// diagLLBySeen prints analysis.LLBySeen of the run's selected parameters.
func diagLLBySeen(env cliEnv, fr *sweep.Finished) error {
	dom, err := sweep.Constraint(fr.Spec, fr.Data)
	if err != nil {
		return err
	}
	q, err := query.New(fr.Model, dom, fr.Spec.Eval.BatchSize)
	if err != nil {
		return err
	}
	s, err := analysis.LLBySeen(fr.Model, fr.Data, q, q.LogPartition)
	if err != nil {
		return fmt.Errorf("%s: %w", fr.ID, err)
	}
	s.Write(env.stdout, fr.ID)
	return nil
}
