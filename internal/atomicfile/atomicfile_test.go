package atomicfile

import (
	"bytes"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.json")
	tests := []struct {
		name string
		data string
		perm os.FileMode
	}{
		{"creates", "first", 0o644},
		{"replaces", "second, longer than the first", 0o600},
		{"replaces with shorter", "3", 0o755},
		{"empty", "", 0o644},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			must(t, WriteFile(path, []byte(tt.data), tt.perm))
			got, err := os.ReadFile(path)
			must(t, err)
			if string(got) != tt.data {
				t.Errorf("content %q, want %q", got, tt.data)
			}
			st, err := os.Stat(path)
			must(t, err)
			if st.Mode().Perm() != tt.perm {
				t.Errorf("mode %v, want %v", st.Mode().Perm(), tt.perm)
			}
			assertNoTempFiles(t, dir)
		})
	}
}

func TestWriteFileFailureLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	// Renaming a file over a directory fails after the temporary is written.
	target := filepath.Join(dir, "target")
	must(t, os.MkdirAll(filepath.Join(target, "child"), 0o755))
	if err := WriteFile(target, []byte("x"), 0o644); err == nil {
		t.Fatal("no error writing over a non-empty directory")
	}
	assertNoTempFiles(t, dir)
	if err := WriteFile(filepath.Join(dir, "missing", "f"), []byte("x"), 0o644); err == nil {
		t.Fatal("no error writing into a missing directory")
	}
}

// Readers racing a writer see one complete version or the other, never a
// mixture or a truncated file.
func TestWriteFileReadersSeeWholeFiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.tsv")
	versions := [][]byte{bytes.Repeat([]byte("a"), 1<<20), bytes.Repeat([]byte("b"), 1<<19)}
	must(t, WriteFile(path, versions[0], 0o644))
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Go(func() {
		for i := 0; i < 50; i++ {
			if err := WriteFile(path, versions[i%2], 0o644); err != nil {
				t.Error(err)
				break
			}
		}
		close(stop)
	})
	for range 3 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				got, err := os.ReadFile(path)
				if err != nil {
					t.Error(err)
					return
				}
				if !bytes.Equal(got, versions[0]) && !bytes.Equal(got, versions[1]) {
					t.Errorf("read a partial file of %d bytes", len(got))
					return
				}
			}
		})
	}
	wg.Wait()
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func assertNoTempFiles(t *testing.T, root string) {
	t.Helper()
	filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err == nil && IsTemp(d.Name()) {
			t.Errorf("temporary file left behind: %s", path)
		}
		return nil
	})
}
