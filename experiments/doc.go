// Command experiments is gekc's command line, a set of verbs, each with
// its own flags (VERB -h): sweep trains a TOML grid of runs into a results
// directory and tabulates them (package sweep), analyze and tables work on
// its finished runs, scaling runs the training-cost study (package
// scaling), query asks a finished run's model and synth writes a data set
// sampled from one.
//
//	go run ./experiments -grid grids/umls.toml            # sweep: train, resume, tabulate
//	go run ./experiments sweep -grid umls -dry-run        # list runs and their state
//	go run ./experiments sweep -grid fb15k237 -emit slurm
//	go run ./experiments analyze calibration -grid umls
//	go run ./experiments query -out results/umls -run complex2-mle -s alga -r isa
//
// On stdout a sweep prints only its final table, the best configuration
// per model and objective; progress (bars on a terminal, -v and -q) goes to
// stderr. -out is the results directory and -data the data root in every
// verb; -analyze KIND and -scaling are the old forms of analyze and scaling.
package main
