package sweep

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"gekc/grid"
	"gekc/resultsdir"
	"gekc/train"
	"gekc/train/ckpt"
)

// resolveDistill finds the checkpoint named by distill_from: the ID of a
// run in this results directory, the path of a run directory, or the path
// of an .npz file (embeddings trained elsewhere, saved by numpy.savez with
// one array per parameter table). A source run that this process is
// training is waited for.
func (s *Sweep) resolveDistill(ctx context.Context, r grid.Run) (string, error) {
	from := r.Spec.DistillFrom
	if from == "" {
		return "", nil
	}
	if ch, ok := s.done[from]; ok {
		select {
		case <-ch:
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	if strings.HasSuffix(from, ".npz") {
		if st, err := os.Stat(from); err != nil || !st.Mode().IsRegular() {
			return "", fmt.Errorf("distill_from %q: not a readable .npz file", from)
		}
		return filepath.Abs(from)
	}
	dir := from
	if !strings.ContainsRune(from, filepath.Separator) {
		if st, err := os.Stat(s.runDir(from)); err == nil && st.IsDir() {
			dir = s.runDir(from)
		}
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return "", fmt.Errorf("distill_from %q: neither a run in %s nor a run directory", from, filepath.Join(s.out, resultsdir.RunsDirName))
	}
	rec, err := resultsdir.ReadRecord(dir)
	if err != nil {
		return "", fmt.Errorf("distill_from %q: %w", from, err)
	}
	if rec == nil || rec.Status != train.Finished {
		status := "not finished"
		if rec != nil {
			status = string(rec.Status)
		}
		return "", fmt.Errorf("distill_from %q: that run is %s; it needs a finished run's checkpoint", from, status)
	}
	path, err := filepath.Abs(filepath.Join(dir, ckpt.CheckpointName))
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("distill_from %q: %w", from, err)
	}
	return path, nil
}

// orderForDistill moves runs that distil from another selected run after
// it, keeping grid order otherwise, so that with -j 1 a source is always
// trained first and with -j > 1 the wait in resolveDistill is short.
func orderForDistill(runs []grid.Run) []grid.Run {
	index := map[string]int{}
	for i, r := range runs {
		index[r.ID] = i
	}
	depth := make([]int, len(runs))
	for i := range runs {
		d, j := 0, i
		for d <= len(runs) {
			src, ok := index[runs[j].Spec.DistillFrom]
			if !ok {
				break
			}
			d, j = d+1, src
		}
		depth[i] = d
	}
	out := make([]grid.Run, 0, len(runs))
	for d := 0; len(out) < len(runs); d++ {
		for i, r := range runs {
			if depth[i] == d {
				out = append(out, r)
			}
		}
	}
	return out
}
