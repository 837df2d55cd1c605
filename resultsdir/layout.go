package resultsdir

import (
	"path/filepath"
	"strconv"
	"strings"

	"gekc/internal/filelock"
	"gekc/report"
	"gekc/train"
)

// The names of a results directory's files. The exported ones are those a
// command names to its user or another package opens.
const (
	GridCopyName    = "grid.toml"    // the grid that produced the sweep
	RunsDirName     = "runs"         // one directory per run, named by its ID
	ResultsTSVName  = "results.tsv"  // one row per run (report.Table)
	ResultsMDName   = "results.md"   // the tables of the sweep
	PaperMDName     = "paper.md"     // the best configurations beside a reference
	ResultsLockName = "results.lock" // held by every writer of the tables
	RunLockName     = "lock"         // in a run's directory, held while it trains
	ConfigName      = "config.toml"  // a run's resolved spec
	MetricsName     = "metrics.json" // a run's Record
	SearchJSONName  = "search.json"  // a search's rungs decided so far (grid [search])
	SearchMDName    = "search.md"    // the same as tables
	rungPrefix      = "rung-"        // runs/<id>/rung-<k>.json: a promoted run's record of rung k/n
)

// RungRecordName is the file in which a run promoted past rung k of a
// search (counted from 1) keeps that rung's record: rung-<k>.json.
func RungRecordName(k int) string { return rungPrefix + strconv.Itoa(k) + ".json" }

// IsRungRecord says whether name is a RungRecordName.
func IsRungRecord(name string) bool {
	return strings.HasPrefix(name, rungPrefix) && strings.HasSuffix(name, ".json")
}

// RunDir is the directory of run id in the results directory out.
func RunDir(out, id string) string { return filepath.Join(out, RunsDirName, id) }

// WithLock runs fn holding the results lock of the results directory out,
// as every writer of its tables does.
func WithLock(out string, fn func() error) error {
	l, err := filelock.Wait(filepath.Join(out, ResultsLockName))
	if err != nil {
		return err
	}
	defer l.Unlock()
	return fn()
}

// Final reports whether a run with this status is done for good: a sweep
// skips it and it has its row in results.tsv.
func Final(s train.Status) bool { return report.Final(string(s)) }
