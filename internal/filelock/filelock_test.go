package filelock

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestTryLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	if IsLocked(path) {
		t.Fatal("a lock file that does not exist is locked")
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("IsLocked created the file: %v", err)
	}
	l, err := TryLock(path)
	if err != nil {
		t.Fatal(err)
	}
	// Another open file description of the same file is another holder.
	if _, err := TryLock(path); !errors.Is(err, ErrLocked) {
		t.Errorf("second TryLock: %v, want ErrLocked", err)
	}
	if !IsLocked(path) {
		t.Error("held lock not seen as locked")
	}
	if err := l.Unlock(); err != nil {
		t.Fatal(err)
	}
	if IsLocked(path) {
		t.Error("released lock seen as locked")
	}
	l, err = Wait(path)
	if err != nil {
		t.Fatalf("Wait on a free lock: %v", err)
	}
	l.Unlock()
	if _, err := TryLock(filepath.Join(t.TempDir(), "missing", "x.lock")); err == nil || errors.Is(err, ErrLocked) {
		t.Errorf("lock in a missing directory: %v, want an error opening it", err)
	}
}
