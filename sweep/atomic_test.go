//go:build unix

package sweep

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"gekc/grid"
	"gekc/report"
	"gekc/resultsdir"
	"gekc/train"
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
		{"writeConfig", func(path string, content []byte) error {
			spec := exampleSpec()
			spec.DistillFrom = string(content)
			return resultsdir.WriteConfig(path, spec)
		}},
		{"WriteRecord", func(path string, content []byte) error {
			return resultsdir.WriteRecord(path, &resultsdir.Record{ID: string(content[:1]), Notes: []string{string(content)}})
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

// The tables the runner rewrites after every run (results.tsv, results.md,
// and paper.md when a reference covers the results) are replaced, never
// rewritten in place: across a sweep of three runs each file's inode
// changes from one run's end to the next. A writer that truncated and
// rewrote the file (os.WriteFile) would keep it.
func TestRunnerReplacesItsTables(t *testing.T) {
	src := `name = "t"
[defaults]
dataset = "nations"
model = "cp2"
objective = "pll"
rank = 1000
batch_size = 10
learning_rate = 0.01
epochs = 1
seeds = 3
`
	g, err := grid.ParseGrid("t.toml", []byte(src), nil)
	must(t, err)
	ref, err := report.ParseReference("ref.tsv", []byte("dataset\tmodel\tobjective\trank\tmrr\nnations\tcp2\tpll\t1000\t0.5\n"))
	must(t, err)
	out := t.TempDir()
	tables := []string{resultsdir.ResultsTSVName, resultsdir.ResultsMDName, resultsdir.PaperMDName}
	inodes := map[string][]uint64{}
	// Each file seen stays open to the end: a file replaced more than once
	// between two looks could otherwise come back under a freed inode
	// number of its own and look rewritten in place.
	var held []*os.File
	defer func() {
		for _, f := range held {
			f.Close()
		}
	}()
	fake := func(_ context.Context, job Job) (*Outcome, error) {
		for _, name := range tables { // as the previous run left them
			if f, err := os.Open(filepath.Join(out, name)); err == nil {
				held = append(held, f)
				st, err := f.Stat()
				must(t, err)
				inodes[name] = append(inodes[name], st.Sys().(*syscall.Stat_t).Ino)
			}
		}
		return &Outcome{Status: train.Finished, Epochs: []train.EpochRecord{{Epoch: 1, TrainLoss: 1}}, BestEpoch: 1,
			Valid: map[string]float64{"mrr": 0.5}, Test: map[string]float64{"mrr": 0.5}}, nil
	}
	s := New(g, g.Runs, Options{Out: out, DataRoot: shippedData(t, "nations"), Run: fake, Quiet: true, Reference: ref})
	must(t, s.Prepare())
	if tally := s.Run(context.Background()); tally.Finished != 3 {
		t.Fatalf("%+v", tally)
	}
	for _, name := range tables {
		st, err := os.Stat(filepath.Join(out, name))
		must(t, err)
		seen := append(inodes[name], st.Sys().(*syscall.Stat_t).Ino)
		if len(seen) < 3 {
			t.Fatalf("%s: seen after %d runs only", name, len(seen))
		}
		for i := 1; i < len(seen); i++ {
			if seen[i] == seen[i-1] {
				t.Errorf("%s was rewritten in place between runs %d and %d (inode %d)", name, i, i+1, seen[i])
			}
		}
	}
}
