package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"path/filepath"

	"gekc/analysis"
	"gekc/sweep"
)

// analyzeFlags are the analyses' own flags.
type analyzeFlags struct {
	samples            int
	features, ktdTable string
	nnmf               bool
	reference          string
}

func (a *analyzeFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&a.samples, "samples", -1, "samples, ktd and tsne: the samples per run (default 25000)")
	fs.StringVar(&a.features, "features", "", "ktd and tsne: ID or directory of the finished ComplEx `run` giving ψ")
	fs.StringVar(&a.ktdTable, "ktd-table", "", "ktd: write the tables as `name`.tsv and .md (default ktd), e.g. beside those of another ψ")
	fs.BoolVar(&a.nnmf, "nnmfaug", false, "ktd: also measure the NNMFAug baseline (Chauhan et al. 2021) and say its test log-likelihood; minutes on a benchmark")
	fs.StringVar(&a.reference, "reference", "", "the reference `table` that paper.md compares with (default <repository>/results/paper-reference.tsv, the paper's; none for a grid with paper = false)")
}

// runAnalyze is the analyze verb: analyze KIND [flags].
func runAnalyze(ctx context.Context, args []string, env cliEnv) int {
	fail := failer(env)
	if len(args) == 0 || args[0] == "" || args[0][0] == '-' {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "-help") {
			fmt.Fprint(env.stderr, usage("analyze"))
			return exitOK
		}
		return fail(exitUsage, "analyze needs a KIND: samples, ktd, tsne, calibration, plots or paper (see analyze -h)")
	}
	return analyzeVerb(ctx, args[0], args[1:], env, usage("analyze"))
}

// runTables is the tables verb.
func runTables(ctx context.Context, args []string, env cliEnv) int {
	return analyzeVerb(ctx, "tables", args, env, usage("tables"))
}

// analyzeVerb parses an analysis' flags and runs it.
func analyzeVerb(ctx context.Context, kind string, args []string, env cliEnv, usage string) int {
	fs := flag.NewFlagSet("experiments "+kind, flag.ContinueOnError)
	var gf gridFlags
	var af analyzeFlags
	gf.register(fs)
	af.register(fs)
	if code, done := parseFlags(fs, usage, args, env); done {
		return code
	}
	fail := failer(env)
	if err := af.check(); err != nil {
		return fail(exitUsage, "%v", err)
	}
	o, err := gf.open(env)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	return analyzeRuns(ctx, env, o, af, kind)
}

// check refuses an analysis of no samples.
func (a *analyzeFlags) check() error {
	if a.samples == 0 {
		return errors.New("-samples 0 with -analyze: an analysis of samples needs some; give N > 0, or leave -samples out for 25000")
	}
	return nil
}

// analyzeRuns runs the analysis kind over the opened grid's finished runs:
// what both the analyze verb and the old form -analyze KIND do.
func analyzeRuns(ctx context.Context, env cliEnv, o *openGrid, af analyzeFlags, kind string) int {
	fail := failer(env)
	// Plots and the comparison with the paper read only the record: they
	// need no dataset.
	if kind != "plots" && kind != "paper" && kind != "tables" {
		if err := sweep.CheckDatasets(o.dataRoot, o.selected); err != nil {
			return fail(exitUsage, "%v (the comments of %s may say where to get it)", err, o.g.Path)
		}
	}
	ref, err := o.referencePath(af.reference, kind == "paper", env)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	// The paper's KTDs, whatever -reference says of Table 2's values.
	a := analysis.Options{Title: o.g.Name, Features: af.features, KTDTable: af.ktdTable, NNMFAug: af.nnmf, Reference: ref,
		KTDReference: filepath.Join(o.paperResults(), analysis.KTDReferenceName), Samples: af.samples, Out: o.out,
		DataRoot: o.dataRoot, Runs: o.selected, Stdout: env.stdout, Stderr: env.stderr}
	if err := analysis.Analyze(ctx, kind, a); err != nil {
		return fail(exitRunsFailed, "%v", err)
	}
	return exitOK
}
