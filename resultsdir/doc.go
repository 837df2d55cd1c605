// Package resultsdir is the on-disk layout of a results directory, the
// directory a sweep trains a grid's runs into, and nothing else: the names
// of its files, the run record (metrics.json) and resolved spec
// (config.toml) of each run, the results lock, the tables rewritten from
// records, the per-run figures, a run's samples, and opening a finished
// run again (spec, record, data, model, the parameters its samples came
// from). The runner (gekc/sweep) writes it; query, synth and the analyses
// (gekc/analysis) read it through this package alone.
//
//	<out>/grid.toml                 the grid that produced the sweep
//	<out>/runs/<id>/config.toml     the fully resolved grid.RunSpec
//	<out>/runs/<id>/metrics.json    Record: outcome, spec, timing, host (each process's, for a
//	                                run resumed from its state); written last
//	<out>/runs/<id>/lock            held (flock) while the run trains
//	<out>/runs/<id>/checkpoint.npz  the selected parameters (package train/ckpt)
//	<out>/runs/<id>/checkpoint-ll.npz  the parameters of the best validation
//	                                log-likelihood, with sample_from = "ll"
//	<out>/runs/<id>/state.npz       resume state of an unfinished run (package train/ckpt)
//	<out>/runs/<id>/curves.png      loss and validation metrics by epoch
//	<out>/runs/<id>/calibration.png reliability diagrams, when the run measured the ECE
//	<out>/runs/<id>/samples.tsv     triples sampled from the run (.gz as published)
//	<out>/results.tsv               one row per run, as runs end
//	<out>/results.md                best configuration per (dataset, model,
//	                                objective, constraints), and all of them
//	<out>/paper.md                  the best configurations beside a reference table
//	<out>/results.lock              held (flock) by every writer of the tables
//
// Every file is written atomically (write, then rename).
package resultsdir
