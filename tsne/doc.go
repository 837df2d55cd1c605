// Package tsne embeds points in the plane by exact t-distributed
// stochastic neighbour embedding (van der Maaten and Hinton, 2008), for the
// paper's figure of sampled against test triples ("Sampled triples are
// close to test triples": ψ features of both, perplexity 50, 5000
// iterations, scikit-learn's other defaults).
//
// It is written here because no maintained Go implementation was found:
// github.com/danaugrs/go-tsne (last changed 2020) adds each iteration's
// gradient to the last one's, has neither early exaggeration nor momentum,
// draws from the global random source and panics on bad input. This one
// follows scikit-learn's TSNE (1.2 on) with method="exact":
// perplexity-calibrated Gaussian affinities, a start on the first two
// principal components, early exaggeration, momentum with per-coordinate
// gains, both reset between the two phases, the automatic learning rate,
// and its stopping rules. scikit-learn's default method is the Barnes–Hut
// approximation; this one is exact, O(n²) a step: meant for a few thousand
// points.
package tsne
