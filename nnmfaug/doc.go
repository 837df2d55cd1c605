// Package nnmfaug is NNMFAug (Chauhan et al. 2021, "A Probabilistic
// Framework for Knowledge Graph Data Augmentation"), the one earlier triple
// sampler the paper compares GeKCs' samples (Table 3, KTD) and test
// log-likelihoods (Table 4) with, built as the paper's code builds it:
//
//   - count each entity's relations as a subject, H[e, r], and as an
//     object, T[e, r], over the training triples;
//   - factorise the entity co-occurrence matrix X = H·Tᵀ (|E| × |E|) by
//     non-negative matrix factorisation, X ≈ W·V with k components (256);
//   - cluster the entities' features [W | Vᵀ] by Ward's agglomerative
//     clustering into C clusters (50);
//   - sample a triple: a cluster c uniformly, a subject and an object
//     uniformly and independently from c's entities, and the relation with
//     probability ∝ H[s, r]·T[o, r] + α (α = 10⁻³).
//
// X is never formed: its products with the factors go through H and T
// (|E| × |R|), so the factorisation costs O(|E|·|R|·k + |E|·k²) per
// iteration, and the clustering O(|E|² · 2k) in all, with O(|E| · 2k)
// memory (the nearest-neighbour chain on centroids). The paper's code uses
// scikit-learn's coordinate-descent NMF and its Ward; this package uses
// Lee and Seung's multiplicative updates for the same objective, so its
// factors (and clusters) are another local optimum of the same method.
//
// A triple whose subject and object lie in different clusters has
// probability zero under this sampler. The paper's code scores a test
// triple as if its object were in its subject's cluster (Model.PaperLogProb);
// Model.LogProb is the sampler's own probability.
package nnmfaug
