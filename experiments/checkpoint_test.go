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
	wrong, _ := models.New("complex", models.Sizes{Entities: 3001, Relations: 7, Rank: 40}, models.Options{})
	if err := loadCheckpoint(path, wrong); err == nil {
		t.Error("loading a checkpoint of another shape succeeded")
	}
}
