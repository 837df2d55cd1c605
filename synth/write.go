package synth

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gekc/internal/atomicfile"
	"gekc/kg"
)

// Names gives the names of entity and relation ids in the files written.
type Names struct {
	Entity, Relation func(id int32) string
}

// VocabNames names ids as the vocabularies of a data set do.
func VocabNames(ds *kg.Dataset) Names {
	return Names{Entity: ds.Entities.Name, Relation: ds.Relations.Name}
}

// NumberedNames names entity i "e" and relation j "r" followed by the
// number zero-padded to one width, so that byte order, by which the loader
// numbers names, is the order of the ids: the planted model's ids are the
// loaded data set's (for the entities and relations the splits mention).
func NumberedNames(entities, relations int) Names {
	we, wr := len(strconv.Itoa(max(entities-1, 0))), len(strconv.Itoa(max(relations-1, 0)))
	return Names{
		Entity:   func(id int32) string { return fmt.Sprintf("e%0*d", we, id) },
		Relation: func(id int32) string { return fmt.Sprintf("r%0*d", wr, id) },
	}
}

// WriteSplits writes dir/train.txt, valid.txt and test.txt (with .gz and
// gzipped when gz), one "subject<TAB>relation<TAB>object" line per triple,
// each file atomically.
func WriteSplits(dir string, d *Sampled, names Names, gz bool) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, sp := range []struct {
		name string
		ts   []kg.Triple
	}{{"train.txt", d.Train}, {"valid.txt", d.Valid}, {"test.txt", d.Test}} {
		path := filepath.Join(dir, sp.name)
		if gz {
			path += ".gz"
		}
		err := atomicfile.Write(path, 0o644, func(w io.Writer) error {
			var z *gzip.Writer
			if gz {
				z, _ = gzip.NewWriterLevel(w, gzip.BestSpeed)
				w = z
			}
			bw := bufio.NewWriterSize(w, 1<<20)
			for _, t := range sp.ts {
				bw.WriteString(names.Entity(t.S))
				bw.WriteByte('\t')
				bw.WriteString(names.Relation(t.R))
				bw.WriteByte('\t')
				bw.WriteString(names.Entity(t.O))
				if err := bw.WriteByte('\n'); err != nil {
					return err
				}
			}
			if err := bw.Flush(); err != nil {
				return err
			}
			if z != nil {
				return z.Close()
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("synth: writing %s: %w", path, err)
		}
		// A stale file of the other compression would be read instead.
		other := filepath.Join(dir, sp.name)
		if !gz {
			other += ".gz"
		}
		if err := os.Remove(other); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	// Load reads OGB's layout first: one left from an earlier synth -format
	// ogb into this directory would hide these splits.
	for _, name := range []string{"train.pt", "valid.pt", "test.pt"} {
		if err := os.Remove(filepath.Join(dir, "split", "random", name)); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	return atomicfile.WriteFile(filepath.Join(dir, kg.SyntheticMarker), []byte(syntheticNote), 0o644)
}

// syntheticNote is the content of kg.SyntheticMarker. The loader marks the
// data set synthetic (kg.Dataset.Synthetic), so that no run on it is set
// beside a published table of the data set it imitates.
const syntheticNote = "sampled from a model by gekc's synth: see SOURCE.md\n"

// WriteVocabulary writes a planted data set's entity_types.tsv.gz (every
// entity, of the one type "entity") and relation_schema.tsv (every
// relation a split mentions, from entity to entity). The loader takes
// every typed entity into the vocabulary, so the data set has all the
// planted model's entities, those no triple mentions included, and with
// NumberedNames the same ids: planted.npz loads into a model of the data
// set, and its exact log-likelihoods are the data set's. (A relation no
// split mentions is left out of the schema, which names only relations of
// the splits; the relations after it would then shift ids.)
func WriteVocabulary(dir string, entities, relations int, names Names, d *Sampled) error {
	return writeSchemaFiles(dir, entities, names, func(int32) string { return "entity" },
		d.RelationsUsed(relations), func(int) (string, string) { return "entity", "entity" })
}

// writeSchemaFiles writes entity_types.tsv.gz (every entity with its type)
// and relation_schema.tsv (every used relation with its types).
func writeSchemaFiles(dir string, entities int, names Names, entityType func(int32) string, used []bool, relationTypes func(int) (string, string)) error {
	err := atomicfile.Write(filepath.Join(dir, "entity_types.tsv.gz"), 0o644, func(w io.Writer) error {
		z, _ := gzip.NewWriterLevel(w, gzip.BestSpeed)
		bw := bufio.NewWriterSize(z, 1<<20)
		for e := range int32(entities) {
			bw.WriteString(names.Entity(e))
			bw.WriteByte('\t')
			bw.WriteString(entityType(e))
			bw.WriteByte('\n')
		}
		if err := bw.Flush(); err != nil {
			return err
		}
		return z.Close()
	})
	if err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString("relation\tsubject_type\tobject_type\n")
	for r, u := range used {
		if u {
			st, ot := relationTypes(r)
			fmt.Fprintf(&b, "%s\t%s\t%s\n", names.Relation(int32(r)), st, ot)
		}
	}
	return atomicfile.WriteFile(filepath.Join(dir, "relation_schema.tsv"), []byte(b.String()), 0o644)
}

// RelationsUsed reports, for each of the given number of relations, whether
// a split mentions it.
func (d *Sampled) RelationsUsed(relations int) []bool {
	used := make([]bool, relations)
	for _, ts := range [][]kg.Triple{d.Train, d.Valid, d.Test} {
		for _, t := range ts {
			used[t.R] = true
		}
	}
	return used
}
