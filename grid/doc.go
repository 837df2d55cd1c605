// Package grid is the grid language of gekc's experiments: a TOML file of
// training runs, parsed, expanded into numbered runs and validated, with
// errors naming the file and line. It knows TOML and the keys of a run
// (RunSpec), and no training package: the runner (package sweep) adds what
// only the models registry knows through a Validator (runspec.Validate) and
// maps a RunSpec onto a training configuration.
//
// A grid has an optional name (default: the file's base name), an optional
// description, an optional paper = false (its runs do not follow the paper's
// protocol: no paper.md compares them with its Table 2), a [defaults] table
// and [[sweep]] blocks. Every RunSpec key may appear in either, as a value or
// as an array, which makes it a sweep axis; each block expands to the
// Cartesian product of its axes over the defaults. For a list key (eval.hits)
// an axis is an array of lists, for a table key (pll_weights, eval) an array
// of tables; `seeds = N` means seed = [0, ..., N-1]. Runs are numbered
// blocks-first in file order and, within a block, in RunSpec field order with
// the seed varying fastest, so `-only 3` is the same run on every machine.
// Unknown keys, wrong types, missing required keys (see requiredKeys) and
// runs the Validator rejects are errors naming file:line, all reported at
// once; the runner then checks the runs against their data sets
// (runspec.PreflightRuns), so nothing trains that is bound to fail.
//
// A run's ID (RunSpec.ID) spells out the keys people sweep most and hashes
// every other key that differs from its default, so adding a key with a
// default to RunSpec renames no finished run. Select is the command's
// -only.
package grid
