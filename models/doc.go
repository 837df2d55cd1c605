// Package models holds the score functions of knowledge-graph embedding
// models and turns them into circuits over the variables (S, R, O) under
// three semantics:
//
//	name   semantics      p(s,r,o) ∝              tractable log Z, marginals
//	cp     energy-based   exp φ(s,r,o)            no (B×|E| scores per marginal)
//	cp+    non-negative   φ with φ ≥ 0             yes, via column sums
//	cp2    squared        φ² (+ uniform ε mass)    yes, via Gram matrices
//
// for φ in CP, DistMult, ComplEx, RESCAL, TuckER, SimplE and QuatE (Names
// lists the registry; a score may decline a semantics it has no sound form
// in, DecliningScore).
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
// Write one file with a type implementing ScoreFunction and register it
// in an init function (Register("f", ...) makes "f", "f+" and "f2"):
//
//   - A hypercomplex score is its term table: rows cut into n parts of
//     rank columns (ComplEx 2, QuatE 4) and φ = Σ_t σ_t Σ_j s[S_t,j]·
//     r[R_t,j]·o[O_t,j]. Embed Multilinear{Parts, Terms, Cap} and add Name,
//     Layout (MultilinearLayout) and Init (InitMultilinear); the query, the
//     squared partition function over the Gram matrices' n × n blocks, the
//     moduli and the product units follow, each one fused op of package
//     graph. quate.go is the example.
//   - Otherwise Layout declares the parameter tables and which table serves
//     each slot. Query receives the gathered rows of one table per slot, so
//     a slot with several embeddings packs them side by side in one row
//     (graph.Builder.Parts and Blocks cut rows and Gram matrices into n
//     parts again). rank is the number of components per part.
//   - Query builds q_v in an Algebra: the linear semiring for energy and
//     squared models, the log semiring for non-negative ones, so a monotone
//     score gets its non-negative restriction without further code. Chain
//     its operations with graph.Builder.In (e.In(alg).Mul(a, b)); constants
//     enter through Algebra.Scale (see ExampleAlgebra).
//   - SquaredPartition gives Σ φ² in closed form from the Gram matrices of
//     Tables.RoleGram.
//   - Init initialises the tables (DefaultInit does the paper's three
//     schemes; its terms count the products per component, net of
//     subtracted ones, for the log-normal centring).
//   - A score that subtracts has a non-negative form only with a proof
//     that φ ≥ 0 in its doc comment (NonNegativeScore, or Multilinear's
//     Cap, which gates every later part at Cap times part 0); without one
//     it declines the semantics (DecliningScore) and "f+" is not a name.
//
// cp.go is a complete one in about 60 lines; distmult.go reuses it with
// another layout; simple.go packs two roles per row; the Example defines CP
// with weighted components outside the package. Optional hooks, each in the
// same file:
//
//   - NonNegativeScore, required for a score with a subtraction (ComplEx):
//     its non-negative restriction; with CandidateBlocks, where its
//     candidates repeat blocks of the features, ranking folds the query
//     onto them (half the product for ComplEx+);
//   - MixtureScore: ancestral sampling of the + model (without it, the +
//     model samples by inverse transform, slower at scale);
//   - ProductUnitScore: the product units, needed for KTD's ψ features
//     (-analyze ktd -features <run> refuses the model without it);
//   - ModulusScore: rows that pack the parts of one number ([re | im]),
//     whose modulus the N3 and F2 regularisers then penalise (LpPenalty).
//
// Then give it a plain-Go evaluation of φ in its own _test.go file,
// registered for the brute-force suite in init: references["f"] = refF (see
// cp_test.go, simple_test.go), and for rows of n > 1 parts of one number
// moduli["f"] = n beside it. Without a reference the package's tests fail
// at once saying so. TestQueriesMatchBruteForce,
// TestGradientsMatchFiniteDifferences, TestSamplersPassGoodnessOfFit and the
// constrained tests then check every registered name, in all three
// semantics, against enumeration over all triples of a tiny graph, finite
// differences and a χ² test.
package models
