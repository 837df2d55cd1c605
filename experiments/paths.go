package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// findRepoRoot walks up from dir to the directory holding go.mod, so that
// `data/` and `results/` mean the repository's wherever the command runs
// from; "" if there is none.
func findRepoRoot(dir string) string {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	for {
		if st, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil && !st.IsDir() {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// resolveDataRoot applies the precedence -data, then $GEKC_DATA, then
// <repository>/data, then ./data.
func resolveDataRoot(flagValue, env, repoRoot string) string {
	switch {
	case flagValue != "":
		return flagValue
	case env != "":
		return env
	case repoRoot != "":
		return filepath.Join(repoRoot, "data")
	}
	return "data"
}

// checkDatasets makes sure every dataset the runs need is a directory under
// root, and says how to point elsewhere when one is not.
func checkDatasets(root string, runs []Run) error {
	seen := map[string]bool{}
	var missing []string
	for _, r := range runs {
		ds := r.Spec.Dataset
		if seen[ds] {
			continue
		}
		seen[ds] = true
		dir := filepath.Join(root, ds)
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			missing = append(missing, dir)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	sort.Strings(missing)
	abs, _ := filepath.Abs(root)
	return fmt.Errorf("dataset directory not found: %s (data root %s); point -data or the GEKC_DATA environment variable at the directory that holds the dataset directories",
		strings.Join(missing, ", "), abs)
}
