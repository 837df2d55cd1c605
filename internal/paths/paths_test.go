package paths

import (
	"os"
	"path/filepath"
	"testing"
)

// The repository is found from a subdirectory; the data root is -data,
// then $GEKC_DATA, then the repository's data/, then ./data (the command's
// side is experiments' TestDataAndOutDefaults).
func TestRootAndDataRoot(t *testing.T) {
	repo := t.TempDir()
	if err := os.WriteFile(filepath.Join(repo, "go.mod"), []byte("module x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(repo, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if got := Root(sub); got != repo {
		t.Errorf("Root = %q, want %q", got, repo)
	}
	tests := []struct {
		flag, env, repo, want string
	}{
		{"/d", "/e", "/r", "/d"},
		{"", "/e", "/r", "/e"},
		{"", "", "/r", "/r/data"},
		{"", "", "", "data"},
	}
	for _, tt := range tests {
		if got := DataRoot(tt.flag, tt.env, tt.repo); got != tt.want {
			t.Errorf("DataRoot(%q, %q, %q) = %q, want %q", tt.flag, tt.env, tt.repo, got, tt.want)
		}
	}
}
