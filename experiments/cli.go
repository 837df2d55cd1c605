package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"

	"gekc/internal/editdist"
)

// A verb is one mode of the command, with its own flags (VERB -h).
type verb struct {
	name, synopsis string
	run            func(ctx context.Context, args []string, env cliEnv) int
}

// verbs lists the command's modes in the order -h shows them.
var verbs []verb

func init() {
	verbs = []verb{
		{"sweep", "train a grid's runs into a results directory (the default: -grid G alone means sweep -grid G)", runSweep},
		{"analyze", "analyse a grid's finished runs: samples, ktd, tsne, calibration, plots or paper", runAnalyze},
		{"tables", "write results.tsv, results.md and paper.md again from the run records", func(ctx context.Context, args []string, env cliEnv) int {
			return analyzeVerb(ctx, "tables", args, env, usage("tables"))
		}},
		{"scaling", "the training-cost study: step time and memory by batch size and entities", runScalingVerb},
		{"query", "ask a finished run's model: completions, probabilities, marginals, samples", runQuery},
		{"synth", "write a data set sampled from a finished run or a planted GeKC", runSynth},
		{"diag", "diagnostics of one finished run the report cites: ll-by-seen, refit-relations, uniform-components", runDiag},
	}
}

// runCLI dispatches to a verb: the first argument when it names one, else
// sweep, whose old flag forms -analyze and -scaling lead to their verbs.
func runCLI(ctx context.Context, args []string, env cliEnv) int {
	if job := env.getenv(scalingChildEnv); job != "" {
		return runScalingChild(job, env.stdout, env.stderr)
	}
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
			var b strings.Builder // the verbs, one line each
			for _, v := range verbs {
				fmt.Fprintf(&b, "  %-8s %s\n", v.name, v.synopsis)
			}
			fmt.Fprintf(env.stderr, usage("command")+"\n", b.String())
		}
		return runSweep(ctx, args, env)
	}
	for _, v := range verbs {
		if v.name == args[0] {
			return v.run(ctx, args[1:], env)
		}
	}
	names := make([]string, len(verbs))
	for i, v := range verbs {
		names[i] = v.name
	}
	msg := fmt.Sprintf("experiments: unknown verb %q; want one of %s", args[0], strings.Join(names, ", "))
	if s := editdist.Closest(args[0], names); s != "" {
		msg += fmt.Sprintf(" (did you mean %s?)", s)
	}
	fmt.Fprintln(env.stderr, msg)
	return exitUsage
}

// nameArg is the name a verb takes before its flags (analyze KIND, diag
// NAME); ok false ends the verb with code: its help for -h, else a usage
// error saying it needs one of names.
func nameArg(args []string, verb, what, names string, env cliEnv) (name string, code int, ok bool) {
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		return args[0], 0, true
	}
	if len(args) > 0 && (args[0] == "-h" || args[0] == "-help") {
		fmt.Fprint(env.stderr, usage(verb))
		return "", exitOK, false
	}
	return "", failer(env)(exitUsage, "%s needs a %s: %s (see %s -h)", verb, what, names, verb), false
}

// parseFlags parses a verb's flags, printing usage and the flags for -h.
// done reports that the verb should end with code: after -h (exitOK), a
// flag error or an argument left over (exitUsage).
func parseFlags(fs *flag.FlagSet, usage string, args []string, env cliEnv) (code int, done bool) {
	if code, done := parse(fs, usage, args, env); done {
		return code, done
	}
	if fs.NArg() > 0 {
		return failer(env)(exitUsage, "unexpected argument %q; flags come before nothing else (see -h)", fs.Arg(0)), true
	}
	return 0, false
}

// runSubcommand parses a subcommand's flags as parseFlags does, refuses
// stray arguments and runs execute; every failure is a usage error,
// printed as "<flag set name>: <error>".
func runSubcommand(fs *flag.FlagSet, usage string, args []string, env cliEnv, execute func() error) int {
	if code, done := parse(fs, usage, args, env); done {
		return code
	}
	var err error
	if fs.NArg() > 0 {
		err = fmt.Errorf("unexpected argument %q (see -h)", fs.Arg(0))
	} else {
		err = execute()
	}
	if err != nil {
		fmt.Fprintf(env.stderr, "%s: %v\n", fs.Name(), err)
		return exitUsage
	}
	return exitOK
}

// parse parses fs: done after -h (exitOK) or a flag error (exitUsage).
func parse(fs *flag.FlagSet, usage string, args []string, env cliEnv) (code int, done bool) {
	fs.SetOutput(env.stderr)
	fs.Usage = func() { fmt.Fprint(env.stderr, usage); fs.PrintDefaults() }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK, true
		}
		return exitUsage, true
	}
	return 0, false
}
