package main

import (
	"context"
	"flag"

	"gekc/analysis"
	"gekc/resultsdir"
)

// runDiag is the diag verb: diag NAME [flags], analysis.Diagnose of one
// finished run.
func runDiag(_ context.Context, args []string, env cliEnv) int {
	name, code, ok := nameArg(args, "diag", "NAME", analysis.DiagnosticNames, env)
	if !ok {
		return code
	}
	fail := failer(env)
	if !analysis.IsDiagnostic(name) {
		return fail(exitUsage, "diag %q: want %s", name, analysis.DiagnosticNames)
	}
	fs := flag.NewFlagSet("experiments diag "+name, flag.ContinueOnError)
	var f runFlags
	var o analysis.DiagOptions
	f.register(fs)
	o.Flags(fs)
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
