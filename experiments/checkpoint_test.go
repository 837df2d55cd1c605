package main

import (
	"archive/zip"
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"gekc/models"

	"gorgonia.org/tensor"
)

func TestCheckpointRoundTrip(t *testing.T) {
	// Large enough that each array spans many deflate blocks.
	sz := models.Sizes{Entities: 3000, Relations: 7, Rank: 40}
	src, err := models.New("complex", sz, models.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	// A float32-subnormal entry (as trained before graph.Adam flushed them)
	// loads as 0 into a float32 model, as itself into a float64 one.
	src.Param("entity").Data().([]float32)[5] = 1e-39
	path := filepath.Join(t.TempDir(), "checkpoint.npz")
	if err := writeCheckpoint(path, src); err != nil {
		t.Fatal(err)
	}
	// Distillation: the same tables, another semantics and dtype.
	dst, err := models.New("complex2", sz, models.Options{Seed: 2, Dtype: tensor.Float64})
	if err != nil {
		t.Fatal(err)
	}
	if err := loadCheckpoint(path, dst); err != nil {
		t.Fatal(err)
	}
	for _, n := range src.ParamNames() {
		a, b := src.Param(n).Data().([]float32), dst.Param(n).Data().([]float64)
		for i := range a {
			if float64(a[i]) != b[i] {
				t.Fatalf("%s[%d]: %v became %v", n, i, a[i], b[i])
			}
		}
	}
	same, err := models.New("complex", sz, models.Options{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if err := loadCheckpoint(path, same); err != nil {
		t.Fatal(err)
	}
	if x := same.Param("entity").Data().([]float32)[5]; x != 0 {
		t.Errorf("subnormal entry loaded as %v, want 0", x)
	}
	wrong, _ := models.New("complex", models.Sizes{Entities: 3001, Relations: 7, Rank: 40}, models.Options{})
	if err := loadCheckpoint(path, wrong); err == nil {
		t.Error("loading a checkpoint of another shape succeeded")
	}
}

// Embeddings trained elsewhere arrive as numpy.savez archives: entries
// named "<table>.npy", float32 or float64, C or Fortran order.
func TestLoadCheckpointWrittenByNumpy(t *testing.T) {
	m, err := models.New("complex", models.Sizes{Entities: 4, Relations: 2, Rank: 2}, models.Options{Dtype: tensor.Float64})
	if err != nil {
		t.Fatal(err)
	}
	if err := loadCheckpoint(filepath.Join("testdata", "numpy-complex.npz"), m); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		table  string
		offset float64
	}{{"entity", 0}, {"relation", 100}} {
		p := m.Param(tc.table)
		rows, cols := p.Shape()[0], p.Shape()[1]
		d := p.Data().([]float64)
		for i := range rows {
			for j := range cols {
				if want := tc.offset + float64(10*i+j); d[i*cols+j] != want {
					t.Errorf("%s[%d,%d] = %v, want %v", tc.table, i, j, d[i*cols+j], want)
				}
			}
		}
	}
}

// npzOf builds an in-memory .npz whose entry name holds raw.
func npzOf(t testing.TB, name string, raw []byte) *zip.Reader {
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	f, err := w.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Store})
	if err != nil {
		t.Fatal(err)
	}
	f.Write(raw)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	z, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	return z
}

// npyBytes is a version-1 .npy file with the given header dictionary.
func npyBytes(dict string, data []byte) []byte {
	hdr := []byte(dict + "\n")
	b := append([]byte("\x93NUMPY\x01\x00"), byte(len(hdr)), byte(len(hdr)>>8))
	return append(append(b, hdr...), data...)
}

func TestReadMatrixRejects(t *testing.T) {
	f64 := make([]byte, 2*3*8)
	for _, tc := range []struct {
		name, entry string
		raw         []byte
		want        string
	}{
		{"missing", "other.npy", npyBytes("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", f64), `no array "x"`},
		{"shape", "x.npy", npyBytes("{'descr': '<f8', 'fortran_order': False, 'shape': (3, 2), }", f64), "has shape [3 2]"},
		{"rank", "x", npyBytes("{'descr': '<f8', 'fortran_order': False, 'shape': (6,), }", f64), "has shape [6]"},
		{"dtype", "x", npyBytes("{'descr': '<i8', 'fortran_order': False, 'shape': (2, 3), }", f64), "want float32 or float64"},
		{"short", "x", npyBytes("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", f64[:40]), "does not fit"},
		{"no newline", "x", append([]byte("\x93NUMPY\x01\x00\x04\x00"), "{'de"...), "malformed"},
		{"not npy", "x", []byte("hello, world"), "entry x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readMatrix(npzOf(t, tc.entry, tc.raw), "x", 2, 3)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// A corrupt or hostile .npy entry is an error, never a panic. The entry
// is fuzzed inside a valid zip, so that the fuzzer reaches the .npy parser
// instead of the zip checksum.
func FuzzReadNpyEntry(f *testing.F) {
	f.Add(npyBytes("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", make([]byte, 48)))
	f.Add(npyBytes("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", make([]byte, 24)))
	f.Add(npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (), }", make([]byte, 4)))
	f.Fuzz(func(t *testing.T, raw []byte) {
		z := npzOf(t, "x.npy", raw)
		vals, err := readMatrix(z, "x", 2, 3)
		if err == nil && len(vals) != 6 {
			t.Fatalf("%d values for a 2×3 array", len(vals))
		}
		var v []float32
		readNpyEntry(z, "x.npy", &v, 4, 1<<10)
	})
}
