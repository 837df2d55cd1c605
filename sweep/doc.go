// Package sweep trains the runs of a grid (package grid) into a results
// directory (package resultsdir, its layout): the runner, resumable,
// shareable between processes (SLURM arrays, package slurm; several
// terminals) and over MPI processes, and successive halving over a grid's
// configurations. The experiments command is flags and printing over it;
// what a run means before it trains is package runspec, the analyses of
// the finished runs package analysis.
//
// A sweep goes
//
//	g, err := grid.LoadGrid("grids/umls.toml", runspec.Validate) // parse, expand, validate
//	runs, err := grid.Select("0-5", g.Runs)                       // -only
//	notes, err := runspec.PreflightRuns(g, dataRoot, out, runspec.Unfinished(out, runs))
//	s := sweep.New(g, runs, sweep.Options{Out: out, DataRoot: dataRoot, Stdout: os.Stdout, Stderr: os.Stderr})
//	err = s.Prepare()
//	tally := s.Run(ctx) // trains with Train; Options.Run swaps in another RunFunc
//	err = s.PrintSummary()
//
// Every file is written atomically; runs are claimed with flock, so a sweep
// may be killed at any moment and restarted (an unfinished run continues
// from its last resume state), and several processes may share one results
// directory (see Sweep). The run function is the seam to package train:
// Train is the real one, RunFunc says what any other must do.
package sweep
