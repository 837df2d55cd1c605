package synth

import (
	"fmt"
	"os"
	"path/filepath"

	"gekc/internal/atomicfile"
	"gekc/kg"
	"gekc/metrics"
	"gekc/models"
)

// OGB describes a sampled data set to write in OGB's on-disk layout.
type OGB struct {
	Entities, Relations int
	Names               Names
	Schema              *kg.Schema // nil: untyped, one node type
	Negatives           int        // candidates per valid and test triple and side
	Seed                uint64     // of the negatives
}

// WriteOGB writes d into dir in OGB's layout of ogbl-biokg (kg.WriteOGB),
// with o.Negatives candidates per valid and test triple and side, as
// OGB's head_neg and tail_neg: distinct entities of the type of the one
// they replace, none of them forming a triple of any split (filtered), drawn
// as eval.negatives draws them (metrics.NegativeSampler), seeded. Every
// entity is written, those no triple mentions included. It reports
// whether the loaded data set keeps the ids of d (the types hold
// consecutive blocks of ids in sorted order), which planted.npz needs.
func WriteOGB(dir string, d *Sampled, o OGB) (idsKept bool, err error) {
	if o.Negatives <= 0 {
		return false, fmt.Errorf("synth: %d negatives per triple and side: want at least 1", o.Negatives)
	}
	names := make([]string, o.Entities)
	for e := range names {
		names[e] = o.Names.Entity(int32(e))
	}
	ents, err := kg.NewVocab(names)
	if err != nil {
		return false, err
	}
	names = make([]string, o.Relations)
	for r := range names {
		names[r] = o.Names.Relation(int32(r))
	}
	rels, err := kg.NewVocab(names)
	if err != nil {
		return false, err
	}
	ds := &kg.Dataset{Entities: ents, Relations: rels, Train: d.Train, Valid: d.Valid, Test: d.Test, Schema: o.Schema}
	filter := kg.NewFilter(d.Train, d.Valid, d.Test)
	ns, err := metrics.NewNegativeSampler(o.Negatives, o.Seed, o.Entities, o.Schema, filter)
	if err != nil {
		return false, err
	}
	draw := func(split string, ts []kg.Triple, side models.Var) ([][]int32, error) {
		flat := make([]int32, 0, len(ts)*o.Negatives)
		rows := make([][]int32, len(ts))
		for i, t := range ts {
			start := len(flat)
			flat = ns.Draw(flat, t, side)
			if got := len(flat) - start; got < o.Negatives {
				return nil, fmt.Errorf("synth: %s triple %d (0-based) has only %d candidates for %d negatives (its type is too small once known answers are excluded): ask fewer", split, i, got, o.Negatives)
			}
			rows[i] = flat[start:len(flat):len(flat)]
		}
		return rows, nil
	}
	var neg kg.Negatives
	for _, c := range []struct {
		split string
		ts    []kg.Triple
		side  models.Var
		dst   *[][]int32
	}{
		{"valid", d.Valid, models.Subject, &neg.ValidHead}, {"valid", d.Valid, models.Object, &neg.ValidTail},
		{"test", d.Test, models.Subject, &neg.TestHead}, {"test", d.Test, models.Object, &neg.TestTail},
	} {
		if *c.dst, err = draw(c.split, c.ts, c.side); err != nil {
			return false, err
		}
	}
	ds.Negatives = &neg
	if err := kg.WriteOGB(dir, ds); err != nil {
		return false, err
	}
	// Load reads OGB's layout first; a stale plain layout would only
	// mislead a reader of the directory.
	for _, name := range []string{"train.txt", "valid.txt", "test.txt", "entity_types.tsv", "relation_schema.tsv"} {
		for _, ext := range []string{"", ".gz"} {
			if err := os.Remove(filepath.Join(dir, name+ext)); err != nil && !os.IsNotExist(err) {
				return false, err
			}
		}
	}
	idsKept = true
	if o.Schema != nil {
		for e := 1; e < len(o.Schema.EntityType); e++ {
			idsKept = idsKept && o.Schema.EntityType[e-1] <= o.Schema.EntityType[e]
		}
	}
	return idsKept, atomicfile.WriteFile(filepath.Join(dir, kg.SyntheticMarker), []byte(syntheticNote), 0o644)
}
