package main

// The scaling verb: the training-cost study of package scaling run as the
// command. The study measures each point in a child process, this command
// re-executed with the point in $GEKC_SCALING_POINT (see runCLI).

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"gekc/internal/paths"
	"gekc/scaling"
)

// scalingChildEnv holds the point of a child process; its presence is what
// makes the command a child.
const scalingChildEnv = scaling.ChildEnv

// scalingAlias reports whether args are the old form -scaling [flags].
func scalingAlias(args []string) bool {
	for _, a := range args {
		if name, ok := flagName(a); ok && name == "scaling" {
			return true
		}
	}
	return false
}

// flagName is the name of the flag argument a ("-x", "--x", "-x=v"), and
// false for an argument that is no flag.
func flagName(a string) (string, bool) {
	if !strings.HasPrefix(a, "-") || a == "-" {
		return "", false
	}
	name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
	return name, true
}

// runScalingVerb is the scaling verb (and the old form -scaling).
func runScalingVerb(ctx context.Context, args []string, env cliEnv) int {
	fs := flag.NewFlagSet("experiments scaling", flag.ContinueOnError)
	out := fs.String("out", "", "results `directory` (default <repository>/results/scaling)")
	sf := scaling.NewFlags(fs)
	var stray []string
	for _, a := range args {
		if name, ok := flagName(a); ok && fs.Lookup(name) == nil && name != "h" && name != "help" {
			stray = append(stray, "-"+name)
		}
	}
	fail := failer(env)
	if len(stray) > 0 {
		return fail(exitUsage, "%s cannot be used with -scaling, which takes only -out and -scaling-* flags", strings.Join(stray, ", "))
	}
	if code, done := parseFlags(fs, usage("scaling"), args, env); done {
		return code
	}
	opts, err := sf.Options()
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	wd, err := workDir(env.dir)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	dir := paths.In(wd, cmp.Or(*out, filepath.Join(paths.Results(paths.Root(wd), wd), "scaling")))
	failed, err := scaling.Measure(ctx, opts, dir, env.stderr)
	tsv := filepath.Join(dir, scaling.TSVName)
	switch {
	case ctx.Err() != nil:
		fmt.Fprintln(env.stderr, "interrupted: the points measured so far are in "+tsv+"; starting the study again measures the rest")
		return exitInterrupted
	case err != nil:
		return fail(exitRunsFailed, "%v", err)
	case failed > 0:
		// Running out of memory is a result; a timeout or an error is not.
		return fail(exitRunsFailed, "%d points timed out or failed (status in %s); starting the study again retries them", failed, tsv)
	}
	return exitOK
}

// runScalingChild measures the point of spec, the value of
// $GEKC_SCALING_POINT, as a child process of the study.
func runScalingChild(spec string, stdout, stderr io.Writer) int {
	err := scaling.RunChild(spec, stdout)
	if err == nil {
		return exitOK
	}
	fmt.Fprintf(stderr, "%v\n", err)
	if _, ok := errors.AsType[*scaling.SpecError](err); ok {
		return exitUsage
	}
	return exitRunsFailed
}
