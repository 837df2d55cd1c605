package train

// The tests and benchmarks run on OpenBLAS with subnormals flushed, as the
// experiments command does; the package itself imports neither.
import _ "gekc/graph/openblas"
