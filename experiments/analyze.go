package main

import (
	"context"
	"flag"
	"path/filepath"

	"gekc/analysis"
	"gekc/sweep"
)

// runAnalyze is the analyze verb: analyze KIND [flags].
func runAnalyze(ctx context.Context, args []string, env cliEnv) int {
	kind, code, ok := nameArg(args, "analyze", "KIND", "samples, ktd, tsne, calibration, plots or paper", env)
	if !ok {
		return code
	}
	return analyzeVerb(ctx, kind, args[1:], env, usage("analyze"))
}

// analyzeVerb parses an analysis' flags and runs it.
func analyzeVerb(ctx context.Context, kind string, args []string, env cliEnv, usage string) int {
	fs := flag.NewFlagSet("experiments "+kind, flag.ContinueOnError)
	var gf gridFlags
	var af analysis.Options
	gf.register(fs)
	af.Flags(fs)
	if code, done := parseFlags(fs, usage, args, env); done {
		return code
	}
	fail := failer(env)
	if err := af.CheckFlags(); err != nil {
		return fail(exitUsage, "%v", err)
	}
	o, err := gf.open(env)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	return analyzeRuns(ctx, env, o, af, kind)
}

// analyzeRuns runs the analysis kind over the opened grid's finished runs:
// what both the analyze verb and the old form -analyze KIND do.
func analyzeRuns(ctx context.Context, env cliEnv, o *openGrid, a analysis.Options, kind string) int {
	fail := failer(env)
	// Plots and the comparison with the paper read only the record: they
	// need no dataset.
	if kind != "plots" && kind != "paper" && kind != "tables" {
		if err := sweep.CheckDatasets(o.dataRoot, o.selected); err != nil {
			return fail(exitUsage, "%v (the comments of %s may say where to get it)", err, o.g.Path)
		}
	}
	ref, err := o.referencePath(a.Reference, kind == "paper", env)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	// The paper's KTDs, whatever -reference says of Table 2's values.
	a.Title, a.Reference, a.KTDReference = o.g.Name, ref, filepath.Join(o.paperResults(), analysis.KTDReferenceName)
	a.Out, a.DataRoot, a.Runs, a.Stdout, a.Stderr = o.out, o.dataRoot, o.selected, env.stdout, env.stderr
	if err := analysis.Analyze(ctx, kind, a); err != nil {
		return fail(exitRunsFailed, "%v", err)
	}
	return exitOK
}
