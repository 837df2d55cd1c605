package main

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"gekc/graph"
	"gekc/models"

	"github.com/sbinet/npyio/npy"
	"github.com/sbinet/npyio/npz"
	"gonum.org/v1/gonum/mat"
)

// Checkpoints are NumPy .npz archives, one array per parameter table,
// named after the table ("entity", "relation", "core", "subject", "object";
// see each score function's Layout). Values are stored as the model holds
// them (as float64): ComplEx rows are [re | im], non-negative models store log-values
// (ComplEx+ stores [log Re | θ] with Im = Re·σ(θ)). The run's config.toml
// says which model and semantics produced them. In Python:
//
//	params = numpy.load("checkpoint.npz"); params["entity"].shape
func writeCheckpoint(path string, m *models.Model) error {
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
	return WriteFileAtomic(path, buf.Bytes(), 0o644)
}

// readArray reads one float array of an .npz archive. The entry is read
// into memory first: npyio v0.6.0 decodes elements with single Read calls,
// and a decompressing reader may return fewer bytes than asked, which
// silently misaligns every later value.
func readArray(r *npz.Reader, name string) ([]float64, error) {
	rc, err := r.Open(name)
	if err != nil {
		return nil, err
	}
	raw, err := io.ReadAll(rc)
	rc.Close()
	if err != nil {
		return nil, fmt.Errorf("reading %q: %w", name, err)
	}
	arr, err := npy.NewReader(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("reading %q: %w", name, err)
	}
	var vals []float64
	if err := arr.Read(&vals); err != nil {
		var v32 []float32
		arr, _ = npy.NewReader(bytes.NewReader(raw))
		if err2 := arr.Read(&v32); err2 != nil {
			return nil, fmt.Errorf("reading %q: %w", name, err)
		}
		vals = make([]float64, len(v32))
		for i, v := range v32 {
			vals[i] = float64(v)
		}
	}
	return vals, nil
}

// loadCheckpoint copies the arrays of a checkpoint into m's parameters of
// the same names and shapes. Semantics may differ: distilling a trained
// ComplEx into ComplEx² copies its embeddings as they are (paper, §4.2).
func loadCheckpoint(path string, m *models.Model) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	r, err := npz.NewReader(f, st.Size())
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	for _, name := range m.ParamNames() {
		p := m.Param(name)
		h := r.Header(name)
		if h == nil {
			return fmt.Errorf("%s: no array %q (has %v)", path, name, r.Keys())
		}
		if len(h.Descr.Shape) != 2 || h.Descr.Shape[0] != p.Shape()[0] || h.Descr.Shape[1] != p.Shape()[1] {
			return fmt.Errorf("%s: array %q has shape %v, the model needs %v", path, name, h.Descr.Shape, p.Shape())
		}
		vals, err := readArray(r, name)
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
