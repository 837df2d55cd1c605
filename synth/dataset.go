package synth

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"gekc/internal/atomicfile"
	"gekc/kg"
	"gekc/models"
	"gekc/train/ckpt"
)

// A Source is the GeKC a data set is drawn from and what is known of it.
type Source struct {
	Model  *models.Model
	Domain *models.Domain // the constraint samples obey; nil: none
	Names  Names
	Schema *kg.Schema // of a typed source (written or copied); nil: untyped
	// Original is the data set a sampled run was trained on; SchemaDir
	// holds its schema files, copied beside a typed surrogate's splits.
	Original  *kg.Dataset
	SchemaDir string
	Planted   *PlantedModel // a planted model's settings; nil for a run
	Shape     *Shape        // a typed planted graph's shape
	About     []string      // SOURCE.md's lines on where the model came from
}

// PlantedModel is how a planted model was drawn (Planted's arguments).
type PlantedModel struct {
	Name                      string
	Entities, Relations, Rank int
	Seed                      uint64
	Scale, Popularity         float64
}

// A Request says what to draw and how to write it.
type Request struct {
	Sizes     Splits
	Draw      Draw
	Seed      uint64
	OGB       bool // OGB's biokg layout instead of train/valid/test.txt
	Negatives int  // OGB: candidates per valid and test triple and side
	Gzip      bool // text: gzip the splits
	Command   string
}

// Written summarises a data set WriteDataSet wrote.
type Written struct {
	Sampled *Sampled
	Seconds float64    // drawing time
	LL      [3]float64 // exact average LL of train, valid and test
}

// WriteDataSet draws req's splits from src and writes them into dir as a
// data set every grid can load: the splits (or OGB's layout), the schema
// files of a typed source, planted.npz and planted.tsv of a planted model,
// stats.md and degrees.png against a surrogate's original, and SOURCE.md.
// Warnings go to warn.
func WriteDataSet(dir string, src Source, req Request, warn io.Writer) (*Written, error) {
	m := src.Model
	if m.Semantics == models.Energy {
		return nil, fmt.Errorf("%s is energy-based: it cannot be sampled exactly (its partition function sums exp φ over all |E|²|R| triples); use a GeKC run", m.Name)
	}
	sampler, err := NewSampler(m, src.Domain)
	if err != nil {
		return nil, err
	}
	if req.OGB {
		if err := checkOGBRequest(req, m, src, warn); err != nil {
			return nil, err
		}
	}
	start := time.Now()
	d, err := DrawSplits(sampler, req.Sizes, req.Draw, Support(m.Sizes, src.Schema), req.Seed)
	if err != nil {
		return nil, err
	}
	w := &Written{Sampled: d, Seconds: time.Since(start).Seconds()}
	idsKept, err := writeSplits(dir, src, req, d)
	if err != nil {
		return nil, err
	}
	if w.LL[0], w.LL[1], w.LL[2], err = LogLikelihoods(m, src.Domain, d); err != nil {
		return nil, err
	}
	unused := 0
	if src.Planted != nil {
		if unused, err = writePlanted(dir, src, req, d, w.LL, idsKept, warn); err != nil {
			return nil, err
		}
	}
	stats, err := writeStats(dir, src, d, req.Seed)
	if err != nil {
		return nil, err
	}
	md := sourceMarkdown(dir, src, req, w, fmt.Sprintf("%T", sampler), idsKept, unused, stats)
	return w, atomicfile.WriteFile(filepath.Join(dir, "SOURCE.md"), []byte(md), 0o644)
}

// checkOGBRequest refuses, before any sampling, what OGB's layout cannot
// hold, and warns that a surrogate's names change.
func checkOGBRequest(req Request, m *models.Model, src Source, warn io.Writer) error {
	if err := enoughCandidates(req.Negatives, m.Sizes.Entities, src.Schema); err != nil {
		return err
	}
	if n := int64(max(req.Sizes.Valid, req.Sizes.Test)) * int64(req.Negatives); n > kg.MaxOGBArray {
		return fmt.Errorf("-negatives %d: %d negatives a side for a split exceed the %d elements a torch.save'd array holds for sure", req.Negatives, n, kg.MaxOGBArray)
	}
	if src.Original != nil {
		fmt.Fprintf(warn, "warning: OGB's layout names entities \"type:name\", so the surrogate's names differ from %s's: eval.test_on against it finds no triple in common; write -format text for that\n", src.Original.Name)
	}
	return nil
}

// writeSplits writes the splits in the layout asked for; idsKept says
// whether the loaded data set numbers entities as the model does.
func writeSplits(dir string, src Source, req Request, d *Sampled) (idsKept bool, err error) {
	m := src.Model
	if req.OGB {
		for r, u := range (&Sampled{Train: d.Train}).RelationsUsed(m.Sizes.Relations) {
			if !u {
				return false, fmt.Errorf("relation %q has no training triple, and OGB's layout records a relation's types only by its training edges: draw more triples, or write -format text", src.Names.Relation(int32(r)))
			}
		}
		layout := OGB{Entities: m.Sizes.Entities, Relations: m.Sizes.Relations, Names: src.Names, Schema: src.Schema, Negatives: req.Negatives, Seed: req.Seed}
		return WriteOGB(dir, d, layout)
	}
	if err := WriteSplits(dir, d, src.Names, req.Gzip); err != nil {
		return false, err
	}
	if src.SchemaDir != "" && src.Schema != nil {
		if err := copySchema(src.SchemaDir, dir); err != nil {
			return false, err
		}
	}
	return true, nil
}

// writePlanted writes a planted model's vocabulary or schema, planted.npz
// and planted.tsv, and returns how many relations no split uses.
func writePlanted(dir string, src Source, req Request, d *Sampled, ll [3]float64, idsKept bool, warn io.Writer) (int, error) {
	p := src.Planted
	unused := 0
	for _, u := range d.RelationsUsed(p.Relations) {
		if !u {
			unused++
		}
	}
	if unused > 0 {
		fmt.Fprintf(warn, "warning: %d of the %d planted relations occur in no split: the loaded data set numbers relations anew, and planted.npz and planted.tsv no longer match its ids (draw more triples)\n", unused, p.Relations)
	}
	write := func() error { return WriteVocabulary(dir, p.Entities, p.Relations, src.Names, d) }
	if src.Shape != nil {
		write = func() error { return src.Shape.WriteSchema(dir, d) }
	}
	if req.OGB {
		write = func() error { return nil } // the types are in OGB's files
		if !idsKept {
			fmt.Fprintf(warn, "warning: the entity types' names do not sort as their entities' names do, so OGB's layout renumbers the entities: planted.npz does not match the loaded data set's ids\n")
		}
	}
	if err := write(); err != nil {
		return 0, err
	}
	if err := ckpt.Write(filepath.Join(dir, "planted.npz"), src.Model); err != nil {
		return 0, err
	}
	tsv := fmt.Sprintf("model\tentities\trelations\trank\tseed\tscale\tpopularity\ttrain\tvalid\ttest\tll_train\tll_valid\tll_test\n%s\t%d\t%d\t%d\t%d\t%g\t%g\t%d\t%d\t%d\t%.6f\t%.6f\t%.6f\n",
		p.Name, p.Entities, p.Relations, p.Rank, p.Seed, p.Scale, p.Popularity, len(d.Train), len(d.Valid), len(d.Test), ll[0], ll[1], ll[2])
	return unused, atomicfile.WriteFile(filepath.Join(dir, "planted.tsv"), []byte(tsv), 0o644)
}

// writeStats writes stats.md and degrees.png of a surrogate against its
// original, and returns the comparison's markdown ("" for a planted
// model).
func writeStats(dir string, src Source, d *Sampled, seed uint64) (string, error) {
	if src.Original == nil {
		return "", nil
	}
	c := Compare(src.Original, d)
	stats := c.Markdown()
	if sur, tr, err := KTDToOriginal(src.Model, src.Original, d, seed); err != nil {
		stats += fmt.Sprintf("\nKTD to the original's test triples: not computed (%v).\n", err)
	} else {
		stats += fmt.Sprintf("\nKTD to the original's test triples (ψ: the product units of the sampled model; %d draws, lower is closer): "+
			"surrogate's test split %.3f ± %.3f; the original's training split, for reference, %.3f ± %.3f "+
			"(draws of up to 1,000 triples a side; a split that small is taken whole, so its draws agree).\n",
			sur.Draws, sur.Mean, sur.Std, tr.Mean, tr.Std)
	}
	png, err := c.DegreePlot(fmt.Sprintf("degrees: %s against its surrogate", src.Original.Name))
	if err != nil {
		return "", err
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, "degrees.png"), png, 0o644); err != nil {
		return "", err
	}
	md := fmt.Sprintf("# %s against %s\n\n%s\nDegree distributions: `degrees.png`. Made with SOURCE.md's command.\n", filepath.Base(dir), src.Original.Name, stats)
	return stats, atomicfile.WriteFile(filepath.Join(dir, "stats.md"), []byte(md), 0o644)
}

// sourceMarkdown is SOURCE.md: where the data came from, how they were
// drawn, their exact LL under the model, and the command.
func sourceMarkdown(dir string, src Source, req Request, w *Written, sampler string, idsKept bool, unused int, stats string) string {
	d := w.Sampled
	rate := float64(d.Draws) / w.Seconds
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\nSampled exactly from a GeKC by `go run ./experiments synth` (gekc), %s.\n\n", filepath.Base(dir), time.Now().UTC().Format("2006-01-02 15:04 MST"))
	for _, l := range src.About {
		fmt.Fprintln(&b, l)
	}
	fmt.Fprintf(&b, "- sizes: %d train, %d valid, %d test triples; drawn %s (%s), seed %d\n", len(d.Train), len(d.Valid), len(d.Test), req.Draw, drawWords(req.Draw), req.Seed)
	fmt.Fprintf(&b, "- sampler: %s, %d triples drawn in %.1f s (%.0f per second, the ones rejected as repeats included)\n", sampler, d.Draws, w.Seconds, rate)
	fmt.Fprintf(&b, "- exact average log-likelihood under the model: train %.4f, valid %.4f, test %.4f (nats per triple)\n", w.LL[0], w.LL[1], w.LL[2])
	if req.OGB {
		fmt.Fprintf(&b, "- layout: OGB's, as ogbl-biokg's download (`raw/` with the training graph, `split/random/{train,valid,test}.pt` as torch.save writes them, `mapping/`; OGB's `LinkPropPredDataset(\"ogbl-biokg\", root)` reads it as `root/ogbl_biokg`), %s; %d candidates per valid and test triple and side (`head_neg`, `tail_neg`), distinct, of the type of the entity they replace, none forming a triple of any split, seed %d\n",
			map[bool]string{true: "entities numbered within their type", false: "one node type, `" + kg.UntypedNodeType + "`"}[src.Schema != nil], req.Negatives, req.Seed)
	}
	planted := src.Planted != nil
	switch {
	case req.OGB && planted && !idsKept:
		fmt.Fprintln(&b, "- **the entity types' names do not sort as their entities' names do**: the loaded data set numbers entities anew, so `planted.npz` does not match its ids")
	case req.OGB && planted:
		fmt.Fprintln(&b, "- the loaded data set has every planted entity with the planted model's ids (types in blocks, in sorted order): `planted.npz` loads into its models")
	case planted && src.Shape != nil:
		fmt.Fprintln(&b, "- entities are named `type/number` (zero-padded) and relations as in the schema, and `entity_types.tsv.gz` lists every entity with its type (`relation_schema.tsv`: every relation with its types), so the loaded data set has all the planted entities with the planted model's ids: `planted.npz` loads into its models, under `constraints = \"domain\"`")
	case planted:
		fmt.Fprintln(&b, "- entity and relation names are the planted ids, zero-padded (e.g. `e0042`), and `entity_types.tsv.gz` lists every entity with the one type `entity` (`relation_schema.tsv`: every relation, entity to entity), so the loaded data set has all the planted entities, those no triple mentions included, with the planted model's ids: `planted.npz` loads into its models")
	}
	if planted && unused > 0 {
		fmt.Fprintf(&b, "- **%d of the %d relations occur in no split**: the loaded data set numbers relations anew, so `planted.npz` does not match its ids\n", unused, src.Planted.Relations)
	}
	if stats != "" {
		fmt.Fprintf(&b, "\n## Against the original (train splits)\n\n%s\nDegree distributions: `degrees.png`.\n", stats)
	}
	fmt.Fprintf(&b, "\nCommand: `%s`\n", req.Command)
	return b.String()
}

func drawWords(how Draw) string {
	if how == IID {
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
