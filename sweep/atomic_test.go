//go:build unix

package sweep

import (
	"bytes"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"gekc/internal/atomicfile"
)

// The runner's own writes (metrics.json, config.toml, results.tsv and the
// tables go through atomicfile.WriteFile) replace a file by renaming a new one
// over it: the inode changes, and a reader polling the file while it is
// rewritten sees the old content or the new, never a mix or a part. An
// in-place rewrite (os.WriteFile) keeps the inode and fails here.
func TestRunnerWritesAreAtomic(t *testing.T) {
	dir := t.TempDir()
	inode := func(path string) uint64 {
		st, err := os.Stat(path)
		must(t, err)
		return st.Sys().(*syscall.Stat_t).Ino
	}
	for _, write := range []struct {
		name string
		fn   func(path string, content []byte) error
	}{
		{"writeFileAtomic", func(path string, content []byte) error { return atomicfile.WriteFile(path, content, 0o644) }},
		{"WriteRecord", func(path string, content []byte) error {
			return WriteRecord(path, &Record{ID: string(content[:1]), Notes: []string{string(content)}})
		}},
	} {
		path := filepath.Join(dir, write.name)
		// The exact bytes of each version, as the writer lays them out.
		versions := [2][]byte{}
		for i, c := range []byte("ab") {
			must(t, write.fn(path, bytes.Repeat([]byte{c}, 1<<20)))
			b, err := os.ReadFile(path)
			must(t, err)
			versions[i] = b
		}
		var wg sync.WaitGroup
		done := make(chan struct{})
		var torn int
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				got, err := os.ReadFile(path)
				if err != nil || !(bytes.Equal(got, versions[0]) || bytes.Equal(got, versions[1])) {
					torn++
				}
			}
		}()
		inPlace := 0
		for range 20 {
			for _, c := range []byte("ab") {
				// A freed inode number may come back two writes later: compare
				// each write with the file it replaced.
				ino := inode(path)
				must(t, write.fn(path, bytes.Repeat([]byte{c}, 1<<20)))
				if inode(path) == ino {
					inPlace++
				}
			}
		}
		close(done)
		wg.Wait()
		if torn > 0 {
			t.Errorf("%s: a concurrent reader saw %d partial or mixed files", write.name, torn)
		}
		if inPlace > 0 {
			t.Errorf("%s rewrote %s in place (same inode) %d times of 40", write.name, path, inPlace)
		}
	}
}
