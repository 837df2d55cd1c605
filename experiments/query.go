package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"gekc/kg"
	"gekc/models"
	"gekc/query"
	"gekc/sweep"
)

const queryUsage = `usage: go run ./experiments query -run RUN [-s NAME] [-r NAME] [-o NAME] [flags]

Asks a finished run's model about its triples, by entity and relation names.
RUN is a run directory, its checkpoint.npz, or a run ID (or unique prefix)
under -out's runs/ (default: every results/*/runs/ of the repository).

  two of -s -r -o     the k most probable completions of the third slot with
                      their probabilities: p(o | s, r), p(s | r, o), p(r | s, o)
                      (a GeKC's exact conditionals; an energy-based model's
                      softmax of its scores, labelled so); -filtered leaves out
                      the completions that are known triples (train, valid or
                      test); known ones are marked either way
  all three           log p(s, r, o) (GeKCs) and the three conditionals
  -triples FILE       the same for each line "subject<TAB>relation<TAB>object"
  -target SLOT with at most one of -s -r -o
                      the marginal of subject, relation or object given that
                      slot (or nothing): p(o | s), p(r), p(s | r), ... (GeKCs)
  -sample N with -s and/or -r (or neither)
                      N exact samples (s, r, o) conditioned on what is given
                      (GeKCs), under the run's domain constraint if it had one

flags:
`

// queryOptions are the query subcommand's flags.
type queryOptions struct {
	run, out, data  string
	s, r, o, target string
	triples         string
	k, sample       int
	seed            uint64
	filtered        bool
	format          string
	batch           int
	stdout, stderr  io.Writer
	getenv          func(string) string
	wd              string
}

// runQuery is the "query" subcommand: `go run ./experiments query ...`.
func runQuery(_ context.Context, args []string, env cliEnv) int {
	fs := flag.NewFlagSet("experiments query", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	o := queryOptions{stdout: env.stdout, stderr: env.stderr, getenv: env.getenv, wd: env.dir}
	fs.StringVar(&o.run, "run", "", "finished `run`: directory, checkpoint.npz, or ID (required)")
	fs.StringVar(&o.out, "out", "", "results `directory` whose runs/ holds the run ID (default: every results/*/ of the repository)")
	fs.StringVar(&o.data, "data", "", "data root (default $GEKC_DATA, else <repository>/data)")
	fs.StringVar(&o.s, "s", "", "subject `name`")
	fs.StringVar(&o.r, "r", "", "relation `name`")
	fs.StringVar(&o.o, "o", "", "object `name`")
	fs.StringVar(&o.target, "target", "", "marginal of `slot` subject, relation or object (with at most one of -s -r -o)")
	fs.StringVar(&o.triples, "triples", "", "`file` of subject<TAB>relation<TAB>object lines to score")
	fs.IntVar(&o.k, "k", 10, "completions listed (0: all)")
	fs.IntVar(&o.sample, "sample", 0, "draw `N` samples conditioned on -s and/or -r")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of -sample")
	fs.BoolVar(&o.filtered, "filtered", false, "leave known triples (train, valid, test) out of completions")
	fs.StringVar(&o.format, "format", "text", "output: text, tsv or json")
	fs.IntVar(&o.batch, "batch", 256, "evaluation batch size")
	return runSubcommand(fs, queryUsage, args, env, o.execute)
}

func (o *queryOptions) execute() error {
	switch {
	case o.run == "":
		return errors.New("-run is required: a run directory, its checkpoint.npz, or a run ID")
	case o.format != "text" && o.format != "tsv" && o.format != "json":
		return fmt.Errorf("-format %q: want text, tsv or json", o.format)
	case o.k < 0:
		return fmt.Errorf("-k %d: want 0 (all) or more", o.k)
	case o.sample < 0:
		return fmt.Errorf("-sample %d: want a positive count", o.sample)
	case o.batch <= 0:
		return fmt.Errorf("-batch %d: want a positive size", o.batch)
	}
	wd, err := workDir(o.wd)
	if err != nil {
		return err
	}
	repo := findRepoRoot(wd)
	dir, err := findQueryRun(o.run, o.out, repo, wd)
	if err != nil {
		return err
	}
	dataRoot := inDir(wd, resolveDataRoot(o.data, o.getenv("GEKC_DATA"), repo))
	fr, err := sweep.LoadFinished(dir, dataRoot)
	if err != nil {
		return err
	}
	dom, err := sweep.Constraint(fr.Spec, fr.Data)
	if err != nil {
		return err
	}
	q, err := query.New(fr.Model, dom, o.batch)
	if err != nil {
		return err
	}
	res, err := o.answer(q, fr.Data)
	if err != nil {
		return err
	}
	res.Run, res.Model = fr.ID, fr.Spec.Model
	return res.Write(o.stdout, o.format)
}

// findQueryRun resolves -run: a directory, a checkpoint file, or an ID
// under out/runs (or under any results/*/runs of the repository).
func findQueryRun(ref, out, repo, wd string) (string, error) {
	if st, err := os.Stat(ref); err == nil {
		if st.IsDir() {
			return ref, nil
		}
		return filepath.Dir(ref), nil
	}
	if out != "" {
		return sweep.ResolveRun(inDir(wd, out), ref)
	}
	results := resultsDir(repo, wd)
	outs, _ := filepath.Glob(filepath.Join(results, "*"))
	var found []string
	for _, d := range outs {
		if dir, err := sweep.ResolveRun(d, ref); err == nil {
			found = append(found, dir)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return "", fmt.Errorf("run %q: no such directory or file, and no run of that ID under %s/*/runs (name the results directory with -out)", ref, results)
	}
	return "", fmt.Errorf("run %q: found in several results directories (%s); name one with -out", ref, strings.Join(found, ", "))
}

func (o *queryOptions) answer(q *query.Querier, ds *kg.Dataset) (*query.Result, error) {
	a, err := query.NewAnswerer(q, ds)
	if err != nil {
		return nil, err
	}
	given, err := a.Triple(o.s, o.r, o.o)
	if err != nil {
		return nil, err
	}
	n := 0
	for _, x := range given {
		if x >= 0 {
			n++
		}
	}
	if o.filtered && (o.triples != "" || o.target != "" || o.sample > 0 || n != 2) {
		return nil, errors.New("-filtered applies to completions (two of -s -r -o)")
	}
	switch {
	case o.triples != "" || (n == 3 && o.target == "" && o.sample == 0):
		if o.target != "" || o.sample > 0 {
			return nil, errors.New("-triples and a full triple are scored; -target and -sample do not apply")
		}
		ts := [][3]int{given}
		if o.triples != "" {
			if n > 0 {
				return nil, errors.New("-triples and -s/-r/-o: give one or the other")
			}
			if ts, err = a.ReadTriples(o.triples); err != nil {
				return nil, err
			}
		}
		return a.Score(ts)
	case o.sample > 0:
		if given[models.Object] >= 0 || o.target != "" {
			return nil, errors.New("-sample conditions on -s and/or -r only")
		}
		return a.Sample(given, o.sample, rand.New(rand.NewPCG(o.seed, 0x9e1)))
	case n == 2:
		if o.target != "" {
			t, err := parseTarget(o.target)
			if err != nil {
				return nil, err
			}
			for _, v := range models.Vars {
				if given[v] < 0 && v != t {
					return nil, fmt.Errorf("-target %s: the query's free slot is the %v", o.target, v)
				}
			}
		}
		return a.Completions(given, o.k, o.filtered)
	}
	if o.target == "" {
		return nil, fmt.Errorf("%d of -s -r -o given: give two for completions, three (or -triples) to score, or -target for a marginal, or -sample", n)
	}
	target, err := parseTarget(o.target)
	if err != nil {
		return nil, err
	}
	return a.Marginal(given, target, o.k)
}

// parseTarget reads -target: subject, relation or object, or s, r, o.
func parseTarget(name string) (models.Var, error) {
	switch name {
	case "subject", "s":
		return models.Subject, nil
	case "relation", "r":
		return models.Relation, nil
	case "object", "o":
		return models.Object, nil
	}
	return 0, fmt.Errorf("-target %q: want subject, relation or object", name)
}

// runSubcommand parses a subcommand's flags (-h prints usage and the
// flags), refuses stray arguments and runs execute; every failure is a
// usage error, printed as "<flag set name>: <error>".
func runSubcommand(fs *flag.FlagSet, usage string, args []string, env cliEnv, execute func() error) int {
	fs.Usage = func() {
		fmt.Fprint(env.stderr, usage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(env.stderr, "%s: unexpected argument %q (see -h)\n", fs.Name(), fs.Arg(0))
		return exitUsage
	}
	if err := execute(); err != nil {
		fmt.Fprintf(env.stderr, "%s: %v\n", fs.Name(), err)
		return exitUsage
	}
	return exitOK
}
