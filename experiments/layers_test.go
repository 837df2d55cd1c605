package main

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The module's layering, from the imports of its non-test files: internal/
// holds leaf helpers that import no gekc package outside internal/; only
// the command imports the runner (sweep); scripts/ holds no Go program but
// the test-output tool.
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
	if len(imports["internal/atomicfile"]) == 0 {
		t.Errorf("no imports read for internal/atomicfile: %v", imports)
	}
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
