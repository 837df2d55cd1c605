package ckpt

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"gekc/graph"
	"gekc/internal/atomicfile"
	"gekc/models"

	"github.com/sbinet/npyio/npz"
	"gonum.org/v1/gonum/mat"
)

// CheckpointName is the name of a finished run's checkpoint in its run
// directory.
const CheckpointName = "checkpoint.npz"

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
func Write(path string, m *models.Model) error {
	var buf bytes.Buffer
	w := npz.NewWriter(&buf)
	for _, name := range m.ParamNames() {
		p := m.Param(name)
		rows, cols := p.Shape()[0], p.Shape()[1]
		// npyio writes 2-D arrays from gonum matrices, which are float64:
		// float32 parameters convert exactly.
		vals := make([]float64, rows*cols)
		switch d := p.Data().(type) {
		case []float32:
			for i, x := range d {
				vals[i] = float64(x)
			}
		case []float64:
			copy(vals, d)
		}
		if err := w.Write(name, mat.NewDense(rows, cols, vals)); err != nil {
			return fmt.Errorf("checkpoint %s: %w", name, err)
		}
	}
	if err := w.Close(); err != nil {
		return err
	}
	return atomicfile.WriteFile(path, buf.Bytes(), 0o644)
}

// Load copies the arrays of a checkpoint into m's parameters of
// the same names and shapes. Semantics may differ: distilling a trained
// ComplEx into ComplEx² copies its embeddings as they are (paper, §4.2).
// Besides this package's own checkpoints it reads what numpy.savez writes,
// so embeddings trained elsewhere can be loaded.
func Load(path string, m *models.Model) error {
	z, err := zip.OpenReader(path)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer z.Close()
	for _, name := range m.ParamNames() {
		p := m.Param(name)
		vals, err := readMatrix(&z.Reader, name, p.Shape()[0], p.Shape()[1])
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		switch d := p.Data().(type) {
		case []float32:
			for i, v := range vals {
				d[i] = float32(v)
			}
		case []float64:
			copy(d, vals)
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
		if _, err := readMatrix(&z.Reader, t.Name, t.Rows, t.Cols); err != nil {
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
