// Command experiments turns a TOML grid of training runs into results
// tables: the sweep machinery of gekc.
//
//	go run ./experiments -grid grids/umls.toml            # train, resume, tabulate
//	go run ./experiments -grid grids/umls.toml -dry-run   # list runs and their state
//	go run ./experiments -grid grids/fb15k237.toml -emit slurm
//	go run ./experiments query -out results/umls -run complex2-mle -s alga -r isa   # ask a finished run (query.go)
//
// # Grids
//
// A grid has an optional name (default: the file's base name), a [defaults]
// table and [[sweep]] blocks. Every RunSpec key may appear in either, as a
// value or as an array, which makes it a sweep axis; each block expands to
// the Cartesian product of its axes over the defaults. For a list key
// (eval.hits) an axis is an array of lists, for a table key (pll_weights,
// eval) an array of tables; `seeds = N` means seed = [0, ..., N-1]. Runs are
// numbered blocks-first in file order and, within a block, in RunSpec field
// order with the seed varying fastest, so `-only 3` is the same run on every
// machine. Unknown keys, wrong types, missing required keys (see
// requiredKeys) and runs the Validator rejects are errors naming file:line,
// all reported at once; Preflight then checks the runs against their data
// sets (preflight.go), so nothing trains that is bound to fail.
//
// On stdout a sweep prints only its final table, the best configuration
// per model and objective; progress (bars on a terminal, -v and -q) goes to
// stderr.
//
// # Output
//
//	<out>/grid.toml                 the grid that produced the sweep
//	<out>/runs/<id>/config.toml     the fully resolved RunSpec
//	<out>/runs/<id>/metrics.json    Outcome, spec, timing, host; written last
//	<out>/runs/<id>/checkpoint.npz  written by the run function
//	<out>/runs/<id>/state.npz       resume state of an unfinished run (package train/ckpt)
//	<out>/results.tsv               one row per run, as runs end
//	<out>/results.md                best configuration per (dataset, model,
//	                                objective, constraints), and all of them
//
// Every file is written atomically; runs are claimed with flock, so a sweep
// may be killed at any moment and restarted (an unfinished run continues
// from its last resume state), and several processes may
// share one output directory (see sweep). The run function itself, the seam
// to the train package, is runTraining in run.go; runner.go defines its
// types.
package main
