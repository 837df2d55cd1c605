package resultsdir

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"gekc/grid"
	"gekc/internal/filelock"
	"gekc/train"
	"gekc/train/ckpt"
)

// FinishedRuns lists the runs of out that have a final metrics.json.
func FinishedRuns(out string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(out, RunsDirName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, e := range entries {
		rec, err := ReadRecord(RunDir(out, e.Name()))
		if err == nil && rec != nil && Final(rec.Status) {
			ids = append(ids, e.Name())
		}
	}
	return ids, nil
}

// RunState describes run r's state in out, without writing: pending,
// running, finished, ... A run that is training, or waits to resume, also
// says where its resume state stands: a sweep left running for days is
// read from here.
func RunState(out string, r grid.Run) string {
	dir := RunDir(out, r.ID)
	// withState adds where the run's resume state stands, if it has one;
	// only unfinished runs read it.
	withState := func(status, verb string) string {
		info, err := ckpt.ReadStateInfo(filepath.Join(dir, ckpt.StateName))
		if err != nil {
			return status
		}
		return status + ", " + verb + " " + stateSummary(info, r.Spec.Eval.Select)
	}
	if filelock.IsLocked(filepath.Join(dir, RunLockName)) {
		return withState("running", "saved")
	}
	rec, err := ReadRecord(dir)
	switch {
	case err != nil:
		return "unreadable metrics.json"
	case rec == nil:
		return withState("pending", "resumes")
	case rec.Status == train.Failed:
		return "failed (will retry)"
	}
	return string(rec.Status)
}

// stateSummary says where a resume state stands: "after epoch 10 (best
// valid mrr 0.4686 at epoch 10; 2h5m3s trained)".
func stateSummary(info *ckpt.StateInfo, selectMetric string) string {
	var extra []string
	if info.BestEpoch >= 0 && !math.IsNaN(info.Best) && !math.IsInf(info.Best, 0) {
		extra = append(extra, fmt.Sprintf("best valid %s %.4g at epoch %d", selectMetric, info.Best, info.BestEpoch))
	}
	if info.Wall > 0 {
		extra = append(extra, info.Wall.Round(time.Second).String()+" trained")
	}
	if len(extra) == 0 {
		return info.ResumePoint()
	}
	return info.ResumePoint() + " (" + strings.Join(extra, "; ") + ")"
}
