package kg

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeFile writes content to path, gzipped if path ends in ".gz".
func writeFile(t testing.TB, path, content string) {
	t.Helper()
	data := []byte(content)
	if strings.HasSuffix(path, ".gz") {
		var b bytes.Buffer
		z := gzip.NewWriter(&b)
		z.Write(data)
		if err := z.Close(); err != nil {
			t.Fatal(err)
		}
		data = b.Bytes()
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeDataset writes files, a map from name to content, into a new
// temporary directory and returns it.
func writeDataset(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		writeFile(t, filepath.Join(dir, name), content)
	}
	return dir
}

// sharedData returns the directory of a data set in the project's shared
// data, which lives outside the repository, or skips the test.
func sharedData(t testing.TB, name string) string {
	t.Helper()
	for _, root := range []string{os.Getenv("GEKC_SHARED_DATA"), "../../shared/data", "/work/shared/data"} {
		if root == "" {
			continue
		}
		dir := filepath.Join(root, name)
		if info, err := os.Stat(dir); err == nil && info.IsDir() {
			return dir
		}
	}
	t.Skipf("shared data set %s not found (set GEKC_SHARED_DATA to the folder holding it); it lives outside the repository", name)
	return ""
}
