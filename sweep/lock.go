package sweep

import "gekc/internal/filelock"

// fileLock is an exclusive flock(2) on a file, released by the kernel when
// the process dies (see package filelock). Lock files are never deleted.
type fileLock struct{ l *filelock.Lock }

// errLocked is returned by tryLock when another holder has the lock.
var errLocked = filelock.ErrLocked

// tryLock takes the lock without waiting, or returns errLocked.
func tryLock(path string) (*fileLock, error) { return wrapLock(filelock.TryLock(path)) }

// waitLock takes the lock, waiting for the holder to release it. It is used
// only for short critical sections (updating results.tsv).
func waitLock(path string) (*fileLock, error) { return wrapLock(filelock.Wait(path)) }

func wrapLock(l *filelock.Lock, err error) (*fileLock, error) {
	if err != nil {
		return nil, err
	}
	return &fileLock{l: l}, nil
}

// isLocked reports whether someone holds the lock at path, without creating
// it (for -dry-run, which writes nothing).
func isLocked(path string) bool { return filelock.IsLocked(path) }

// unlock releases the lock.
func (l *fileLock) unlock() error { return l.l.Unlock() }
