package sweep

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"gekc/grid"
	"gekc/internal/atomicfile"
	"gekc/internal/filelock"
	"gekc/tfevents"
	"gekc/train"
	"gekc/train/ckpt"

	"github.com/BurntSushi/toml"
)

// cleanRunDir empties a run directory except its lock file, which must
// never be deleted (see package filelock), its resume state
// (ckpt.StateName), which is what an unfinished run continues from, and
// its TensorBoard event file, whose epochs up to the state's the resumed
// run keeps (Train cuts the rest).
func cleanRunDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.Name() == runLockName || e.Name() == ckpt.StateName || strings.HasPrefix(e.Name(), tfevents.FilePrefix) || isRungRecord(e.Name()) {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

// writeConfig writes the fully resolved spec as TOML, readable by
// readConfig and by people.
func writeConfig(path string, spec grid.RunSpec) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Fully resolved run %s, written by gekc experiments.\n", spec.ID())
	if err := toml.NewEncoder(&b).Encode(spec); err != nil {
		return fmt.Errorf("encoding %s: %w", path, err)
	}
	return atomicfile.WriteFile(path, b.Bytes(), 0o644)
}

// ReadConfig reads a run's config.toml back; keys it lacks take their
// defaults.
func ReadConfig(path string) (grid.RunSpec, error) {
	spec := grid.DefaultRunSpec()
	md, err := toml.DecodeFile(path, &spec)
	if err != nil {
		return spec, fmt.Errorf("reading %s: %w", path, err)
	}
	if u := md.Undecoded(); len(u) > 0 {
		return spec, fmt.Errorf("reading %s: unknown key %q", path, u[0].String())
	}
	return spec, nil
}

// FinishedRuns lists the runs of out that have a final metrics.json, for
// -resume=false.
func FinishedRuns(out string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(out, runsDirName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, e := range entries {
		rec, err := readRecord(filepath.Join(out, runsDirName, e.Name(), metricsName))
		if err == nil && rec != nil && final(rec.Status) {
			ids = append(ids, e.Name())
		}
	}
	return ids, nil
}

// RunState describes run r's state in out for -dry-run, without writing.
// A run that is training, or waits to resume, also says where its resume
// state stands: a sweep left running for days is read from here.
func RunState(out string, r grid.Run) string {
	dir := filepath.Join(out, runsDirName, r.ID)
	// withState adds where the run's resume state stands, if it has one;
	// only unfinished runs read it.
	withState := func(status, verb string) string {
		info, err := ckpt.ReadStateInfo(filepath.Join(dir, ckpt.StateName))
		if err != nil {
			return status
		}
		return status + ", " + verb + " " + stateSummary(info, r.Spec.Eval.Select)
	}
	if filelock.IsLocked(filepath.Join(dir, runLockName)) {
		return withState("running", "saved")
	}
	rec, err := readRecord(filepath.Join(dir, metricsName))
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
