package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"gekc/analysis"
	"gekc/grid"
	"gekc/internal/atomicfile"
	"gekc/internal/filelock"
	"gekc/internal/jsonfloat"
	"gekc/sweep"
	"gekc/train"
)

// The command's tests were written when the sweep was part of the
// command; these names, of package sweep and of the results directory's
// layout, keep them reading as they did.

type (
	Job         = sweep.Job
	Outcome     = sweep.Outcome
	RunFunc     = sweep.RunFunc
	Status      = train.Status
	EpochRecord = train.EpochRecord
	Observer    = train.Observer
	runRecord   = sweep.Record
)

const (
	StatusFinished = train.Finished
	StatusDiverged = train.Diverged
	StatusFailed   = train.Failed

	runsDirName         = "runs"
	gridCopyName        = sweep.GridCopyName
	resultsMDName       = sweep.ResultsMDName
	curvesName          = "curves.png"
	calibrationPlotName = analysis.CalibrationPlotName
	calTSVName          = analysis.CalibrationTSVName
	calMarkdownName     = analysis.CalibrationMarkdownName
	resultsTSVName      = "results.tsv"
	resultsLock         = "results.lock"
	runLockName         = "lock"
	configName          = "config.toml"
	metricsName         = "metrics.json"
)

var (
	trainRun        = sweep.Train
	trainConfig     = sweep.TrainConfig
	preflightRuns   = sweep.PreflightRuns
	validateRun     = sweep.Validate
	LoadGrid        = grid.LoadGrid
	DefaultRunSpec  = grid.DefaultRunSpec
	runStatus       = sweep.RunState
	fromJSONMap     = jsonfloat.Unmap
	WriteFileAtomic = atomicfile.WriteFile
	isTempFile      = atomicfile.IsTemp
	writeRecord     = sweep.WriteRecord
	readConfig      = sweep.ReadConfig
)

// base is a [defaults] block that satisfies DefaultValidator, so that test
// grids only state what they test.
const base = `[defaults]
dataset = "toy"
model = "cp"
objective = "pll"
rank = 4
batch_size = 10
learning_rate = 0.01
epochs = 2
`

// readRecord reads a run's metrics.json; nil if there is none.
func readRecord(path string) (*runRecord, error) {
	if filepath.Base(path) != metricsName {
		return nil, fmt.Errorf("readRecord(%s): not a %s", path, metricsName)
	}
	return sweep.ReadRecord(filepath.Dir(path))
}

type fileLock struct{ l *filelock.Lock }

func (l *fileLock) unlock() error { return l.l.Unlock() }

// waitLock takes the exclusive lock the sweep takes on path.
func waitLock(path string) (*fileLock, error) {
	l, err := filelock.Wait(path)
	if err != nil {
		return nil, err
	}
	return &fileLock{l}, nil
}

type nopObserver struct{}

func (nopObserver) EpochStart(int, int)  {}
func (nopObserver) Step(int, float64)    {}
func (nopObserver) EpochEnd(EpochRecord) {}
func (nopObserver) Log(string)           {}

// shellQuote quotes s for bash.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
