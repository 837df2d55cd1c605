// Package metrics evaluates models: filtered link-prediction ranks (MRR,
// Hits@k) with a selectable tie policy, the average log-likelihood of
// triples, and (in later files) semantic consistency, calibration and
// sample quality.
//
// Scores come from compiled forward programs of the same circuit queries
// the objectives train (models.Circuit.Candidates, LogScore, LogPartition),
// so evaluation and training cannot disagree about what a model computes.
package metrics
