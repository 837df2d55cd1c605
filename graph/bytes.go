package graph

import (
	G "gorgonia.org/gorgonia"
)

// Bytes returns the bytes of the values a program compiled from outputs
// owns: one buffer per node that computes them, inputs (parameters and
// bound index vectors, which the caller owns) excluded. Nothing is
// allocated: shapes are known when a graph is built, so a caller can size a
// batch to a memory budget before compiling it.
func Bytes(outputs ...*G.Node) int64 {
	if len(outputs) == 0 {
		return 0
	}
	var total int64
	for _, n := range outputs[0].Graph().ExactSubgraphRoots(outputs...).AllNodes() {
		if n.IsVar() {
			continue
		}
		total += ValueBytes(n)
	}
	return total
}

// ValueBytes returns the size of n's value alone (a scalar when n has no
// shape).
func ValueBytes(n *G.Node) int64 {
	size := int64(1)
	if s := n.Shape(); len(s) > 0 {
		size = int64(s.TotalSize())
	}
	return size * int64(n.Dtype().Size())
}
