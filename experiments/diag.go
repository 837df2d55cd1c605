package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"gekc/analysis"
	"gekc/resultsdir"
)

// runDiag is the diag verb: diag NAME [flags], analysis.Diagnose of one
// finished run.
func runDiag(_ context.Context, args []string, env cliEnv) int {
	fail := failer(env)
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "-help") {
			fmt.Fprint(env.stderr, usage("diag"))
			return exitOK
		}
		return fail(exitUsage, "diag needs a NAME: %s (see diag -h)", analysis.DiagnosticNames)
	}
	name := args[0]
	if !analysis.IsDiagnostic(name) {
		return fail(exitUsage, "diag %q: want %s", name, analysis.DiagnosticNames)
	}
	fs := flag.NewFlagSet("experiments diag "+name, flag.ContinueOnError)
	var f runFlags
	var o analysis.DiagOptions
	f.register(fs, "finished `run`: directory, checkpoint.npz, or ID (required)", "out")
	fs.StringVar(&o.Features, "features", "", "refit-relations, uniform-components: finished ComplEx `run` giving ψ (directory or ID)")
	fs.IntVar(&o.Samples, "samples", 25000, "refit-relations, uniform-components: samples drawn for the KTD")
	fs.IntVar(&o.Pairs, "pairs", 3000, "refit-relations: training pairs drawn to average p(r | s, o) over (0: none)")
	if code, done := parseFlags(fs, usage("diag"), args[1:], env); done {
		return code
	}
	if f.run == "" {
		return fail(exitUsage, "diag %s: -run is required", name)
	}
	dir, dataRoot, err := f.find(f.run, env)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	fr, err := resultsdir.LoadFinished(dir, dataRoot)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	if o.Features != "" {
		if o.Features, _, err = f.find(o.Features, env); err != nil {
			return fail(exitUsage, "-features: %v", err)
		}
	}
	o.DataRoot = dataRoot
	if err := analysis.Diagnose(name, env.stdout, fr, o); err != nil {
		return fail(exitRunsFailed, "diag %s: %v", name, err)
	}
	return exitOK
}
