// Package tsne embeds points in the plane by t-distributed stochastic
// neighbour embedding (van der Maaten and Hinton, 2008), for the paper's
// figure of sampled against test triples ("Sampled triples are close to
// test triples": ψ features of up to 25,000 of each, perplexity 50, 5000
// iterations, scikit-learn's other defaults).
//
// It is written here because no maintained Go implementation was found:
// github.com/danaugrs/go-tsne (last changed 2020) adds each iteration's
// gradient to the last one's, has neither early exaggeration nor momentum,
// draws from the global random source and panics on bad input. This one
// follows scikit-learn's TSNE (1.2 on): perplexity-calibrated Gaussian
// affinities, a start on the first two principal components, early
// exaggeration, momentum with per-coordinate gains, both reset between the
// two phases, the automatic learning rate, and its stopping rules. Its
// default method, as scikit-learn's, is the Barnes–Hut approximation (van
// der Maaten, 2014) at angle 0.5: affinities to each point's ⌊3·perplexity
// + 1⌋ nearest neighbours, found by blocks of the Gram matrix, and the
// repulsion of far quadtree cells taken at their centres of mass, O(n log
// n) a step. Options.Angle = 0 is the exact method, O(n²) a step and in
// memory, for a few thousand points.
package tsne
