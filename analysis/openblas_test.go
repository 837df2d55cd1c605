package analysis

// The tests that train for real run on OpenBLAS with subnormals flushed, as
// the experiments command does; the package itself imports neither.
import _ "gekc/graph/openblas"
