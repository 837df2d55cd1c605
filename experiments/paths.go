package main

import (
	"cmp"
	"os"
	"path/filepath"
)

// workDir is the directory relative paths are taken from: dir, or the
// process's working directory when dir is "".
func workDir(dir string) (string, error) {
	if dir != "" {
		return dir, nil
	}
	return os.Getwd()
}

// inDir returns path, taken relative to dir unless it is absolute.
func inDir(dir, path string) string {
	if filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(dir, path)
}

// resultsDir is <repository>/results, or <wd>/results outside a repository.
func resultsDir(repo, wd string) string { return filepath.Join(cmp.Or(repo, wd), "results") }

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

// resolveGridPath returns the grid file -grid names: name itself when it
// is a file (relative to wd), else grids/name or grids/name.toml of the
// repository, so that `-grid umls` and `-grid biokg.toml` work from
// anywhere in it. When none exists, name is returned for LoadGrid to report.
func resolveGridPath(name, wd, repo string) string {
	if st, err := os.Stat(inDir(wd, name)); err == nil && !st.IsDir() {
		return name
	}
	if repo == "" || filepath.IsAbs(name) {
		return name
	}
	for _, c := range []string{name, name + ".toml"} {
		p := filepath.Join(repo, "grids", c)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p
		}
	}
	return name
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
