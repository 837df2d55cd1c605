package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"gekc/internal/atomicfile"
	"gekc/kg"
	"gekc/models"
	"gekc/sweep"
	"gekc/synth"
	"gekc/train/ckpt"
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
	var (
		m        *models.Model
		dom      *models.Domain
		names    synth.Names
		schema   *kg.Schema
		srcDir   string
		source   []string // SOURCE.md lines about where the model came from
		planted  bool
		original *kg.Dataset // the data set a run was trained on
	)
	var shape *synth.Shape
	if o.planted != "" {
		if (o.types == "") != (o.schema == "") {
			return errors.New("-types and -schema go together: the entity type counts and the relation schema of a typed planted graph")
		}
		if o.types != "" {
			if o.entities != 0 || o.relations != 0 {
				return fmt.Errorf("-entities %d -relations %d: a typed planted graph takes its sizes from -types and -schema", o.entities, o.relations)
			}
			if shape, err = synth.ReadShape(inDir(wd, o.types), inDir(wd, o.schema), o.typeScale); err != nil {
				return err
			}
			o.entities, o.relations = shape.Entities(), shape.NumRelations()
			if schema, err = shape.Schema(); err != nil {
				return err
			}
			if dom, err = models.DomainFromSchema(schema); err != nil {
				return err
			}
		}
		if o.entities <= 0 || o.relations <= 0 || o.rank <= 0 {
			return fmt.Errorf("-planted needs positive -entities, -relations and -rank (got %d, %d, %d)", o.entities, o.relations, o.rank)
		}
		sz := models.Sizes{Entities: o.entities, Relations: o.relations, Rank: o.rank}
		if m, err = synth.Planted(o.planted, sz, o.seed, o.scale, o.popularity); err != nil {
			return err
		}
		names, planted = synth.NumberedNames(o.entities, o.relations), true
		source = append(source,
			fmt.Sprintf("- model: planted `%s`, %d entities, %d relations, rank %d", o.planted, o.entities, o.relations, o.rank),
			fmt.Sprintf("- parameters: %s, seed %d; written to `planted.npz`", synth.Distribution(m, o.scale, o.popularity), o.seed))
		if shape != nil {
			names = shape.Names()
			var counts []string
			for _, t := range shape.Types {
				counts = append(counts, fmt.Sprintf("%s %d", t.Name, t.Count))
			}
			source = append(source, fmt.Sprintf("- typed: under the domain constraint of `%s`'s %d relations, entity types from `%s` times %g (%s)",
				o.schema, o.relations, o.types, o.typeScale, strings.Join(counts, ", ")))
		}
	} else {
		repo := findRepoRoot(wd)
		dir, err := findQueryRun(o.run, o.results, repo, wd)
		if err != nil {
			return err
		}
		fr, err := sweep.LoadFinished(dir, inDir(wd, resolveDataRoot(o.data, o.getenv("GEKC_DATA"), repo)))
		if err != nil {
			return err
		}
		if dom, err = sweep.Constraint(fr.Spec, fr.Data); err != nil {
			return err
		}
		m, names, srcDir, original = fr.Model, synth.VocabNames(fr.Data), fr.Data.Dir, fr.Data
		if dom != nil {
			schema = fr.Data.Schema
		}
		source = append(source, fmt.Sprintf("- model: run `%s` (`%s`, %s, trained on %s), its checkpoint in %s", fr.ID, fr.Spec.Model, fr.Spec.Objective, fr.Spec.Dataset, dir))
		if dom != nil {
			source = append(source, "- under the run's domain constraint (its data set's schema files are copied here)")
		}
	}
	if m.Semantics == models.Energy {
		return fmt.Errorf("%s is energy-based: it cannot be sampled exactly (its partition function sums exp φ over all |E|²|R| triples); use a GeKC run", m.Name)
	}
	sampler, err := synth.NewSampler(m, dom)
	if err != nil {
		return err
	}
	if o.format == "ogb" {
		if err := enoughCandidates(o.negatives, m.Sizes.Entities, schema); err != nil {
			return err
		}
		if n := int64(max(o.sizes.Valid, o.sizes.Test)) * int64(o.negatives); n > kg.MaxOGBArray {
			return fmt.Errorf("-negatives %d: %d negatives a side for a split exceed the %d elements a torch.save'd array holds for sure", o.negatives, n, kg.MaxOGBArray)
		}
		if original != nil {
			fmt.Fprintf(o.stderr, "warning: OGB's layout names entities \"type:name\", so the surrogate's names differ from %s's: eval.test_on against it finds no triple in common; write -format text for that\n", original.Name)
		}
	}
	start := time.Now()
	d, err := synth.DrawSplits(sampler, o.sizes, how, synth.Support(m.Sizes, schema), o.seed)
	if err != nil {
		return err
	}
	sampling := time.Since(start)
	idsKept := true // the loaded data set's ids are the model's
	if o.format == "ogb" {
		for r, u := range (&synth.Sampled{Train: d.Train}).RelationsUsed(m.Sizes.Relations) {
			if !u {
				return fmt.Errorf("relation %q has no training triple, and OGB's layout records a relation's types only by its training edges: draw more triples, or write -format text", names.Relation(int32(r)))
			}
		}
		layout := synth.OGB{Entities: m.Sizes.Entities, Relations: m.Sizes.Relations, Names: names, Schema: schema, Negatives: o.negatives, Seed: o.seed}
		if idsKept, err = synth.WriteOGB(out, d, layout); err != nil {
			return err
		}
	} else {
		gz := o.gzip == "yes" || (o.gzip == "auto" && o.sizes.Total() > 1_000_000)
		if err := synth.WriteSplits(out, d, names, gz); err != nil {
			return err
		}
		if srcDir != "" && schema != nil {
			if err := copySchema(srcDir, out); err != nil {
				return err
			}
		}
	}
	llTrain, llValid, llTest, err := synth.LogLikelihoods(m, dom, d)
	if err != nil {
		return err
	}
	unused := 0 // planted relations no split mentions: the loader numbers the rest anew
	if planted {
		for _, u := range d.RelationsUsed(o.relations) {
			if !u {
				unused++
			}
		}
		if unused > 0 {
			fmt.Fprintf(o.stderr, "warning: %d of the %d planted relations occur in no split: the loaded data set numbers relations anew, and planted.npz and planted.tsv no longer match its ids (draw more triples)\n", unused, o.relations)
		}
		write := func() error { return synth.WriteVocabulary(out, o.entities, o.relations, names, d) }
		if shape != nil {
			write = func() error { return shape.WriteSchema(out, d) }
		}
		if o.format == "ogb" {
			write = func() error { return nil } // the types are in OGB's files
			if !idsKept {
				fmt.Fprintf(o.stderr, "warning: the entity types' names do not sort as their entities' names do, so OGB's layout renumbers the entities: planted.npz does not match the loaded data set's ids\n")
			}
		}
		if err := write(); err != nil {
			return err
		}
		if err := ckpt.Write(filepath.Join(out, "planted.npz"), m); err != nil {
			return err
		}
		tsv := fmt.Sprintf("model\tentities\trelations\trank\tseed\tscale\tpopularity\ttrain\tvalid\ttest\tll_train\tll_valid\tll_test\n%s\t%d\t%d\t%d\t%d\t%g\t%g\t%d\t%d\t%d\t%.6f\t%.6f\t%.6f\n",
			o.planted, o.entities, o.relations, o.rank, o.seed, o.scale, o.popularity, len(d.Train), len(d.Valid), len(d.Test), llTrain, llValid, llTest)
		if err := atomicfile.WriteFile(filepath.Join(out, "planted.tsv"), []byte(tsv), 0o644); err != nil {
			return err
		}
	}
	var stats string
	if original != nil {
		c := synth.Compare(original, d)
		stats = c.Markdown()
		if sur, tr, err := synth.KTDToOriginal(m, original, d, o.seed); err != nil {
			stats += fmt.Sprintf("\nKTD to the original's test triples: not computed (%v).\n", err)
		} else {
			stats += fmt.Sprintf("\nKTD to the original's test triples (ψ: the product units of the sampled model; %d draws, lower is closer): "+
				"surrogate's test split %.3f ± %.3f; the original's training split, for reference, %.3f ± %.3f "+
				"(draws of up to 1,000 triples a side; a split that small is taken whole, so its draws agree).\n",
				sur.Draws, sur.Mean, sur.Std, tr.Mean, tr.Std)
		}
		png, err := c.DegreePlot(fmt.Sprintf("degrees: %s against its surrogate", original.Name))
		if err != nil {
			return err
		}
		if err := atomicfile.WriteFile(filepath.Join(out, "degrees.png"), png, 0o644); err != nil {
			return err
		}
		md := fmt.Sprintf("# %s against %s\n\n%s\nDegree distributions: `degrees.png`. Made with SOURCE.md's command.\n", filepath.Base(out), original.Name, stats)
		if err := atomicfile.WriteFile(filepath.Join(out, "stats.md"), []byte(md), 0o644); err != nil {
			return err
		}
	}
	rate := float64(d.Draws) / sampling.Seconds()
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\nSampled exactly from a GeKC by `go run ./experiments synth` (gekc), %s.\n\n", filepath.Base(out), time.Now().UTC().Format("2006-01-02 15:04 MST"))
	for _, l := range source {
		fmt.Fprintln(&b, l)
	}
	fmt.Fprintf(&b, "- sizes: %d train, %d valid, %d test triples; drawn %s (%s), seed %d\n", len(d.Train), len(d.Valid), len(d.Test), how, drawWords(how), o.seed)
	fmt.Fprintf(&b, "- sampler: %T, %d triples drawn in %.1f s (%.0f per second, the ones rejected as repeats included)\n", sampler, d.Draws, sampling.Seconds(), rate)
	fmt.Fprintf(&b, "- exact average log-likelihood under the model: train %.4f, valid %.4f, test %.4f (nats per triple)\n", llTrain, llValid, llTest)
	if o.format == "ogb" {
		fmt.Fprintf(&b, "- layout: OGB's, as ogbl-biokg's download (`raw/` with the training graph, `split/random/{train,valid,test}.pt` as torch.save writes them, `mapping/`; OGB's `LinkPropPredDataset(\"ogbl-biokg\", root)` reads it as `root/ogbl_biokg`), %s; %d candidates per valid and test triple and side (`head_neg`, `tail_neg`), distinct, of the type of the entity they replace, none forming a triple of any split, seed %d\n",
			map[bool]string{true: "entities numbered within their type", false: "one node type, `" + kg.UntypedNodeType + "`"}[schema != nil], o.negatives, o.seed)
	}
	switch {
	case o.format == "ogb" && planted && !idsKept:
		fmt.Fprintln(&b, "- **the entity types' names do not sort as their entities' names do**: the loaded data set numbers entities anew, so `planted.npz` does not match its ids")
	case o.format == "ogb" && planted:
		fmt.Fprintln(&b, "- the loaded data set has every planted entity with the planted model's ids (types in blocks, in sorted order): `planted.npz` loads into its models")
	case planted && shape != nil:
		fmt.Fprintln(&b, "- entities are named `type/number` (zero-padded) and relations as in the schema, and `entity_types.tsv.gz` lists every entity with its type (`relation_schema.tsv`: every relation with its types), so the loaded data set has all the planted entities with the planted model's ids: `planted.npz` loads into its models, under `constraints = \"domain\"`")
	case planted:
		fmt.Fprintln(&b, "- entity and relation names are the planted ids, zero-padded (e.g. `e0042`), and `entity_types.tsv.gz` lists every entity with the one type `entity` (`relation_schema.tsv`: every relation, entity to entity), so the loaded data set has all the planted entities, those no triple mentions included, with the planted model's ids: `planted.npz` loads into its models")
	}
	if planted {
		if unused > 0 {
			fmt.Fprintf(&b, "- **%d of the %d relations occur in no split**: the loaded data set numbers relations anew, so `planted.npz` does not match its ids\n", unused, o.relations)
		}
	}
	if stats != "" {
		fmt.Fprintf(&b, "\n## Against the original (train splits)\n\n%s\nDegree distributions: `degrees.png`.\n", stats)
	}
	cmd := "go run ./experiments synth " + strings.Join(os.Args[min(2, len(os.Args)):], " ")
	fmt.Fprintf(&b, "\nCommand: `%s`\n", cmd)
	if err := atomicfile.WriteFile(filepath.Join(out, "SOURCE.md"), []byte(b.String()), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(o.stdout, "%s: %d/%d/%d train/valid/test triples, %d draws in %.1f s (%.0f/s); exact LL train %.4f, valid %.4f, test %.4f\n",
		out, len(d.Train), len(d.Valid), len(d.Test), d.Draws, sampling.Seconds(), rate, llTrain, llValid, llTest)
	return nil
}

func drawWords(how synth.Draw) string {
	if how == synth.IID {
		return "training triples i.i.d., repeats kept; valid and test distinct and new"
	}
	return "every triple distinct"
}

// copySchema copies a typed data set's schema files into out.
func copySchema(src, out string) error {
	for _, name := range []string{"entity_types.tsv", "relation_schema.tsv"} {
		for _, ext := range []string{"", ".gz"} {
			data, err := os.ReadFile(filepath.Join(src, name+ext))
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			if err != nil {
				return err
			}
			if err := atomicfile.WriteFile(filepath.Join(out, name+ext), data, 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}

// enoughCandidates refuses, before any sampling, a count of negatives per
// side that some type (or the whole graph, untyped) cannot supply: the
// entity replaced is never its own negative.
func enoughCandidates(negatives, entities int, schema *kg.Schema) error {
	if schema == nil {
		if entities-1 < negatives {
			return fmt.Errorf("-negatives %d: %d entities leave at most %d candidates per side", negatives, entities, entities-1)
		}
		return nil
	}
	for r := range schema.SubjectType {
		for _, t := range []int32{schema.SubjectType[r], schema.ObjectType[r]} {
			if n := len(schema.EntitiesOfType(t)); n-1 < negatives {
				return fmt.Errorf("-negatives %d: type %q has %d entities, which leave at most %d candidates per side", negatives, schema.Types.Name(t), n, n-1)
			}
		}
	}
	return nil
}
