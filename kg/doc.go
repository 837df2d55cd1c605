// Package kg holds knowledge-graph data: vocabularies of entities and
// relations, triples and their splits, loaders for the plain-text benchmark
// layout (train/valid/test.txt[.gz]) and OGB's on-disk layout, an index of
// known answers for filtered ranking, and entity types with a relation schema
// for domain constraints.
//
// kg knows nothing about models or autodiff; it turns files into integer
// triples and reports every malformed input with its file and line. A name
// looked up with Vocab.Lookup that is not there is a NameError suggesting
// the closest names.
//
// # Loading
//
// Load detects the layout of a data set directory. In the plain layout, ids
// follow the byte order of names over all splits (and all typed entities),
// so the same files give the same ids on every run and machine. In OGB's
// ogbl-biokg layout, ids follow OGB's own convention, one block per node
// type in sorted type order, so that OGB's supplied negatives and published
// evaluation code line up with them.
//
// # Evaluation helpers
//
// A Filter answers "which objects (subjects, relations) are known for this
// pair" for the filtered ranking protocol, compactly enough for millions of
// triples. A Schema restricts subjects and objects of each relation to one
// entity type each; Negatives keep OGB's per-triple candidate lists.
package kg
