package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"gekc/models"
	"gekc/sweep"
	"gekc/synth"
)

const synthUsage = `usage: go run ./experiments synth (-run RUN | -planted MODEL -entities N -relations N -rank D)
                                 -to DIR -train N -valid N -test N [flags]

Samples a whole data set exactly from a GeKC into DIR, a data set directory
every grid can load (train/valid/test.txt, gzipped when large; the schema
files when the source is typed; SOURCE.md saying how it was made).

  -run RUN        a finished GeKC run (directory, checkpoint.npz, or ID, as
                  query takes it): a surrogate of the graph it was trained
                  on, with its names, under its domain constraint if it had
                  one
  -planted MODEL  a GeKC of the given sizes whose parameters are drawn from
                  a stated distribution (-scale): its checkpoint is written
                  beside the data (planted.npz), and SOURCE.md and
                  planted.tsv give the exact average log-likelihood of each
                  split under it, the truth a model trained on DIR is
                  measured against
-out is the results directory whose runs/ holds -run's ID, as in query and
sweep (-results, its old name, works too).

Triples are distinct by default (-draw distinct: a set, as a knowledge graph
is); -draw iid repeats training triples as often as the model draws them.
The splits never share a triple.

-format ogb writes OGB's on-disk layout of ogbl-biokg instead (raw/ with
the training graph, split/random/{train,valid,test}.pt as torch.save writes
them, mapping/), with -negatives candidates per valid and test triple and
side (head_neg, tail_neg): type-consistent, filtered against every split,
seeded. Grids load it as they load ogbl-biokg, ranking against those
candidates; so does OGB's LinkPropPredDataset("ogbl-biokg", root) with the
directory named root/ogbl_biokg (torch 2.6 and later must be told
torch.load(..., weights_only=False) for OGB's numpy arrays, as for OGB's own
files). Entities load back named "type:name".

flags:
`

type synthOptions struct {
	run, results, data, planted string
	to, draw, format            string
	negatives                   int
	entities, relations, rank   int
	scale, popularity           float64
	types, schema               string  // -planted: a typed shape's files
	typeScale                   float64 // their counts' factor
	sizes                       synth.Splits
	seed                        uint64
	gzip                        string
	force                       bool
	stdout, stderr              io.Writer
	getenv                      func(string) string
	wd                          string
}

func runSynth(_ context.Context, args []string, env cliEnv) int {
	fs := flag.NewFlagSet("experiments synth", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	o := synthOptions{stdout: env.stdout, stderr: env.stderr, getenv: env.getenv, wd: env.dir}
	fs.StringVar(&o.run, "run", "", "finished GeKC `run` to sample: directory, checkpoint.npz, or ID")
	fs.StringVar(&o.results, "out", "", "results `directory` whose runs/ holds -run's ID, as in query and sweep (default: every results/*/ of the repository)")
	fs.StringVar(&o.results, "results", "", "old name of -out")
	fs.StringVar(&o.data, "data", "", "data root of -run's data set (default $GEKC_DATA, else <repository>/data)")
	fs.StringVar(&o.planted, "planted", "", "plant a GeKC `model` (e.g. complex2, cp2, complex+) instead of sampling a run")
	fs.IntVar(&o.entities, "entities", 0, "-planted: number of entities")
	fs.IntVar(&o.relations, "relations", 0, "-planted: number of relations")
	fs.IntVar(&o.rank, "rank", 0, "-planted: rank d")
	fs.StringVar(&o.types, "types", "", "-planted: entity type counts `file` (type<TAB>count lines, e.g. ../shared/data/ogbl-biokg/entity_type_counts.tsv); with -schema, plants a typed graph under its domain constraint instead of -entities and -relations")
	fs.StringVar(&o.schema, "schema", "", "-planted with -types: relation schema `file` (relation<TAB>subject_type<TAB>object_type lines, e.g. ../shared/data/ogbl-biokg/relation_schema.tsv)")
	fs.Float64Var(&o.typeScale, "type-scale", 1, "-planted with -types: multiply every type's count by this factor (at least one entity per type)")
	fs.Float64Var(&o.scale, "scale", 0, "-planted: σ of a squared model's N(0, σ²) parameters, or a non-negative model's Dirichlet concentration (0: 1)")
	fs.Float64Var(&o.popularity, "popularity", 0, "-planted, squared models: spread σ_p of the entities' log-normal popularity (rows times exp(σ_p·z), z ~ N(0, 1); 0: none)")
	fs.StringVar(&o.to, "to", "", "data set `directory` to write (required)")
	fs.IntVar(&o.sizes.Train, "train", 0, "training triples")
	fs.IntVar(&o.sizes.Valid, "valid", 0, "validation triples")
	fs.IntVar(&o.sizes.Test, "test", 0, "test triples")
	fs.StringVar(&o.draw, "draw", "distinct", "distinct or iid")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the draws (and of -planted's parameters)")
	fs.StringVar(&o.gzip, "gzip", "auto", "gzip the splits: yes, no, or auto (beyond a million triples)")
	fs.StringVar(&o.format, "format", "text", "layout to write: text (train/valid/test.txt) or ogb (OGB's, with shipped negatives)")
	fs.BoolVar(&o.force, "force", false, "write into a -to that already holds files (a data set of that name is replaced); never into a results directory")
	fs.IntVar(&o.negatives, "negatives", 0, "-format ogb: candidates per valid and test triple and side (0: 500, as ogbl-biokg)")
	return runSubcommand(fs, synthUsage, args, env, o.execute)
}

func (o *synthOptions) execute() error {
	how, err := synth.ParseDraw(o.draw)
	if err != nil {
		return fmt.Errorf("-draw: %v", err)
	}
	switch {
	case o.to == "":
		return errors.New("-to is required: the data set directory to write (-out is the results directory of -run, as in query and sweep)")
	case (o.run == "") == (o.planted == ""):
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
	if o.format == "ogb" && o.negatives == 0 {
		o.negatives = 500
	}
	wd, err := workDir(o.wd)
	if err != nil {
		return err
	}
	out := inDir(wd, o.to)
	if err := synth.CheckTarget(out, o.force); err != nil {
		return err
	}
	src, err := o.source(wd)
	if err != nil {
		return err
	}
	req := synth.Request{Sizes: o.sizes, Draw: how, Seed: o.seed, OGB: o.format == "ogb", Negatives: o.negatives,
		Gzip:    o.gzip == "yes" || (o.gzip == "auto" && o.sizes.Total() > 1_000_000),
		Command: "go run ./experiments synth " + strings.Join(os.Args[min(2, len(os.Args)):], " ")}
	w, err := synth.WriteDataSet(out, src, req, o.stderr)
	if err != nil {
		return err
	}
	d := w.Sampled
	fmt.Fprintf(o.stdout, "%s: %d/%d/%d train/valid/test triples, %d draws in %.1f s (%.0f/s); exact LL train %.4f, valid %.4f, test %.4f\n",
		out, len(d.Train), len(d.Valid), len(d.Test), d.Draws, w.Seconds, float64(d.Draws)/w.Seconds, w.LL[0], w.LL[1], w.LL[2])
	return nil
}

// source is the GeKC -planted or -run names.
func (o *synthOptions) source(wd string) (synth.Source, error) {
	if o.planted != "" {
		return o.plantedSource(wd)
	}
	repo := findRepoRoot(wd)
	dir, err := findQueryRun(o.run, o.results, repo, wd)
	if err != nil {
		return synth.Source{}, err
	}
	fr, err := sweep.LoadFinished(dir, inDir(wd, resolveDataRoot(o.data, o.getenv("GEKC_DATA"), repo)))
	if err != nil {
		return synth.Source{}, err
	}
	dom, err := sweep.Constraint(fr.Spec, fr.Data)
	if err != nil {
		return synth.Source{}, err
	}
	src := synth.Source{Model: fr.Model, Domain: dom, Names: synth.VocabNames(fr.Data), Original: fr.Data, SchemaDir: fr.Data.Dir,
		About: []string{fmt.Sprintf("- model: run `%s` (`%s`, %s, trained on %s), its checkpoint in %s", fr.ID, fr.Spec.Model, fr.Spec.Objective, fr.Spec.Dataset, dir)}}
	if dom != nil {
		src.Schema = fr.Data.Schema
		src.About = append(src.About, "- under the run's domain constraint (its data set's schema files are copied here)")
	}
	return src, nil
}

// plantedSource plants -planted's model, typed under -types and -schema
// when given.
func (o *synthOptions) plantedSource(wd string) (synth.Source, error) {
	var src synth.Source
	if (o.types == "") != (o.schema == "") {
		return src, errors.New("-types and -schema go together: the entity type counts and the relation schema of a typed planted graph")
	}
	if o.types != "" {
		if o.entities != 0 || o.relations != 0 {
			return src, fmt.Errorf("-entities %d -relations %d: a typed planted graph takes its sizes from -types and -schema", o.entities, o.relations)
		}
		shape, err := synth.ReadShape(inDir(wd, o.types), inDir(wd, o.schema), o.typeScale)
		if err != nil {
			return src, err
		}
		o.entities, o.relations, src.Shape = shape.Entities(), shape.NumRelations(), shape
		if src.Schema, err = shape.Schema(); err != nil {
			return src, err
		}
		if src.Domain, err = models.DomainFromSchema(src.Schema); err != nil {
			return src, err
		}
	}
	if o.entities <= 0 || o.relations <= 0 || o.rank <= 0 {
		return src, fmt.Errorf("-planted needs positive -entities, -relations and -rank (got %d, %d, %d)", o.entities, o.relations, o.rank)
	}
	m, err := synth.Planted(o.planted, models.Sizes{Entities: o.entities, Relations: o.relations, Rank: o.rank}, o.seed, o.scale, o.popularity)
	if err != nil {
		return src, err
	}
	src.Model, src.Names = m, synth.NumberedNames(o.entities, o.relations)
	src.Planted = &synth.PlantedModel{Name: o.planted, Entities: o.entities, Relations: o.relations, Rank: o.rank, Seed: o.seed, Scale: o.scale, Popularity: o.popularity}
	src.About = []string{
		fmt.Sprintf("- model: planted `%s`, %d entities, %d relations, rank %d", o.planted, o.entities, o.relations, o.rank),
		fmt.Sprintf("- parameters: %s, seed %d; written to `planted.npz`", synth.Distribution(m, o.scale, o.popularity), o.seed)}
	if src.Shape != nil {
		src.Names = src.Shape.Names()
		var counts []string
		for _, t := range src.Shape.Types {
			counts = append(counts, fmt.Sprintf("%s %d", t.Name, t.Count))
		}
		src.About = append(src.About, fmt.Sprintf("- typed: under the domain constraint of `%s`'s %d relations, entity types from `%s` times %g (%s)",
			o.schema, o.relations, o.types, o.typeScale, strings.Join(counts, ", ")))
	}
	return src, nil
}
