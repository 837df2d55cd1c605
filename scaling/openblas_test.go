package scaling

// The children of the tests' studies use OpenBLAS and flushed subnormals,
// as the command's do.
import _ "gekc/graph/openblas"
