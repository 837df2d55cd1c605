package sweep

import (
	"os"

	"gekc/internal/atomicfile"
)

// writeFileAtomic replaces path with data so that readers, and a process
// restarted after a crash, see either the old file or the new one, never a
// part (see package atomicfile).
func writeFileAtomic(path string, data []byte, perm os.FileMode) error {
	return atomicfile.WriteFile(path, data, perm)
}

// isTempFile reports whether name is a writeFileAtomic temporary.
func isTempFile(name string) bool { return atomicfile.IsTemp(name) }
