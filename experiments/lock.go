package main

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// fileLock is an exclusive flock(2) on a file. The kernel releases it when
// the process dies, even by SIGKILL, so a crashed sweep never leaves a run
// claimed. flock locks belong to the open file description, so two
// goroutines of one process (-j) exclude each other like two processes do.
//
// Lock files are never deleted: deleting one while another process has it
// open would let a third process lock a new file of the same name, and two
// processes would both think they hold the lock.
type fileLock struct{ f *os.File }

// errLocked is returned by tryLock when another holder has the lock.
var errLocked = errors.New("locked by another process")

// tryLock takes the lock without waiting, or returns errLocked.
func tryLock(path string) (*fileLock, error) {
	return lockFile(path, syscall.LOCK_EX|syscall.LOCK_NB)
}

// waitLock takes the lock, waiting for the holder to release it. It is used
// only for short critical sections (updating results.tsv).
func waitLock(path string) (*fileLock, error) {
	return lockFile(path, syscall.LOCK_EX)
}

func lockFile(path string, how int) (*fileLock, error) {
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
			return nil, errLocked
		}
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	return &fileLock{f: f}, nil
}

// isLocked reports whether someone holds the lock at path, without creating
// it (for -dry-run, which writes nothing).
func isLocked(path string) bool {
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

// unlock releases the lock; closing the file is what releases it.
func (l *fileLock) unlock() error { return l.f.Close() }
