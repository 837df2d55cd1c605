// Package models holds the score functions of knowledge-graph embedding
// models and turns them into circuits over the variables (S, R, O) under
// three semantics:
//
//	name   semantics      p(s,r,o) ∝              tractable log Z, marginals
//	cp     energy-based   exp φ(s,r,o)            no (B×|E| scores per marginal)
//	cp+    non-negative   φ with φ ≥ 0             yes, via column sums
//	cp2    squared        φ² (+ uniform ε mass)    yes, via Gram matrices
//
// for φ in CP, DistMult, ComplEx, RESCAL and TuckER (Names lists the
// registry).
//
// A score function is multilinear, so for each slot v of a triple there is a
// query q_v built from the other two slots with φ = ⟨q_v, x_v⟩, x_v being
// the embedding of v. Every query the rest of gekc asks is written once in
// terms of these queries (circuit.go):
//
//	log φ(s,r,o)            LogScore
//	log Σ_v φ               LogMarginal (v summed out)
//	log p(v | other two)    LogConditional
//	log Σ_{s,r,o} φ         LogPartition (ErrIntractable for energy models)
//	log φ for every v       Candidates (ranking, sampling)
//
// # Adding a score function
//
// Write one file with a type implementing ScoreFunction and register it:
// Layout declares the parameter tables, Query builds q_v in an Algebra
// (the linear semiring for energy and squared models, the log semiring for
// non-negative ones, so a monotone score gets its non-negative restriction
// without further code), SquaredPartition gives Σ φ² in closed form from
// Gram matrices, and Init initialises the tables (DefaultInit does the
// paper's three schemes); graph.Builder writes a closed form such as
// SquaredPartition as its formula, with one error check. cp.go is a
// complete one in about 60 lines;
// distmult.go reuses it with another layout; the Example defines CP with
// weighted components outside the package. A score with a subtraction (like
// ComplEx) also implements NonNegativeScore.
//
// Then give it a plain-Go evaluation of φ in its own test file, registered
// for the brute-force suite (cp_test.go: references["cp"] = refCP; a
// MixtureScore or ProductUnitScore hook in the score file gives it ancestral
// sampling or KTD features too): TestQueriesMatchBruteForce,
// TestGradientsMatchFiniteDifferences, TestSamplersPassGoodnessOfFit and the
// constrained tests check every registered name, in all three semantics,
// against enumeration over all triples of a tiny graph, finite differences
// and a χ² test.
package models
