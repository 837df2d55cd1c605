// Package analysis holds the post-hoc analyses of finished runs: drawing
// samples from a trained GeKC (samples.tsv) and auditing them against its
// exact probabilities, the kernel triple distance (KTD) of those samples
// to the test triples, the empirical calibration error (ECE) of a model on
// the test triples and hard negatives, with the TSV and Markdown tables
// each writes, and the diagnostics the reproduction report cites (LLBySeen,
// Refit, UniformComponents).
//
// The package computes and renders; it does not know how runs are
// recorded or where they live. The runner (gekc/sweep, for the command's
// analyze verb) and the command's diag verb find the finished runs, load
// their checkpoints, and pass each run's model, dataset and plain
// description (Run) in.
package analysis
