// Package dist trains one model whose entity tables are split by rows over
// several processes: an exact step, the same as train.Stepper's on the
// whole model up to the order of floating-point sums.
//
// Every normaliser of a squared or non-negative model reads a whole entity
// table only through a statistic summed over its rows: the Gram matrix
// XᵀX (squared) or the column log-sums of its log features (non-negative).
// So each process keeps its own rows, their gradient and optimiser slots;
// what crosses between processes in a step is the k×k (or 1×k) statistic
// and its gradient, the rows the batch reads and their gradients, and the
// gradient of the replicated relation tables. An energy-based model,
// whose normalisers are log-sum-exps over every entity's score, scores
// every query of the batch against each process's rows and combines the
// row log-sum-exps across the processes (energy.go). Evaluation is
// sharded alike (Evaluator). See DESIGN.md, "Past one machine", for the
// byte counts.
//
// The processes are a Comm: mpi.World under mpirun (the mpi build tag), or
// Local, goroutines of one process, which tests use.
package dist
