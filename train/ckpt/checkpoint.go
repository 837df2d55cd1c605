package ckpt

import (
	"archive/zip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"slices"
	"strings"

	"gekc/graph"
	"gekc/models"
	"gekc/train"
)

// CheckpointName is the name of a finished run's checkpoint in its run
// directory.
const CheckpointName = "checkpoint.npz"

// CheckpointLLName is the checkpoint of the parameters at the best
// validation log-likelihood, written beside CheckpointName by a run that
// keeps them (grid key sample_from = "ll", train.Config.KeepBestLL).
const CheckpointLLName = "checkpoint-ll.npz"

// Write writes m's parameters to path as a checkpoint, atomically.
//
// Checkpoints are NumPy .npz archives, one array per parameter table,
// named after the table ("entity", "relation", "core", "subject", "object";
// see each score function's Layout). Values are stored as the model holds
// them (as float64): ComplEx rows are [re | im], non-negative models store log-values
// (ComplEx+ stores [log Re | θ] with Im = Re·σ(θ)). The run's config.toml
// says which model and semantics produced them. In Python:
//
//	params = numpy.load("checkpoint.npz"); params["entity"].shape
func Write(path string, m *models.Model) error { return WritePart(path, m, nil) }

// WritePart writes the checkpoint of the model of which m is one process's
// part (train.Result.Part; nil: m is the whole model), its entity tables'
// rows gathered from every process chunk by chunk, atomically. The other
// processes call part.GatherModel(m) meanwhile; a writer whose file fails
// still takes part in every gather.
func WritePart(path string, m *models.Model, part *train.StatePart) error {
	var entries []archiveEntry
	for _, name := range m.ParamNames() {
		p := m.Param(name)
		rows, cols := p.Shape()[0], p.Shape()[1]
		// Entries are named as npyio named them, without ".npy"; numpy.load
		// gives the same keys either way. Streamed and converted a block of
		// rows at a time: at millions of entities a checkpoint is gigabytes.
		e := archiveEntry{name: name, label: "checkpoint " + name, write: func(w io.Writer) error {
			if err := writeNpyHeader(w, rows, cols); err != nil {
				return err
			}
			return writeFloat64s(w, p.Data())
		}}
		if part != nil && slices.Contains(part.Tables, name) {
			e.write = func(w io.Writer) error {
				err := writeNpyHeader(w, part.N, cols)
				return errors.Join(err, part.GatherTable(p, func(rows any) error { return writeFloat64s(w, rows) }))
			}
			e.drain = func() error { return part.GatherTable(p, nil) }
		}
		entries = append(entries, e)
	}
	return writeArchive(path, entries, 1<<20)
}

// writeFloat64s writes a []float32 or []float64 as little-endian float64s.
func writeFloat64s(w io.Writer, data any) error {
	var b [8]byte
	put := func(x float64) error {
		binary.LittleEndian.PutUint64(b[:], math.Float64bits(x))
		_, err := w.Write(b[:])
		return err
	}
	switch d := data.(type) {
	case []float32:
		for _, x := range d {
			if err := put(float64(x)); err != nil {
				return err
			}
		}
	case []float64:
		for _, x := range d {
			if err := put(x); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeNpyHeader writes the header of a NumPy (format 1.0) C-ordered
// little-endian float64 array of rows × cols: magic, version, the header
// length and the dict, padded with spaces to a multiple of 64 bytes.
func writeNpyHeader(w io.Writer, rows, cols int) error {
	return writeNpyHeaderOf(w, "<f8", fmt.Sprintf("(%d, %d)", rows, cols))
}

// writeNpyHeaderOf writes the header of a C-ordered array of the NumPy
// type descr and shape (a Python tuple).
func writeNpyHeaderOf(w io.Writer, descr, shape string) error {
	dict := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, shape)
	pad := 64 - (10+len(dict)+1)%64
	if pad == 64 {
		pad = 0
	}
	dict += strings.Repeat(" ", pad) + "\n"
	head := []byte("\x93NUMPY\x01\x00")
	head = binary.LittleEndian.AppendUint16(head, uint16(len(dict)))
	if _, err := w.Write(head); err != nil {
		return err
	}
	_, err := io.WriteString(w, dict)
	return err
}

// Load copies the arrays of a checkpoint into m's parameters of
// the same names and shapes. Semantics may differ: distilling a trained
// ComplEx into ComplEx² copies its embeddings as they are (paper, §4.2).
// Besides this package's own checkpoints it reads what numpy.savez writes,
// so embeddings trained elsewhere can be loaded. Each array is decoded
// straight into its parameter, so on an error the parameters are partly
// overwritten: discard the model.
func Load(path string, m *models.Model) error {
	z, err := zip.OpenReader(path)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer z.Close()
	for _, name := range m.ParamNames() {
		p := m.Param(name)
		if err := readMatrixInto(&z.Reader, name, p.Shape()[0], p.Shape()[1], p.Data()); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		// Checkpoints written before graph.Adam flushed subnormals may hold
		// them; they slow every BLAS call on the table.
		graph.FlushSubnormals(p)
	}
	return nil
}

// CheckLayout checks, without loading anything into a model, that the
// checkpoint at path holds an array of the right shape and type for every
// table of layout, as Load will need: a sweep checks a distilled run's
// source before any training. A file that is missing or not a zip archive
// is an error naming it; the tables that do not fit are reported together,
// in a *LayoutError.
func CheckLayout(path string, layout models.Layout) error {
	z, err := zip.OpenReader(path)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s does not exist", path)
	}
	if err != nil {
		return fmt.Errorf("%s: not a readable .npz (zip) file: %w", path, err)
	}
	defer z.Close()
	var misfits []string
	for _, t := range layout.Tables {
		if err := readMatrixInto(&z.Reader, t.Name, t.Rows, t.Cols, nil); err != nil {
			misfits = append(misfits, err.Error())
		}
	}
	if len(misfits) > 0 {
		return &LayoutError{Path: path, Misfits: misfits}
	}
	return nil
}

// A LayoutError reports the tables of a layout that a checkpoint lacks or
// holds in another shape or type.
type LayoutError struct {
	Path    string   // the checkpoint
	Misfits []string // one message per table that does not fit, naming its entry
}

func (e *LayoutError) Error() string {
	return fmt.Sprintf("%s does not fit: %s", e.Path, strings.Join(e.Misfits, "; "))
}
