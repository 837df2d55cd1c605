// Package objectives composes training losses from a circuit's queries:
// the weighted pseudo-log-likelihood (paper, eq. 1) and exact maximum
// likelihood (eq. 2). They use nothing but LogConditional, LogScore and
// LogPartition, so every score function under every semantics gets them.
package objectives
