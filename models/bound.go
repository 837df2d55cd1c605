package models

import (
	"gekc/graph"
	"gekc/kg"

	G "gorgonia.org/gorgonia"
)

// BoundBatch is a model bound to a graph of its own, with one batch of
// Size triples given as the index vectors S, R and O: the setting of every
// compiled program that answers queries on batches of whole triples
// (training steps, ranking, log-likelihoods). The caller fills the vectors
// with Load and runs its programs; the graph reads them at every run.
type BoundBatch struct {
	Circuit *Circuit
	Batch   *Batch
	S, R, O []int
}

// BindBatch binds m, multiplied by the domain constraint d (nil: none), to
// a new graph with index vectors named "s", "r" and "o" for batches of
// size triples.
func (m *Model) BindBatch(d *Domain, size int) (*BoundBatch, error) {
	bb := &BoundBatch{S: make([]int, size), R: make([]int, size), O: make([]int, size)}
	g := G.NewGraph()
	c, err := m.BindConstrained(g, d)
	if err != nil {
		return nil, err
	}
	b, err := c.NewBatch(graph.IndexVector(g, "s", bb.S), graph.IndexVector(g, "r", bb.R), graph.IndexVector(g, "o", bb.O))
	if err != nil {
		return nil, err
	}
	bb.Circuit, bb.Batch = c, b
	return bb, nil
}

// Load writes the first Size triples of ts into the index vectors and pad
// into the rows past them; it returns the number of real rows. The padded
// rows are computed like the others: a caller chooses a pad whose results
// are harmless (a valid triple, when a zero weight multiplies its loss).
func (bb *BoundBatch) Load(ts []kg.Triple, pad kg.Triple) int {
	n := min(len(bb.S), len(ts))
	for i := range bb.S {
		t := pad
		if i < n {
			t = ts[i]
		}
		bb.S[i], bb.R[i], bb.O[i] = int(t.S), int(t.R), int(t.O)
	}
	return n
}
