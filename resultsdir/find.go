package resultsdir

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ResolveRun finds a run named by a directory path or by an ID (or unique
// ID prefix) under out/runs.
func ResolveRun(out, ref string) (string, error) {
	if st, err := os.Stat(ref); err == nil && st.IsDir() {
		return ref, nil
	}
	runs := filepath.Join(out, RunsDirName)
	if st, err := os.Stat(filepath.Join(runs, ref)); err == nil && st.IsDir() {
		return filepath.Join(runs, ref), nil
	}
	entries, err := os.ReadDir(runs)
	if err != nil {
		return "", fmt.Errorf("run %q: %w", ref, err)
	}
	var match []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ref) {
			match = append(match, e.Name())
		}
	}
	if len(match) != 1 {
		return "", fmt.Errorf("run %q: %d runs in %s match", ref, len(match), runs)
	}
	return filepath.Join(runs, match[0]), nil
}

// FindRun resolves ref, as a command's user names a run: a directory, a
// file in it (its checkpoint.npz), or an ID (or unique ID prefix) under
// out/runs (ResolveRun); with out "", under the runs/ of every results
// directory in results (the repository's results/), of which exactly one
// must hold it.
func FindRun(ref, out, results string) (string, error) {
	if st, err := os.Stat(ref); err == nil {
		if st.IsDir() {
			return ref, nil
		}
		return filepath.Dir(ref), nil
	}
	if out != "" {
		return ResolveRun(out, ref)
	}
	outs, _ := filepath.Glob(filepath.Join(results, "*"))
	var found []string
	for _, d := range outs {
		if dir, err := ResolveRun(d, ref); err == nil {
			found = append(found, dir)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return "", fmt.Errorf("run %q: no such directory or file, and no run of that ID under %s/*/runs (name the results directory with -out)", ref, results)
	}
	return "", fmt.Errorf("run %q: found in several results directories (%s); name one with -out", ref, strings.Join(found, ", "))
}
