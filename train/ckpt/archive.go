package ckpt

import (
	"archive/zip"
	"bufio"
	"errors"
	"fmt"
	"io"

	"gekc/internal/atomicfile"
)

// archiveEntry is one array of an archive being written: its name in the
// archive, the label its errors carry, how it is written, and for an
// array gathered from a sharded run's processes (train.StatePart), how
// the writer takes part in its gathers without writing.
type archiveEntry struct {
	name, label string
	// write writes the array; a gathered one completes all of its
	// gathers even when a write fails.
	write func(w io.Writer) error
	drain func() error // nil unless gathered
}

// writeArchive writes the entries as an uncompressed zip, atomically, each
// through a buffer of bufSize bytes. When the file fails, the gathered
// entries not yet written still take part in their gathers: the other
// processes wait for them.
func writeArchive(path string, entries []archiveEntry, bufSize int) error {
	done := 0 // entries written, or whose gathers ran
	err := atomicfile.Write(path, 0o644, func(w io.Writer) error {
		z := zip.NewWriter(w)
		for i, e := range entries {
			ew, err := z.CreateHeader(&zip.FileHeader{Name: e.name, Method: zip.Store})
			if err != nil {
				return err
			}
			bw := bufio.NewWriterSize(ew, bufSize)
			err = e.write(bw)
			done = i + 1
			if err == nil {
				err = bw.Flush()
			}
			if err != nil {
				return fmt.Errorf("%s: %w", e.label, err)
			}
		}
		return z.Close()
	})
	for _, e := range entries[done:] {
		if e.drain != nil {
			err = errors.Join(err, e.drain())
		}
	}
	return err
}
