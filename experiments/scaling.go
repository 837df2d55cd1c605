package main

// The -scaling mode: the training-cost study of package scaling run as the
// command. The study measures each point in a child process, this command
// re-executed with the point in $GEKC_SCALING_POINT (see runCLI).

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gekc/internal/procstat"
	"gekc/scaling"
)

// scalingChildEnv holds the point of a child process; its presence is what
// makes the command a child.
const scalingChildEnv = scaling.ChildEnv

// scalingOptions are the -scaling flags: the lists as typed, the rest set
// in place in opts.
type scalingOptions struct {
	enabled                   bool
	models, batches, entities string
	opts                      scaling.Options
}

// addScalingFlags defines the -scaling flags on fs. The defaults are the
// paper's benchmark (scaling.DefaultOptions).
func addScalingFlags(fs *flag.FlagSet) *scalingOptions {
	d := scaling.DefaultOptions()
	o := &scalingOptions{opts: d}
	fs.BoolVar(&o.enabled, "scaling", false, "old form of the scaling verb (accepted, no effect)")
	fs.StringVar(&o.models, "scaling-models", strings.Join(d.Models, ","), "comma-separated `models` of the scaling study")
	fs.StringVar(&o.batches, "scaling-batches", joinInts(d.Batches), "comma-separated batch `sizes` of the study by batch size (empty: skip it)")
	fs.StringVar(&o.entities, "scaling-entities", joinInts(d.Entities), "comma-separated entity `counts` of the study by entities (empty: skip it)")
	fs.IntVar(&o.opts.AllEntities, "scaling-all-entities", d.AllEntities, "entities of the study by batch size (ogbl-wikikg2's)")
	fs.IntVar(&o.opts.Batch, "scaling-batch", d.Batch, "batch size of the study by entities")
	fs.IntVar(&o.opts.Relations, "scaling-relations", d.Relations, "relations of the synthetic graph (ogbl-wikikg2's)")
	fs.IntVar(&o.opts.Rank, "scaling-rank", d.Rank, "embedding size d")
	fs.IntVar(&o.opts.Warm, "scaling-warm", d.Warm, "warm-up steps before timing, per point")
	fs.IntVar(&o.opts.Steps, "scaling-steps", d.Steps, "timed steps per point; the median is reported")
	fs.DurationVar(&o.opts.Timeout, "scaling-timeout", d.Timeout, "time limit of one point, model set-up included (0: none)")
	fs.Var(&o.opts.MaxMem, "scaling-max-mem", "resident memory `size` a point may use, e.g. 20GiB or 512MiB (0: no cap); a point needing more is stopped and recorded as oom")
	return o
}

// scalingFlag names the flag of each field of scaling.Options.
var scalingFlag = map[string]string{
	"Models": "-scaling-models", "Batches": "-scaling-batches", "Entities": "-scaling-entities",
	"AllEntities": "-scaling-all-entities", "Batch": "-scaling-batch", "Relations": "-scaling-relations",
	"Rank": "-scaling-rank", "Warm": "-scaling-warm", "Steps": "-scaling-steps",
	"Timeout": "-scaling-timeout", "MaxMem": "-scaling-max-mem",
}

// options returns the study the flags describe, checked, with errors that
// name the flags. The models are reported first, then the lists, then the
// rest, as they always were.
func (o *scalingOptions) options() (scaling.Options, error) {
	so := o.opts
	so.Models = splitList(o.models)
	var errLists error
	var err error
	if so.Batches, err = parsePositiveList("-scaling-batches", o.batches); err != nil {
		errLists = err
	}
	if so.Entities, err = parsePositiveList("-scaling-entities", o.entities); err != nil && errLists == nil {
		errLists = err
	}
	_, err = so.Plan()
	var oe *scaling.OptionError
	models := errors.As(err, &oe) && oe.Option == "Models"
	switch {
	case errLists != nil && !models:
		return so, errLists
	case errors.Is(err, scaling.ErrNoPoints):
		return so, errors.New("-scaling-batches and -scaling-entities are both empty: nothing to measure")
	case oe != nil:
		named := *oe
		named.Option = cmp.Or(scalingFlag[oe.Option], oe.Option)
		return so, &named
	}
	return so, err
}

const scalingUsage = `usage: go run ./experiments scaling [-out DIR] [-scaling-* flags]

Measures the time and peak memory of one PLL training step of complex,
complex+ and complex2 on a synthetic graph of ogbl-wikikg2's size, by batch
size and by number of entities (the paper's figure 4), each point in a
child process with a memory cap: <out>/scaling.{tsv,md,png}, default out
results/scaling. Like a sweep it resumes where it stopped. -scaling is the
old form of this verb.

flags:
`

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
	fs.String("out", "", "results `directory` (default <repository>/results/scaling)")
	o := addScalingFlags(fs)
	var stray []string
	for _, a := range args {
		if name, ok := flagName(a); ok && fs.Lookup(name) == nil && name != "h" && name != "help" {
			stray = append(stray, "-"+name)
		}
	}
	if len(stray) > 0 {
		return failer(env)(exitUsage, "%s cannot be used with -scaling, which takes only -out and -scaling-* flags", strings.Join(stray, ", "))
	}
	if code, done := parseFlags(fs, scalingUsage, args, env); done {
		return code
	}
	return runScaling(ctx, fs, o, env)
}

// runScaling runs the study; fs has been parsed.
func runScaling(ctx context.Context, fs *flag.FlagSet, o *scalingOptions, env cliEnv) int {
	fail := failer(env)
	opts, err := o.options()
	if err != nil {
		return fail(exitUsage, "%v", err)
	}

	wd, err := workDir(env.dir)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	out := inDir(wd, cmp.Or(fs.Lookup("out").Value.String(), filepath.Join(resultsDir(findRepoRoot(wd), wd), "scaling")))
	exe, err := os.Executable()
	if err != nil {
		return fail(exitRunsFailed, "finding the executable to measure points in: %v", err)
	}
	if opts.MaxMem > 0 && !scaling.CapEnforced {
		fmt.Fprintf(env.stderr, "note: -scaling-max-mem is enforced on Linux only: points are not stopped at %s\n", opts.MaxMem)
	}
	if avail, err := procstat.MemAvailable(); err == nil && opts.MaxMem > 0 && int64(opts.MaxMem) > avail {
		fmt.Fprintf(env.stderr, "note: -scaling-max-mem %s is more than the %.1f GiB of memory available now: a large point may make the machine swap or be killed by the kernel (recorded as oom)\n",
			opts.MaxMem, float64(avail)/(1<<30))
	}
	s := &scaling.Study{Options: opts, Out: out, Exe: exe, Env: os.Environ(), Log: env.stderr}
	failed, err := s.Run(ctx)
	tsv := filepath.Join(out, scaling.TSVName)
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

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

// parsePositiveList parses a comma-separated list of positive integers,
// sorted and without repeats.
func parsePositiveList(flagName, s string) ([]int, error) {
	var out []int
	for _, f := range splitList(s) {
		n, err := strconv.Atoi(f)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%s: %q is not a positive integer", flagName, f)
		}
		out = append(out, n)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}
