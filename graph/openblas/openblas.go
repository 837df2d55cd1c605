// Package openblas routes the matrix products of gekc through OpenBLAS and
// sets the process's floating-point mode for training. A program opts in by
// importing it, as the experiments command does:
//
//	import _ "gekc/graph/openblas"
//
// Importing it has two process-wide effects, which is why no library
// package of gekc imports it:
//
//   - Gorgonia's stock ops, gonum's blas32/blas64 (and so gonum's mat, used
//     by metrics) and the graph package's own products use OpenBLAS (via
//     cgo and gonum's netlib binding) instead of gonum's pure-Go BLAS,
//     which is 25-50x slower here.
//   - On amd64, subnormal floats are flushed to zero and read as zero (MXCSR
//     FTZ and DAZ) on every thread. Parameters that training pulls towards
//     zero reach 1e-36 and below; their products are subnormal, and every
//     BLAS call and kernel touching them runs 10-100x slower on x86
//     (measured: a FB15k-237 CP² epoch went from 14 s to 119 s). Values
//     below 1.2e-38 (float32) or 2.2e-308 (float64) become zero, which
//     changes no result of this project. The mode is set by a C constructor
//     at load, before the Go runtime starts its threads, so that every
//     thread inherits it; graph.SubnormalsFlushed reports it.
package openblas

// #cgo LDFLAGS: -lopenblas
import "C"

import (
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/netlib/blas/netlib"
	G "gorgonia.org/gorgonia"
)

func init() {
	var impl netlib.Implementation
	G.Use(impl)
	blas64.Use(impl)
	blas32.Use(impl)
}
