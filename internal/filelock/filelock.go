// Package filelock takes exclusive flock(2) locks on files. The kernel
// releases a lock when the process dies, even by SIGKILL, so a crashed
// process never leaves work claimed. flock locks belong to the open file
// description, so two goroutines of one process exclude each other like two
// processes do.
//
// Lock files are never deleted: deleting one while another process has it
// open would let a third process lock a new file of the same name, and two
// processes would both think they hold the lock.
package filelock

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// A Lock is a held lock on a file.
type Lock struct{ f *os.File }

// ErrLocked is returned by TryLock when another holder has the lock.
var ErrLocked = errors.New("locked by another process")

// TryLock takes the lock on path, creating the file if need be, without
// waiting, or returns ErrLocked.
func TryLock(path string) (*Lock, error) {
	return lockFile(path, syscall.LOCK_EX|syscall.LOCK_NB)
}

// Wait takes the lock on path, waiting for the holder to release it; it is
// meant for short critical sections.
func Wait(path string) (*Lock, error) {
	return lockFile(path, syscall.LOCK_EX)
}

func lockFile(path string, how int) (*Lock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening lock %s: %w", path, err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, ErrLocked
		}
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	return &Lock{f: f}, nil
}

// IsLocked reports whether someone holds the lock at path, without creating
// the file (for callers that must write nothing).
func IsLocked(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		return errors.Is(err, syscall.EWOULDBLOCK)
	}
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return false
}

// Unlock releases the lock; closing the file is what releases it.
func (l *Lock) Unlock() error { return l.f.Close() }
