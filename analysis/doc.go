// Package analysis holds the post-hoc analyses of finished runs: drawing
// samples from a trained GeKC and auditing them against its exact
// probabilities, the kernel triple distance (KTD) of those samples to the
// test triples, the empirical calibration error (ECE) of a model on the
// test triples and hard negatives, the paper's t-SNE figure, with the TSV
// and Markdown tables each writes; and the diagnostics the reproduction
// report cites (LLBySeen, Refit, UniformComponents).
//
// Each analysis of a results directory (samples, ktd, tsne, calibration,
// plots, paper, tables) is a value behind one interface, Analysis, driven
// by one loop, Analyze: for each selected run it reads the record, skips
// what the analysis does not take or has done, computes the rest, and
// writes the tables under the results lock. Runs are opened through
// package resultsdir; the computations themselves (KTD, AuditSamples,
// Calibrate, ...) take plain models, data sets and descriptions (Run).
package analysis
