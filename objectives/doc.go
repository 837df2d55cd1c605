// Package objectives composes training losses from a circuit's queries:
// the weighted pseudo-log-likelihood (paper, eq. 1) and exact maximum
// likelihood (eq. 2). They use nothing but LogConditional, LogScore and
// LogPartition, so every score function under every semantics gets them.
// Regularized adds the N3 and F2 penalties of the batch's embedding rows
// (LpPenalty) to either, for the energy-based and squared models.
package objectives
