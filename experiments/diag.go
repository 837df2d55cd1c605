package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"

	"gekc/analysis"
	"gekc/metrics"
	"gekc/models"
	"gekc/query"
	"gekc/sweep"
)

const diagUsage = `usage: go run ./experiments diag NAME -run RUN [flags]

Diagnostics of one finished run, which the reproduction report cites:
  ll-by-seen   the test log-likelihood split by what training gave each
               test triple's entities (absent, or only in the other role),
               the mean row norms of role-specific tables (CP) in and out
               of their role, and a squared model's ε floor
  refit-relations
               what a squared GeKC's relation marginal p(R) costs it: p(R)'s
               distance to the training frequencies, the test LL and, with
               -features, the KTD, before and after refitting each
               relation's scale in closed form (which changes no ranking);
               first the mean p(r | s, o) over -pairs training pairs
  uniform-components
               a non-negative mixture's (cp+, rescal+, tucker+) samples drawn
               with components by mass (exact) and uniformly (the paper's
               code): their KTD (needs -features) and training share
The run is measured at its checkpoint's parameters (ll-by-seen) or at those
its samples come from (the others: checkpoint-ll.npz when it kept them).
RUN is a run directory, its checkpoint.npz, or a run ID (or unique prefix)
under -out's runs/ (default: every results/*/runs/ of the repository).

flags:
`

// diagFlags are the diag verb's flags.
type diagFlags struct {
	run, out, data, features string
	samples, pairs           int
}

// diagnostics are the diag verb's names and what each runs.
var diagnostics = map[string]func(env cliEnv, fr *sweep.Finished, f diagFlags, dataRoot string) error{
	"ll-by-seen": diagLLBySeen, "refit-relations": diagRefitRelations, "uniform-components": diagUniformComponents,
}

const diagNames = "ll-by-seen, refit-relations or uniform-components"

// runDiag is the diag verb: diag NAME [flags].
func runDiag(_ context.Context, args []string, env cliEnv) int {
	fail := failer(env)
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "-help") {
			fmt.Fprint(env.stderr, diagUsage)
			return exitOK
		}
		return fail(exitUsage, "diag needs a NAME: %s (see diag -h)", diagNames)
	}
	diag, ok := diagnostics[args[0]]
	if !ok {
		return fail(exitUsage, "diag %q: want %s", args[0], diagNames)
	}
	fs := flag.NewFlagSet("experiments diag "+args[0], flag.ContinueOnError)
	var f diagFlags
	fs.StringVar(&f.run, "run", "", "finished `run`: directory, checkpoint.npz, or ID (required)")
	fs.StringVar(&f.out, "out", "", "results `directory` whose runs/ holds the run ID (default: every results/*/ of the repository)")
	fs.StringVar(&f.data, "data", "", "data root (default $GEKC_DATA, else <repository>/data)")
	fs.StringVar(&f.features, "features", "", "refit-relations, uniform-components: finished ComplEx `run` giving ψ (directory or ID)")
	fs.IntVar(&f.samples, "samples", 25000, "refit-relations, uniform-components: samples drawn for the KTD")
	fs.IntVar(&f.pairs, "pairs", 3000, "refit-relations: training pairs drawn to average p(r | s, o) over (0: none)")
	if code, done := parseFlags(fs, diagUsage, args[1:], env); done {
		return code
	}
	if f.run == "" {
		return fail(exitUsage, "diag %s: -run is required", args[0])
	}
	wd, err := workDir(env.dir)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	repo := findRepoRoot(wd)
	dir, err := findQueryRun(f.run, f.out, repo, wd)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	dataRoot := inDir(wd, resolveDataRoot(f.data, env.getenv("GEKC_DATA"), repo))
	fr, err := sweep.LoadFinished(dir, dataRoot)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	if f.features != "" {
		if f.features, err = findQueryRun(f.features, f.out, repo, wd); err != nil {
			return fail(exitUsage, "-features: %v", err)
		}
	}
	if err := diag(env, fr, f, dataRoot); err != nil {
		return fail(exitRunsFailed, "diag %s: %v", args[0], err)
	}
	return exitOK
}

// diagLLBySeen prints analysis.LLBySeen of the run's selected parameters.
func diagLLBySeen(env cliEnv, fr *sweep.Finished, _ diagFlags, _ string) error {
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

// diagRefitRelations runs analysis.Refit at the run's sampled parameters.
func diagRefitRelations(env cliEnv, fr *sweep.Finished, f diagFlags, dataRoot string) error {
	if fr.Model.Semantics != models.Squared {
		return fmt.Errorf("%s is %s, not a squared GeKC", fr.ID, fr.Spec.Model)
	}
	if err := fr.LoadSampledParameters(); err != nil {
		return err
	}
	dom, err := sweep.Constraint(fr.Spec, fr.Data)
	if err != nil {
		return err
	}
	rf := &analysis.Refit{ID: fr.ID, Model: fr.Model, Domain: dom, Data: fr.Data, Batch: fr.Spec.Eval.BatchSize,
		Pairs: f.pairs, Seed: uint64(fr.Spec.Seed), Samples: f.samples}
	if f.features != "" {
		if rf.Features, err = diagFeatures(f.features, dataRoot); err != nil {
			return err
		}
	}
	return rf.Run(env.stdout)
}

// diagUniformComponents runs analysis.UniformComponents at the run's
// sampled parameters.
func diagUniformComponents(env cliEnv, fr *sweep.Finished, f diagFlags, dataRoot string) error {
	if f.features == "" {
		return errors.New("-features is required: the finished ComplEx run giving ψ")
	}
	if err := fr.LoadSampledParameters(); err != nil {
		return err
	}
	psi, err := diagFeatures(f.features, dataRoot)
	if err != nil {
		return err
	}
	return analysis.UniformComponents(env.stdout, fr.ID, fr.Model, fr.Data, psi, f.samples, uint64(fr.Spec.Seed))
}

// diagFeatures is ψ of the finished run in dir: its model's product units.
func diagFeatures(dir, dataRoot string) (metrics.TripleFeatures, error) {
	ref, err := sweep.LoadFinished(dir, dataRoot)
	if err != nil {
		return nil, err
	}
	return metrics.ProductUnitFeatures(ref.Model)
}
