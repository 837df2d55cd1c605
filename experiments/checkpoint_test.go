package main

import (
	"path/filepath"
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
