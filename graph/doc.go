// Package graph is gekc's layer over Gorgonia: the custom ops the models
// need, a reverse pass that keeps embedding gradients sparse, compiled
// programs that re-run without allocating, and fused optimisers (Adam,
// Adagrad, SGD: one pass per parameter each).
//
// # Why custom ops
//
// Gorgonia v0.9.18's stock ops are either wrong or slow on this workload:
// ByIndices has a wrong gradient on the innermost axis and allocates a dense
// |E|×d gradient per step, LogSumExp and LogSoftMax are not per-row stable,
// Transpose copies, and AdamSolver makes a dozen passes per tensor. Every op
// here is checked against central finite differences in float64
// (TestGradients) and, for float32, against the float64 result.
//
// Each op instance owns its output buffer and carries a unique id in its
// hash, so Gorgonia never merges two nodes and a compiled Program writes the
// same memory at every step. Matrix products go to the BLAS Gorgonia uses
// (G.WhichBLAS): OpenBLAS in a program that imports gekc/graph/openblas,
// gonum's pure-Go BLAS otherwise, since importing graph changes no
// process-wide state. The exp-heavy float32 loops (row log-sum-exp,
// softmax, Adam) use AVX2 kernels when the CPU has them. Scores whose rows
// pack n parts (hypercomplex numbers) have part products, sums and gates
// and the squared partition's Gram-block contraction from term tables
// (PartProduct, PartSums, GatedLogParts, SignedBlockContract).
//
// # Building and running
//
// Build a loss from the ops (Gather, MatMul, Gram, RowDot, LogSoftmaxNLL,
// ...), call Backward for the gradients, Compile the loss and gradients
// once, then for each batch write the new indices into the input tensors in
// place, Run, and pass the gradient values to an Optimizer's Step.
//
// A Builder chains the ops with one error check per expression: its
// methods return only nodes and it keeps the first error, so a formula is
// written as one, e.g. e.Dot(e.Mul(e.Gram(U), e.Gram(W)), e.Gram(V)).
package graph
