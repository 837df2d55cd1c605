package synth

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckTarget(t *testing.T) {
	root := t.TempDir()
	mk := func(name string, files ...string) string {
		dir := filepath.Join(root, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "/") {
				if err := os.Mkdir(filepath.Join(dir, f), 0o755); err != nil {
					t.Fatal(err)
				}
				continue
			}
			if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	for _, c := range []struct {
		name  string
		dir   string
		force bool
		want  string // "" for allowed
	}{
		{"absent", filepath.Join(root, "new"), false, ""},
		{"empty", mk("empty"), false, ""},
		{"a data set", mk("umls", "train.txt", "SOURCE.md"), false, "already holds 2 files"},
		{"a data set, forced", mk("umls2", "train.txt"), true, ""},
		{"a results directory", mk("results", "results.tsv", "results.md"), true, "is a results directory"},
		{"run records", mk("res2", "runs/"), true, "is a results directory"},
	} {
		err := CheckTarget(c.dir, c.force)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}
