package models

import (
	"math/rand/v2"

	"gekc/graph"
)

// QuatE is φ(s, r, o) = ⟨s ⊗ r, o⟩ (Zhang et al. 2019) with quaternion
// embeddings stored as real rows [1 | i | j | k] of width 4d and ⊗ the
// Hamilton product; the relation quaternion is left unnormalised, so that
// φ stays multilinear. Its rank counts quaternions: a row has 4·rank reals.
//
// Non-negative restriction: every part of every row is non-negative and
// its i, j and k parts are at most g = 0.45 times its real part (gated,
// Multilinear's Cap). Proof that φ ≥ 0: the six negative terms are
// s_i r_i o_1, s_j r_j o_1, s_k r_k o_1 (each ≤ g²·s_1 r_1 o_1) and
// s_k r_j o_i, s_i r_k o_j, s_j r_i o_k (each ≤ g³·s_1 r_1 o_1), so per
// component φ ≥ (1 − 3g² − 3g³)·s_1 r_1 o_1 + (the other positive terms)
// ≥ 0, as 3·0.45² + 3·0.45³ = 0.88 ≤ 1.
type QuatE struct{ Multilinear }

// hamilton is ⟨s ⊗ r, o⟩ term by term: (subject part, relation part,
// object part, sign) with parts 1, i, j, k = 0, 1, 2, 3.
var hamilton = []graph.TriTerm{
	{S: 0, R: 0, O: 0, Sign: 1}, {S: 1, R: 1, O: 0, Sign: -1}, {S: 2, R: 2, O: 0, Sign: -1}, {S: 3, R: 3, O: 0, Sign: -1},
	{S: 0, R: 1, O: 1, Sign: 1}, {S: 1, R: 0, O: 1, Sign: 1}, {S: 2, R: 3, O: 1, Sign: 1}, {S: 3, R: 2, O: 1, Sign: -1},
	{S: 0, R: 2, O: 2, Sign: 1}, {S: 1, R: 3, O: 2, Sign: -1}, {S: 2, R: 0, O: 2, Sign: 1}, {S: 3, R: 1, O: 2, Sign: 1},
	{S: 0, R: 3, O: 3, Sign: 1}, {S: 1, R: 2, O: 3, Sign: 1}, {S: 2, R: 1, O: 3, Sign: -1}, {S: 3, R: 0, O: 3, Sign: 1},
}

func init() {
	Register("quate", func() ScoreFunction { return QuatE{Multilinear{Parts: 4, Terms: hamilton, Cap: 0.45}} })
}

func (QuatE) Name() string { return "quate" }

func (q QuatE) Layout(sz Sizes) Layout { return MultilinearLayout(sz, q.Parts) }

// Init: the semantics' default, centred for 10 − 6 = 4 net products per
// component; the restriction's real parts log-Dirichlet, gates near 0.
func (q QuatE) Init(sem Semantics, sz Sizes, t TableSpec, x []float64, rng *rand.Rand, scale float64) error {
	InitMultilinear(q.Multilinear, sem, sz, t, x, rng, scale, 4)
	return nil
}
