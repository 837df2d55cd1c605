package ckpt_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"
	"slices"

	"gekc/models"
	"gekc/train/ckpt"
)

// A trained model's parameters go to a run directory's checkpoint and come
// back into a fresh model of the same sizes.
func Example() {
	dir, err := os.MkdirTemp("", "run")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	sizes := models.Sizes{Entities: 5, Relations: 2, Rank: 3}
	trained, err := models.New("complex", sizes, models.Options{Seed: 1})
	if err != nil {
		log.Fatal(err)
	}
	path := filepath.Join(dir, ckpt.CheckpointName)
	if err := ckpt.Write(path, trained); err != nil {
		log.Fatal(err)
	}

	fresh, err := models.New("complex", sizes, models.Options{Seed: 2})
	if err != nil {
		log.Fatal(err)
	}
	if err := ckpt.Load(path, fresh); err != nil {
		log.Fatal(err)
	}
	for _, name := range fresh.ParamNames() {
		p := fresh.Param(name)
		same := slices.Equal(p.Data().([]float32), trained.Param(name).Data().([]float32))
		fmt.Println(name, p.Shape(), "as trained:", same)
	}
	// Output:
	// entity (5, 6) as trained: true
	// relation (2, 6) as trained: true
}
