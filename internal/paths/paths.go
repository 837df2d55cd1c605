// Package paths finds what the command reads and writes in the gekc
// repository it runs in, from any directory inside it: the repository's
// root (the directory of go.mod), its data/, results/ and grids/.
package paths

import (
	"cmp"
	"os"
	"path/filepath"
)

// In returns path, taken relative to dir unless it is absolute.
func In(dir, path string) string {
	if filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(dir, path)
}

// Results is <repository>/results, or <wd>/results outside a repository
// (repo "").
func Results(repo, wd string) string { return filepath.Join(cmp.Or(repo, wd), "results") }

// Root walks up from dir to the directory holding go.mod, so that `data/`
// and `results/` mean the repository's wherever the command runs from; ""
// if there is none.
func Root(dir string) string {
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

// Grid returns the grid file -grid names: name itself when it is a file
// (relative to wd), else grids/name or grids/name.toml of the repository,
// so that `-grid umls` and `-grid biokg.toml` work from anywhere in it.
// When none exists, name is returned for grid.LoadGrid to report.
func Grid(name, wd, repo string) string {
	if st, err := os.Stat(In(wd, name)); err == nil && !st.IsDir() {
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

// DataRoot applies the precedence -data (flagValue), then $GEKC_DATA
// (env), then <repository>/data, then ./data.
func DataRoot(flagValue, env, repoRoot string) string {
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

// Same says whether a and b name one existing file.
func Same(a, b string) bool {
	sa, err := os.Stat(a)
	if err != nil {
		return false
	}
	sb, err := os.Stat(b)
	return err == nil && os.SameFile(sa, sb)
}
