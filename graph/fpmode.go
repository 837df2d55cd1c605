package graph

import "gorgonia.org/tensor"

// SubnormalsFlushed reports whether the calling thread flushes subnormal
// float results to zero and reads subnormal operands as zero: the mode a
// program importing gekc/graph/openblas runs in on amd64 (see that
// package). Otherwise it reports false and Adam's own flush (see
// Adam.Step) is the only protection against subnormal slowdowns.
func SubnormalsFlushed() bool { return subnormalsFlushed() }

// FlushSubnormals zeroes the entries of t below its dtype's smallest normal
// number, as Adam does after every step: for parameters loaded from files
// written before it did.
func FlushSubnormals(t *tensor.Dense) {
	switch d := t.Data().(type) {
	case []float32:
		flushAll(d)
	case []float64:
		flushAll(d)
	}
}

func flushAll[T Float](xs []T) {
	for i, x := range xs {
		xs[i] = flushSubnormal(x)
	}
}
