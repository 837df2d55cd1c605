package main

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"gekc/internal/paths"
	"gekc/query"
	"gekc/resultsdir"
)

// runFlags name a finished run and where to find it, as query, synth and
// diag take it.
type runFlags struct{ run, out, data string }

func (f *runFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.run, "run", "", "finished `run`: directory, checkpoint.npz, or ID (required)")
	fs.StringVar(&f.out, "out", "", "results `directory` whose runs/ holds the run ID (default: every results/*/ of the repository)")
	fs.StringVar(&f.data, "data", "", "data root (default $GEKC_DATA, else <repository>/data)")
}

// find resolves ref (-run, or another flag naming a run) to its directory
// (resultsdir.FindRun: a directory, its checkpoint.npz, or an ID under
// -out's runs/, or under every results/*/runs/ of the repository), and
// the data root.
func (f *runFlags) find(ref string, env cliEnv) (dir, dataRoot string, err error) {
	wd, err := workDir(env.dir)
	if err != nil {
		return "", "", err
	}
	repo, out := paths.Root(wd), ""
	if f.out != "" {
		out = paths.In(wd, f.out)
	}
	dir, err = resultsdir.FindRun(ref, out, paths.Results(repo, wd))
	return dir, paths.In(wd, paths.DataRoot(f.data, env.getenv("GEKC_DATA"), repo)), err
}

// runQuery is the query verb.
func runQuery(_ context.Context, args []string, env cliEnv) int {
	fs := flag.NewFlagSet("experiments query", flag.ContinueOnError)
	var f runFlags
	var q query.Question
	var format string
	var batch int
	f.register(fs)
	q.Flags(fs)
	fs.StringVar(&format, "format", "text", "output: text, tsv or json")
	fs.IntVar(&batch, "batch", 256, "evaluation batch size")
	return runSubcommand(fs, usage("query"), args, env, func() error {
		switch {
		case f.run == "":
			return errors.New("-run is required: a run directory, its checkpoint.npz, or a run ID")
		case format != "text" && format != "tsv" && format != "json":
			return fmt.Errorf("-format %q: want text, tsv or json", format)
		case q.Check() != nil:
			return q.Check()
		case batch <= 0:
			return fmt.Errorf("-batch %d: want a positive size", batch)
		}
		dir, dataRoot, err := f.find(f.run, env)
		if err != nil {
			return err
		}
		a, fr, err := query.OpenRun(dir, dataRoot, batch)
		if err != nil {
			return err
		}
		res, err := a.Ask(q)
		if err != nil {
			return err
		}
		res.Run, res.Model = fr.ID, fr.Spec.Model
		return res.Write(env.stdout, format)
	})
}
