package main

import (
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The module's layering, from the imports of its non-test files: internal/
// holds leaf helpers that import no gekc package outside internal/; only
// the command imports the runner (sweep), which depends, even through
// others, on none of the analyses, query or t-SNE; the results directory's
// package imports no more of the training stack than opening a run needs;
// scripts/ holds no Go program but the test-output tool.
func TestLayers(t *testing.T) {
	imports := moduleImports(t, "..")
	for pkg, deps := range imports {
		for _, dep := range deps {
			if strings.HasPrefix(pkg, "internal/") && strings.HasPrefix(dep, "gekc/") && !strings.HasPrefix(dep, "gekc/internal/") {
				t.Errorf("%s imports %s: internal/ holds leaf helpers only (put test support beside its subject)", pkg, dep)
			}
		}
	}
	for pkg, deps := range imports {
		for _, dep := range deps {
			if dep == "gekc/sweep" && pkg != "." && pkg != "experiments" && !strings.HasPrefix(pkg, "sweep") {
				t.Errorf("%s imports the runner (gekc/sweep): only the command may", pkg)
			}
		}
		if strings.HasPrefix(pkg, "scripts/") && pkg != "scripts/testprogress" {
			t.Errorf("%s is a Go program under scripts/: a computation belongs in a package, reached through a verb (diag)", pkg)
		}
	}
	for _, dep := range dependencies(imports, "sweep") {
		if dep == "gekc/query" || dep == "gekc/tsne" || dep == "gekc/analysis" {
			t.Errorf("sweep depends on %s: the runner trains; the analyses and questions of its runs are others'", dep)
		}
	}
	// Opening a run needs its record, spec, data set and model with its
	// checkpoint (and report for the tables, dist for a record's processes).
	opens := map[string]bool{"gekc/dist": true, "gekc/grid": true, "gekc/kg": true, "gekc/metrics": true,
		"gekc/models": true, "gekc/report": true, "gekc/train": true, "gekc/train/ckpt": true}
	for _, dep := range imports["resultsdir"] {
		if strings.HasPrefix(dep, "gekc/") && !strings.HasPrefix(dep, "gekc/internal/") && !opens[dep] {
			t.Errorf("resultsdir imports %s: it holds the results directory's layout, and opens runs with no more than %v", dep, slices.Sorted(maps.Keys(opens)))
		}
	}
	if len(imports["internal/atomicfile"]) == 0 {
		t.Errorf("no imports read for internal/atomicfile: %v", imports)
	}
}

// designLayers is DESIGN.md's drawing of the packages, top to bottom;
// internal/ is below all of them. Test support (sweep/sweeptest,
// metrics/brute, ...) sits beside its subject and is not listed.
var designLayers = []string{"experiments", "sweep", "analysis", "tsne", "nnmfaug", "query", "synth", "scaling", "slurm",
	"runspec", "resultsdir", "report", "train/ckpt", "train", "dist", "dist/mpi", "objectives", "metrics", "models",
	"graph", "graph/openblas", "grid", "kg", "tfevents"}

// Every import between listed packages points down DESIGN.md's drawing,
// and every package of the module is listed, test support or internal.
func TestImportsPointDown(t *testing.T) {
	imports := moduleImports(t, "..")
	rank := func(pkg string) int {
		if strings.HasPrefix(pkg, "internal/") {
			return len(designLayers)
		}
		return slices.Index(designLayers, pkg)
	}
	support := []string{"sweep/sweeptest", "metrics/brute", "report/reporttest", "dist/internal/", "dist/mpi/mpitest", "graph/openblas/optout", "scripts/testprogress"}
	for pkg, deps := range imports {
		if pkg == "." || slices.ContainsFunc(support, func(s string) bool { return strings.HasPrefix(pkg, s) }) {
			continue
		}
		if rank(pkg) < 0 {
			t.Errorf("package %s is not in DESIGN.md's drawing (designLayers)", pkg)
			continue
		}
		for _, dep := range deps {
			d, ok := strings.CutPrefix(dep, "gekc/")
			if ok && rank(d) >= 0 && rank(d) <= rank(pkg) && !strings.HasPrefix(pkg, "internal/") {
				t.Errorf("%s imports %s, which DESIGN.md draws above it or beside it", pkg, dep)
			}
		}
	}
}

// dependencies lists the gekc packages pkg (a directory, as moduleImports
// keys them) imports, directly or through others.
func dependencies(imports map[string][]string, pkg string) []string {
	seen := map[string]bool{}
	var walk func(dir string)
	walk = func(dir string) {
		for _, dep := range imports[dir] {
			if strings.HasPrefix(dep, "gekc/") && !seen[dep] {
				seen[dep] = true
				walk(strings.TrimPrefix(dep, "gekc/"))
			}
		}
	}
	walk(pkg)
	return slices.Sorted(maps.Keys(seen))
}

// moduleImports maps each directory under root (slash-separated, relative)
// to the import paths of its non-test Go files.
func moduleImports(t *testing.T, root string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "results" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		dir, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			out[filepath.ToSlash(dir)] = append(out[filepath.ToSlash(dir)], p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
