package resultsdir

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"gekc/internal/atomicfile"
)

// SaveGridCopy writes src, a grid's source, as out/grid.toml, the grid
// that produced the sweep; the caller holds the results lock. A different
// grid already there is kept as grid.<time>.toml, said on log: its runs
// are still in runs/, and it is the only record of what produced them.
func SaveGridCopy(out string, src []byte, log io.Writer) error {
	dst := filepath.Join(out, GridCopyName)
	old, err := os.ReadFile(dst)
	switch {
	case err == nil && bytes.Equal(old, src):
		return nil
	case err == nil:
		keep := filepath.Join(out, fmt.Sprintf("grid.%s.toml", time.Now().UTC().Format("20060102T150405Z")))
		if err := os.Rename(dst, keep); err != nil {
			return fmt.Errorf("keeping the previous grid: %w", err)
		}
		fmt.Fprintf(log, "note: %s held a different grid; kept as %s\n", dst, keep)
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	return atomicfile.WriteFile(dst, src, 0o644)
}
