// Command experiments is gekc's command line: verbs, each with its own
// flags (VERB -h, the help texts in usage/), each a thin layer over a
// package: sweep (package sweep, the default), analyze KIND and tables
// (analysis), scaling, query, synth and diag NAME (analysis.Diagnose).
// -out is the results directory and -data the data root in every verb;
// -analyze KIND and -scaling are the old forms of analyze and scaling.
//
//	go run ./experiments -grid grids/umls.toml            # sweep: train, resume, tabulate
//	go run ./experiments sweep -grid umls -dry-run        # list runs and their state
//	go run ./experiments analyze calibration -grid umls
//	go run ./experiments query -out results/umls -run complex2-mle -s alga -r isa
package main
