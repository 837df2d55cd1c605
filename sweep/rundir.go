package sweep

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"gekc/grid"
	"gekc/internal/atomicfile"
	"gekc/internal/filelock"
	"gekc/train"
	"gekc/train/ckpt"

	"github.com/BurntSushi/toml"
)

// cleanRunDir empties a run directory except its lock file, which must
// never be deleted (see package filelock), and its resume state (ckpt.StateName), which
// is what an unfinished run continues from.
func cleanRunDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.Name() == runLockName || e.Name() == ckpt.StateName {
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

// RunState describes a run's state on disk for -dry-run, without writing.
func RunState(out, id string) string {
	dir := filepath.Join(out, runsDirName, id)
	if filelock.IsLocked(filepath.Join(dir, runLockName)) {
		return "running"
	}
	rec, err := readRecord(filepath.Join(dir, metricsName))
	switch {
	case err != nil:
		return "unreadable metrics.json"
	case rec == nil:
		if info, err := ckpt.ReadStateInfo(filepath.Join(dir, ckpt.StateName)); err == nil {
			return "pending, resumes " + info.ResumePoint()
		}
		return "pending"
	case rec.Status == train.Failed:
		return "failed (will retry)"
	}
	return string(rec.Status)
}
