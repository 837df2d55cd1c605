// Package report turns the results of a sweep into tables and figures:
// results.tsv (Table, one Row per run, read with ReadTSV and written with
// Table.TSV), results.md (Markdown: the best configuration per dataset,
// model, objective and constraints, then every configuration), the compact
// table a sweep prints when it ends (Summary), and the PNG figures of a
// run (Curves, Calibration).
//
// The package knows the columns of a results row, not how runs are
// trained or recorded: package resultsdir builds each Row from a run's
// metrics.json.
package report
