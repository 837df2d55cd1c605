package graph

import "gorgonia.org/tensor"

// SubnormalsFlushed reports whether the calling thread flushes subnormal
// float results to zero and reads subnormal operands as zero.
//
// On amd64 gekc sets this mode (MXCSR FTZ and DAZ) for the whole process
// when it starts, as TensorFlow does for its threads and
// torch.set_flush_denormal does on request. Why: parameters that training
// pulls towards zero (an entity never seen in a role of a squared model)
// reach 1e-36 and below, their products are subnormal, and every BLAS call
// and kernel touching them runs 10-100x slower on x86 (measured: a
// FB15k-237 CP² epoch went from 14 s to 119 s). Values below 1.2e-38
// (float32) or 2.2e-308 (float64) become zero, which changes no result of
// this project. Elsewhere the function reports false and Adam's own flush
// (see Adam.Step) is the only protection.
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
