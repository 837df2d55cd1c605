package ckpt

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"

	"gekc/internal/atomicfile"
	"gekc/kg"
)

// EntitiesName and RelationsName are the files beside a finished run's
// checkpoint that name its rows: row i of every entity table is entity i.
const (
	EntitiesName  = "entities.tsv.gz"
	RelationsName = "relations.tsv.gz"
)

// WriteVocab writes, atomically, v's names in row order as gzipped lines
// "row<TAB>name": what a checkpoint's rows are, without the data set's
// order rules (kg's doc) at hand.
func WriteVocab(path string, v *kg.Vocab) error {
	return atomicfile.Write(path, 0o644, func(w io.Writer) error {
		z := gzip.NewWriter(w)
		b := bufio.NewWriterSize(z, 1<<16)
		for i := range v.Len() {
			if _, err := fmt.Fprintf(b, "%d\t%s\n", i, v.Name(int32(i))); err != nil {
				return err
			}
		}
		if err := b.Flush(); err != nil {
			return err
		}
		return z.Close()
	})
}
