package synth

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

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
	return nil
}
