// Package analysis holds the post-hoc analyses of finished runs: drawing
// samples from a trained GeKC (samples.tsv), the kernel triple distance
// (KTD) of those samples to the test triples, and the empirical
// calibration error (ECE) of a model on the test triples and hard
// negatives, with the TSV and Markdown tables each analysis writes.
//
// The package computes and renders; it does not know how runs are
// recorded or where they live. The command that runs sweeps
// (gekc/experiments, -analyze) finds the finished runs, loads their
// checkpoints, and passes each run's model, dataset and plain description
// (Run) in.
package analysis
