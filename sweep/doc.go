// Package sweep trains the runs of a grid (package grid) into a results
// directory: the runner (resumable, shareable between processes), their
// records and tables, the checks of runs against their data (preflight),
// SLURM job arrays, and the post-hoc analyses of finished runs. The
// experiments command is flags and printing over it.
//
// A sweep goes
//
//	g, err := grid.LoadGrid("grids/umls.toml", sweep.Validate) // parse, expand, validate
//	runs, err := grid.Select("0-5", g.Runs)                     // -only
//	notes, err := sweep.PreflightRuns(g, dataRoot, out, sweep.Unfinished(out, runs))
//	s := sweep.New(g, runs, sweep.Options{Out: out, DataRoot: dataRoot, Stdout: os.Stdout, Stderr: os.Stderr})
//	err = s.Prepare()
//	tally := s.Run(ctx) // trains with Train; Options.Run swaps in another RunFunc
//	err = s.PrintSummary()
//
// # Results directory
//
//	<out>/grid.toml                 the grid that produced the sweep
//	<out>/runs/<id>/config.toml     the fully resolved RunSpec
//	<out>/runs/<id>/metrics.json    Record: Outcome, spec, timing, host (each process's, for a
//	                                run resumed from its state); written last
//	<out>/runs/<id>/checkpoint.npz  written by the run function (package train/ckpt)
//	<out>/runs/<id>/checkpoint-ll.npz  the parameters of the best validation
//	                                log-likelihood, with sample_from = "ll"
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
