// Package runspec is what a grid's run (grid.RunSpec) means to the
// training stack, decided before any run trains: its train.Config
// (TrainConfig, which starts from resultsdir.ModelConfig), its memory
// budget and estimate (MemoryBudget, EstimateRun), the checks only the
// models registry can make (Validate, the command's grid.Validator;
// Shardable), and the checks of runs against their data and results
// directory (PreflightRuns). The runner (gekc/sweep) trains what it
// describes; the command checks with it first.
package runspec
