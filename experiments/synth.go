package main

import (
	"context"
	"flag"
	"os"
	"strings"

	"gekc/resultsdir"
	"gekc/synth"
)

// runSynth is the synth verb: a data set sampled from a finished run or a
// planted GeKC (synth.Job).
func runSynth(_ context.Context, args []string, env cliEnv) int {
	fs := flag.NewFlagSet("experiments synth", flag.ContinueOnError)
	var f runFlags
	j := synth.Job{Command: "go run ./experiments synth " + strings.Join(os.Args[min(2, len(os.Args)):], " ")}
	fs.StringVar(&f.run, "run", "", "finished GeKC `run` to sample: directory, checkpoint.npz, or ID")
	fs.StringVar(&f.out, "out", "", "results `directory` whose runs/ holds -run's ID, as in query and sweep (default: every results/*/ of the repository)")
	fs.StringVar(&f.out, "results", "", "old name of -out")
	fs.StringVar(&f.data, "data", "", "data root of -run's data set (default $GEKC_DATA, else <repository>/data)")
	j.Flags(fs)
	return runSubcommand(fs, usage("synth"), args, env, func() error {
		j.Run = f.run != ""
		wd, err := workDir(env.dir)
		if err != nil {
			return err
		}
		return j.Write(wd, func() (*resultsdir.Finished, error) {
			dir, dataRoot, err := f.find(f.run, env)
			if err != nil {
				return nil, err
			}
			return resultsdir.LoadFinished(dir, dataRoot)
		}, env.stdout, env.stderr)
	})
}
