// Command experiments turns a TOML grid of training runs into results
// tables: flags and printing over package sweep, which holds the grid
// language and the runner, and package scaling for -scaling.
//
//	go run ./experiments -grid grids/umls.toml            # train, resume, tabulate
//	go run ./experiments -grid grids/umls.toml -dry-run   # list runs and their state
//	go run ./experiments -grid grids/fb15k237.toml -emit slurm
//	go run ./experiments -grid grids/umls.toml -analyze calibration
//	go run ./experiments query -out results/umls -run complex2-mle -s alga -r isa   # ask a finished run (query.go)
//
// On stdout a sweep prints only its final table, the best configuration
// per model and objective; progress (bars on a terminal, -v and -q) goes to
// stderr. The grid language and the results directory are described in
// package sweep; -h lists the flags.
package main
