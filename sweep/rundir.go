package sweep

import (
	"os"
	"path/filepath"
	"strings"

	"gekc/resultsdir"
	"gekc/tfevents"
	"gekc/train/ckpt"
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
		if e.Name() == resultsdir.RunLockName || e.Name() == ckpt.StateName || strings.HasPrefix(e.Name(), tfevents.FilePrefix) || resultsdir.IsRungRecord(e.Name()) {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return nil
}
