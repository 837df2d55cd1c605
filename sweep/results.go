package sweep

import (
	"gekc/internal/jsonfloat"
	"gekc/internal/procstat"
	"gekc/resultsdir"
	"gekc/runspec"
)

// The results directory's layout, records and tables are package
// resultsdir; these are the runner's names for them.
type (
	// Record is a run's metrics.json (resultsdir.Record).
	Record     = resultsdir.Record
	memoryJSON = resultsdir.Memory
	dataJSON   = resultsdir.Data
	// RungMark says which rung of a search a record ends
	// (resultsdir.RungMark).
	RungMark  = resultsdir.RungMark
	jsonFloat = jsonfloat.Float
)

var (
	toJSONMap      = jsonfloat.Map
	readRecord     = resultsdir.ReadRecordFile
	rowFromRecord  = resultsdir.Row
	trainedEpochs  = resultsdir.TrainedEpochs
	formatMetric   = resultsdir.FormatMetric
	loadDataset    = resultsdir.LoadDataset
	writeConfig    = resultsdir.WriteConfig
	cpuDescription = procstat.CPU
	// WriteRecord writes a run record (resultsdir.WriteRecord).
	WriteRecord = resultsdir.WriteRecord
	// RunState describes a run's state in a results directory
	// (resultsdir.RunState).
	RunState = resultsdir.RunState
	// FinishedRuns lists the finished runs of a results directory
	// (resultsdir.FinishedRuns).
	FinishedRuns = resultsdir.FinishedRuns
	// Unfinished and MemoryBudget are runspec's.
	Unfinished   = runspec.Unfinished
	MemoryBudget = runspec.MemoryBudget
	EstimateRun  = runspec.EstimateRun
	datasetNames = runspec.DatasetNames
)

// PaperMDName is resultsdir.PaperMDName.
const PaperMDName = resultsdir.PaperMDName
