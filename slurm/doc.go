// Package slurm writes SLURM job arrays of a grid's runs (sbatch.sh): one
// array task per run, each the experiments command on its run (-only)
// into one results directory, asking for the resources Array states (its
// memory estimated from the largest run when not given), requeued with
// its resume state saved before its time limit; a search (grid [search])
// is one array per rung, chained through a promote step. The tasks meet
// only in the results directory (package resultsdir): the runner
// (gekc/sweep) claims their runs.
package slurm
