package synth

import (
	"fmt"
	"os"
	"path/filepath"
)

// CheckTarget says whether a data set may be written into dir: it may when
// dir does not exist or is empty, and, with force, over a data set that is
// there. A results directory (results.tsv, a runs/ directory) is never a
// target: a data set written into it would sit among run records.
func CheckTarget(dir string, force bool) error {
	entries, err := os.ReadDir(dir)
	switch {
	case os.IsNotExist(err):
		return nil
	case err != nil:
		return err
	case len(entries) == 0:
		return nil
	}
	for _, marker := range []string{"results.tsv", "runs"} {
		if _, err := os.Stat(filepath.Join(dir, marker)); err == nil {
			return fmt.Errorf("%s is a results directory (it has %s): write the data set into a data root instead, e.g. -to data/NAME", dir, marker)
		}
	}
	if force {
		return nil
	}
	return fmt.Errorf("%s already holds %d files (%s, ...): nothing was written; -force replaces what a data set of the same name would overwrite, or choose another -to", dir, len(entries), entries[0].Name())
}
