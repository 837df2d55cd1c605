// Package synth makes knowledge graphs from generative models: a whole data
// set (train, valid and test splits) sampled exactly from a GeKC, trained
// (a surrogate of the graph it was trained on) or planted (parameters drawn
// from a stated distribution, so that the true distribution, and the exact
// log-likelihood of every split under it, are known).
//
// A surrogate is what the paper's introduction names as a use of a
// generative model of triples; a planted graph is a benchmark of known
// truth at any size, such as a wikikg2-sized graph on which training can
// be measured against the exact test log-likelihood it could reach.
//
// A Job is a data set to write as the command's synth verb states it
// (Job.Flags): from a finished run of a results directory, opened through
// package resultsdir (RunSource), or a planted model (PlantSource).
package synth
