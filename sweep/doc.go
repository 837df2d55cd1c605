// Package sweep turns a TOML grid of training runs into a results
// directory: the grid language, the runner that trains the runs (resumable,
// shareable between processes), their records and tables, SLURM job
// arrays, and the post-hoc analyses of finished runs. The experiments
// command is flags and printing over it.
//
// A sweep goes
//
//	g, err := sweep.LoadGrid("grids/umls.toml", sweep.Validate) // parse, expand, validate
//	runs, err := sweep.Select("0-5", g.Runs)                     // -only
//	notes, err := sweep.PreflightRuns(g, dataRoot, out, sweep.Unfinished(out, runs))
//	s := sweep.New(g, runs, sweep.Options{Out: out, DataRoot: dataRoot, Stdout: os.Stdout, Stderr: os.Stderr})
//	err = s.Prepare()
//	tally := s.Run(ctx) // trains with Train; Options.Run swaps in another RunFunc
//	err = s.PrintSummary()
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
// all reported at once; PreflightRuns then checks the runs against their
// data sets, so nothing trains that is bound to fail.
//
// # Results directory
//
//	<out>/grid.toml                 the grid that produced the sweep
//	<out>/runs/<id>/config.toml     the fully resolved RunSpec
//	<out>/runs/<id>/metrics.json    Record: Outcome, spec, timing, host; written last
//	<out>/runs/<id>/checkpoint.npz  written by the run function (package train/ckpt)
//	<out>/runs/<id>/state.npz       resume state of an unfinished run (package train/ckpt)
//	<out>/runs/<id>/curves.png      loss and validation metrics by epoch
//	<out>/results.tsv               one row per run, as runs end
//	<out>/results.md                best configuration per (dataset, model,
//	                                objective, constraints), and all of them
//
// Every file is written atomically; runs are claimed with flock, so a sweep
// may be killed at any moment and restarted (an unfinished run continues
// from its last resume state), and several processes may share one results
// directory (see Sweep). The run function is the seam to package train:
// Train is the real one, RunFunc says what any other must do.
package sweep
