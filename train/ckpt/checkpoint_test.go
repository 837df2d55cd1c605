package ckpt

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
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
	path := filepath.Join(t.TempDir(), CheckpointName)
	if err := Write(path, src); err != nil {
		t.Fatal(err)
	}
	// Distillation: the same tables, another semantics and dtype.
	dst, err := models.New("complex2", sz, models.Options{Seed: 2, Dtype: tensor.Float64})
	if err != nil {
		t.Fatal(err)
	}
	if err := Load(path, dst); err != nil {
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
	if err := Load(path, same); err != nil {
		t.Fatal(err)
	}
	if x := same.Param("entity").Data().([]float32)[5]; x != 0 {
		t.Errorf("subnormal entry loaded as %v, want 0", x)
	}
	wrong, _ := models.New("complex", models.Sizes{Entities: 3001, Relations: 7, Rank: 40}, models.Options{})
	if err := Load(path, wrong); err == nil {
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
	if err := Load(filepath.Join("testdata", "numpy-complex.npz"), m); err != nil {
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

// CheckLayout accepts a checkpoint that Load would accept, and reports all
// the tables that do not fit, a missing file and a file that is not an
// archive, each naming the file.
func TestCheckLayout(t *testing.T) {
	sz := models.Sizes{Entities: 4, Relations: 2, Rank: 3}
	m, err := models.New("complex", sz, models.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, CheckpointName)
	if err := Write(path, m); err != nil {
		t.Fatal(err)
	}
	complexLayout := func(sz models.Sizes) models.Layout {
		sf, _, err := models.Lookup("complex2")
		if err != nil {
			t.Fatal(err)
		}
		return sf.Layout(sz)
	}
	if err := CheckLayout(path, complexLayout(sz)); err != nil {
		t.Errorf("a fitting checkpoint: %v", err)
	}
	var misfit *LayoutError
	err = CheckLayout(path, complexLayout(models.Sizes{Entities: 5, Relations: 3, Rank: 3}))
	if !errors.As(err, &misfit) || misfit.Path != path || len(misfit.Misfits) != 2 ||
		!strings.Contains(misfit.Misfits[0], "entry entity has shape [4 6], the model needs [5 6]") ||
		!strings.Contains(misfit.Misfits[1], "entry relation has shape [2 6], the model needs [3 6]") {
		t.Errorf("other sizes: %v", err)
	}
	err = CheckLayout(path, models.Layout{Tables: []models.TableSpec{{Name: "core", Rows: 3, Cols: 9}}})
	if !errors.As(err, &misfit) || !reflect.DeepEqual(misfit.Misfits, []string{`no array "core" (has [entity relation])`}) {
		t.Errorf("a missing table: %v", err)
	}
	missing := filepath.Join(dir, "missing.npz")
	if err := CheckLayout(missing, complexLayout(sz)); err == nil || err.Error() != missing+" does not exist" {
		t.Errorf("a missing file: %v", err)
	}
	garbage := filepath.Join(dir, "garbage.npz")
	if err := os.WriteFile(garbage, []byte("not a zip"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := CheckLayout(garbage, complexLayout(sz)); err == nil || errors.As(err, &misfit) ||
		!strings.HasPrefix(err.Error(), garbage+": not a readable .npz (zip) file") {
		t.Errorf("a file that is not a zip archive: %v", err)
	}
}

// BenchmarkLoad loads the checkpoint of a ComplEx with 200,000 entities at
// d = 100 (a 200,000 × 200 float32 table, 160 MB): the bytes allocated per
// load are what a load costs beyond the model.
func BenchmarkLoad(b *testing.B) {
	sz := models.Sizes{Entities: 200_000, Relations: 10, Rank: 100}
	m, err := models.New("complex2", sz, models.Options{Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), CheckpointName)
	if err := Write(path, m); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := Load(path, m); err != nil {
			b.Fatal(err)
		}
	}
}
