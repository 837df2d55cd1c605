package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"gekc/resultsdir"
	"gekc/synth"
)

type synthOptions struct {
	runFlags
	to, draw, format, gzip string
	negatives              int
	plant                  synth.PlantedModel
	types, schema          string  // -planted: a typed shape's files
	typeScale              float64 // their counts' factor
	sizes                  synth.Splits
	force                  bool
}

// runSynth is the synth verb: a data set sampled from a finished run or a
// planted GeKC (package synth).
func runSynth(_ context.Context, args []string, env cliEnv) int {
	fs := flag.NewFlagSet("experiments synth", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	var o synthOptions
	p := &o.plant
	fs.StringVar(&o.run, "run", "", "finished GeKC `run` to sample: directory, checkpoint.npz, or ID")
	fs.StringVar(&o.out, "out", "", "results `directory` whose runs/ holds -run's ID, as in query and sweep (default: every results/*/ of the repository)")
	fs.StringVar(&o.out, "results", "", "old name of -out")
	fs.StringVar(&o.data, "data", "", "data root of -run's data set (default $GEKC_DATA, else <repository>/data)")
	fs.StringVar(&p.Name, "planted", "", "plant a GeKC `model` (e.g. complex2, cp2, complex+) instead of sampling a run")
	fs.IntVar(&p.Entities, "entities", 0, "-planted: number of entities")
	fs.IntVar(&p.Relations, "relations", 0, "-planted: number of relations")
	fs.IntVar(&p.Rank, "rank", 0, "-planted: rank d")
	fs.StringVar(&o.types, "types", "", "-planted: entity type counts `file` (type<TAB>count lines, e.g. ../shared/data/ogbl-biokg/entity_type_counts.tsv); with -schema, plants a typed graph under its domain constraint instead of -entities and -relations")
	fs.StringVar(&o.schema, "schema", "", "-planted with -types: relation schema `file` (relation<TAB>subject_type<TAB>object_type lines, e.g. ../shared/data/ogbl-biokg/relation_schema.tsv)")
	fs.Float64Var(&o.typeScale, "type-scale", 1, "-planted with -types: multiply every type's count by this factor (at least one entity per type)")
	fs.Float64Var(&p.Scale, "scale", 0, "-planted: σ of a squared model's N(0, σ²) parameters, or a non-negative model's Dirichlet concentration (0: 1)")
	fs.Float64Var(&p.Popularity, "popularity", 0, "-planted, squared models: spread σ_p of the entities' log-normal popularity (rows times exp(σ_p·z), z ~ N(0, 1); 0: none)")
	fs.StringVar(&o.to, "to", "", "data set `directory` to write (required)")
	fs.IntVar(&o.sizes.Train, "train", 0, "training triples")
	fs.IntVar(&o.sizes.Valid, "valid", 0, "validation triples")
	fs.IntVar(&o.sizes.Test, "test", 0, "test triples")
	fs.StringVar(&o.draw, "draw", "distinct", "distinct or iid")
	fs.Uint64Var(&p.Seed, "seed", 1, "seed of the draws (and of -planted's parameters)")
	fs.StringVar(&o.gzip, "gzip", "auto", "gzip the splits: yes, no, or auto (beyond a million triples)")
	fs.StringVar(&o.format, "format", "text", "layout to write: text (train/valid/test.txt) or ogb (OGB's, with shipped negatives)")
	fs.BoolVar(&o.force, "force", false, "write into a -to that already holds files (a data set of that name is replaced); never into a results directory")
	fs.IntVar(&o.negatives, "negatives", 0, "-format ogb: candidates per valid and test triple and side (0: 500, as ogbl-biokg)")
	return runSubcommand(fs, usage("synth"), args, env, func() error { return o.execute(env) })
}

// check refuses flags that mean nothing together.
func (o *synthOptions) check() error {
	switch {
	case o.to == "":
		return errors.New("-to is required: the data set directory to write (-out is the results directory of -run, as in query and sweep)")
	case (o.run == "") == (o.plant.Name == ""):
		return errors.New("give exactly one of -run (sample a finished run) and -planted (plant a model)")
	case o.sizes.Train < 0 || o.sizes.Valid < 0 || o.sizes.Test < 0 || o.sizes.Total() == 0:
		return fmt.Errorf("-train %d -valid %d -test %d: want non-negative sizes, not all zero", o.sizes.Train, o.sizes.Valid, o.sizes.Test)
	case o.gzip != "auto" && o.gzip != "yes" && o.gzip != "no":
		return fmt.Errorf("-gzip %q: want yes, no or auto", o.gzip)
	case o.format != "text" && o.format != "ogb":
		return fmt.Errorf("-format %q: want text or ogb", o.format)
	case o.negatives < 0 || (o.negatives > 0 && o.format != "ogb"):
		return fmt.Errorf("-negatives %d: a positive count, with -format ogb", o.negatives)
	}
	return nil
}

func (o *synthOptions) execute(env cliEnv) error {
	how, err := synth.ParseDraw(o.draw)
	if err != nil {
		return fmt.Errorf("-draw: %v", err)
	}
	if err := o.check(); err != nil {
		return err
	}
	if o.format == "ogb" && o.negatives == 0 {
		o.negatives = 500
	}
	wd, err := workDir(env.dir)
	if err != nil {
		return err
	}
	out := inDir(wd, o.to)
	if err := synth.CheckTarget(out, o.force); err != nil {
		return err
	}
	src, err := o.source(wd, env)
	if err != nil {
		return err
	}
	req := synth.Request{Sizes: o.sizes, Draw: how, Seed: o.plant.Seed, OGB: o.format == "ogb", Negatives: o.negatives,
		Gzip:    o.gzip == "yes" || (o.gzip == "auto" && o.sizes.Total() > 1_000_000),
		Command: "go run ./experiments synth " + strings.Join(os.Args[min(2, len(os.Args)):], " ")}
	w, err := synth.WriteDataSet(out, src, req, env.stderr)
	if err != nil {
		return err
	}
	d := w.Sampled
	fmt.Fprintf(env.stdout, "%s: %d/%d/%d train/valid/test triples, %d draws in %.1f s (%.0f/s); exact LL train %.4f, valid %.4f, test %.4f\n",
		out, len(d.Train), len(d.Valid), len(d.Test), d.Draws, w.Seconds, float64(d.Draws)/w.Seconds, w.LL[0], w.LL[1], w.LL[2])
	return nil
}

// source is the GeKC -planted or -run names.
func (o *synthOptions) source(wd string, env cliEnv) (synth.Source, error) {
	if o.plant.Name != "" {
		return synth.PlantSource(o.plant, wd, o.types, o.schema, o.typeScale)
	}
	dir, dataRoot, err := o.find(o.run, env)
	if err != nil {
		return synth.Source{}, err
	}
	fr, err := resultsdir.LoadFinished(dir, dataRoot)
	if err != nil {
		return synth.Source{}, err
	}
	return synth.RunSource(fr)
}
