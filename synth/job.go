package synth

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"gekc/resultsdir"
)

// A Job is a data set to write as the experiments command's synth verb
// states it, its errors naming the verb's flags: where (To), from what (a
// finished run, or Plant), and how.
type Job struct {
	To  string // the data set directory; relative to the directory Write is given
	Run bool   // from a finished run (-run), else from Plant (-planted)
	// Plant is the planted model (-planted and its sizes), typed by the
	// files Types and Schema (PlantSource).
	Plant         PlantedModel
	Types, Schema string
	TypeScale     float64
	Sizes         Splits
	Draw          string // distinct or iid
	Gzip          string // yes, no or auto (beyond a million triples)
	Format        string // text or ogb
	Negatives     int    // ogb: candidates per valid and test triple and side; 0: 500
	Force         bool   // write into a directory that holds files (CheckTarget)
	Command       string // the command line, for SOURCE.md
}

// Flags defines the synth verb's flags on fs (but -run, -out and -data,
// which find the run), each setting a field of j.
func (j *Job) Flags(fs *flag.FlagSet) {
	fs.StringVar(&j.Plant.Name, "planted", "", "plant a GeKC `model` (e.g. complex2, cp2, complex+) instead of sampling a run")
	fs.IntVar(&j.Plant.Entities, "entities", 0, "-planted: number of entities")
	fs.IntVar(&j.Plant.Relations, "relations", 0, "-planted: number of relations")
	fs.IntVar(&j.Plant.Rank, "rank", 0, "-planted: rank d")
	fs.StringVar(&j.Types, "types", "", "-planted: entity type counts `file` (type<TAB>count lines, e.g. ../shared/data/ogbl-biokg/entity_type_counts.tsv); with -schema, plants a typed graph under its domain constraint instead of -entities and -relations")
	fs.StringVar(&j.Schema, "schema", "", "-planted with -types: relation schema `file` (relation<TAB>subject_type<TAB>object_type lines, e.g. ../shared/data/ogbl-biokg/relation_schema.tsv)")
	fs.Float64Var(&j.TypeScale, "type-scale", 1, "-planted with -types: multiply every type's count by this factor (at least one entity per type)")
	fs.Float64Var(&j.Plant.Scale, "scale", 0, "-planted: σ of a squared model's N(0, σ²) parameters, or a non-negative model's Dirichlet concentration (0: 1)")
	fs.Float64Var(&j.Plant.Popularity, "popularity", 0, "-planted, squared models: spread σ_p of the entities' log-normal popularity (rows times exp(σ_p·z), z ~ N(0, 1); 0: none)")
	fs.StringVar(&j.To, "to", "", "data set `directory` to write (required)")
	fs.IntVar(&j.Sizes.Train, "train", 0, "training triples")
	fs.IntVar(&j.Sizes.Valid, "valid", 0, "validation triples")
	fs.IntVar(&j.Sizes.Test, "test", 0, "test triples")
	fs.StringVar(&j.Draw, "draw", "distinct", "distinct or iid")
	fs.Uint64Var(&j.Plant.Seed, "seed", 1, "seed of the draws (and of -planted's parameters)")
	fs.StringVar(&j.Gzip, "gzip", "auto", "gzip the splits: yes, no, or auto (beyond a million triples)")
	fs.StringVar(&j.Format, "format", "text", "layout to write: text (train/valid/test.txt) or ogb (OGB's, with shipped negatives)")
	fs.BoolVar(&j.Force, "force", false, "write into a -to that already holds files (a data set of that name is replaced); never into a results directory")
	fs.IntVar(&j.Negatives, "negatives", 0, "-format ogb: candidates per valid and test triple and side (0: 500, as ogbl-biokg)")
}

// Check refuses flags that mean nothing together.
func (j *Job) Check() error {
	if _, err := ParseDraw(j.Draw); err != nil {
		return fmt.Errorf("-draw: %v", err)
	}
	switch {
	case j.To == "":
		return errors.New("-to is required: the data set directory to write (-out is the results directory of -run, as in query and sweep)")
	case j.Run == (j.Plant.Name != ""):
		return errors.New("give exactly one of -run (sample a finished run) and -planted (plant a model)")
	case j.Sizes.Train < 0 || j.Sizes.Valid < 0 || j.Sizes.Test < 0 || j.Sizes.Total() == 0:
		return fmt.Errorf("-train %d -valid %d -test %d: want non-negative sizes, not all zero", j.Sizes.Train, j.Sizes.Valid, j.Sizes.Test)
	case j.Gzip != "auto" && j.Gzip != "yes" && j.Gzip != "no":
		return fmt.Errorf("-gzip %q: want yes, no or auto", j.Gzip)
	case j.Format != "text" && j.Format != "ogb":
		return fmt.Errorf("-format %q: want text or ogb", j.Format)
	case j.Negatives < 0 || (j.Negatives > 0 && j.Format != "ogb"):
		return fmt.Errorf("-negatives %d: a positive count, with -format ogb", j.Negatives)
	}
	return nil
}

// source is the GeKC the job samples.
func (j *Job) source(dir string, open func() (*resultsdir.Finished, error)) (Source, error) {
	if !j.Run {
		return PlantSource(j.Plant, dir, j.Types, j.Schema, j.TypeScale)
	}
	fr, err := open()
	if err != nil {
		return Source{}, err
	}
	return RunSource(fr)
}

// Write checks j and writes its data set into dir/To (WriteDataSet),
// saying on stdout what it wrote; open opens the finished run of j.Run.
// Warnings go to warn.
func (j *Job) Write(dir string, open func() (*resultsdir.Finished, error), stdout, warn io.Writer) error {
	if err := j.Check(); err != nil {
		return err
	}
	if j.Format == "ogb" && j.Negatives == 0 {
		j.Negatives = 500
	}
	out := inDir(dir, j.To)
	if err := CheckTarget(out, j.Force); err != nil {
		return err
	}
	src, err := j.source(dir, open)
	if err != nil {
		return err
	}
	how, _ := ParseDraw(j.Draw)
	req := Request{Sizes: j.Sizes, Draw: how, Seed: j.Plant.Seed, OGB: j.Format == "ogb", Negatives: j.Negatives,
		Gzip: j.Gzip == "yes" || (j.Gzip == "auto" && j.Sizes.Total() > 1_000_000), Command: j.Command}
	w, err := WriteDataSet(out, src, req, warn)
	if err != nil {
		return err
	}
	d := w.Sampled
	fmt.Fprintf(stdout, "%s: %d/%d/%d train/valid/test triples, %d draws in %.1f s (%.0f/s); exact LL train %.4f, valid %.4f, test %.4f\n",
		out, len(d.Train), len(d.Valid), len(d.Test), d.Draws, w.Seconds, float64(d.Draws)/w.Seconds, w.LL[0], w.LL[1], w.LL[2])
	return nil
}
