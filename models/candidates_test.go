package models

import (
	"math/rand/v2"
	"slices"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Every registered score function that declares CandidateBlocks keeps its
// word: LogCandidates of features is, for each target, the concatenation
// of the blocks it names. Ranking and sampling rely on it without calling
// LogCandidates (logCandidatesFrom folds the query instead).
func TestCandidateBlocks(t *testing.T) {
	const rows, w = 3, 2
	declared := 0
	for _, name := range Names() {
		sf, sem, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		if sem != NonNegative {
			continue
		}
		nn := nonNegative(sf)
		cb, ok := nn.(CandidateBlocks)
		if !ok {
			continue
		}
		declared++
		for _, target := range Vars {
			blocks := cb.CandidateBlocks(target)
			parts := slices.Max(blocks) + 1
			for p := 0; p < parts; p++ {
				if !slices.Contains(blocks, p) {
					t.Errorf("%s, target %v: blocks %v leave block %d unused", name, target, blocks, p)
				}
			}
			rng := rand.New(rand.NewPCG(uint64(target), 9))
			x := make([]float64, rows*parts*w)
			for i := range x {
				x[i] = rng.NormFloat64()
			}
			g := G.NewGraph()
			feats := G.NewMatrix(g, tensor.Float64, G.WithShape(rows, parts*w), G.WithName("f"),
				G.WithValue(tensor.New(tensor.WithShape(rows, parts*w), tensor.WithBacking(x))))
			cand, err := nn.LogCandidates(target, feats)
			if err != nil {
				t.Fatalf("%s, %v: %v", name, target, err)
			}
			run(t, cand)
			var want []float64
			for i := 0; i < rows; i++ {
				for _, b := range blocks {
					want = append(want, x[i*parts*w+b*w:i*parts*w+(b+1)*w]...)
				}
			}
			if got := vec(cand); !slices.Equal(got, want) {
				t.Errorf("%s, target %v: LogCandidates gives %v, the blocks %v of %d give %v", name, target, got, blocks, parts, want)
			}
		}
	}
	if declared == 0 {
		t.Error("no registered model declares CandidateBlocks: the test checks nothing")
	}
}
