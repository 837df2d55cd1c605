package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestEmitSlurm(t *testing.T) {
	tests := []struct {
		name      string
		extra     []string
		wantArray string
		wantArgs  string
	}{
		{"every run", nil, "0-11", ""},
		{"a selection", []string{"-only", "0-2,5,9-11"}, "0-2,5,9-11", ""},
		{"with -samples", []string{"-samples", "100"}, "0-11", "-samples=100"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fx := newSweepFixture(t, toyGrid)
			fake := newFake()
			code, stdout, stderr := runInProcess(t, context.Background(), fake, fx.args(append([]string{"-emit", "slurm"}, tt.extra...)...)...)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if fake.totalCalls() != 0 {
				t.Error("-emit trained runs")
			}
			path := filepath.Join(fx.out, "sbatch.sh")
			if !strings.Contains(stdout, path) {
				t.Errorf("stdout does not name the script: %s", stdout)
			}
			st, err := os.Stat(path)
			must(t, err)
			if st.Mode().Perm()&0o100 == 0 {
				t.Error("sbatch.sh is not executable")
			}
			data, err := os.ReadFile(path)
			must(t, err)
			script := string(data)
			if err := containsAll(script,
				"#!/usr/bin/env bash",
				"#SBATCH --job-name=gekc-toy",
				"#SBATCH --array="+tt.wantArray,
				"#SBATCH --cpus-per-task=",
				"#SBATCH --mem=",
				"#SBATCH --time=",
				"#SBATCH --output="+fx.out+"/slurm/%A_%a.out",
				"ARRAY="+tt.wantArray,
				"CPUS_PER_TASK=", "MEM=", "TIME=",
				"OUT="+fx.out,
				"GRID="+filepath.Join(fx.out, gridCopyName),
				"go build -o \"$BIN\" ./experiments",
				`-only "$SLURM_ARRAY_TASK_ID"`,
			); err != nil {
				t.Errorf("%v\n%s", err, script)
			}
			if tt.wantArgs != "" && !strings.Contains(script, tt.wantArgs) {
				t.Errorf("script lacks %s", tt.wantArgs)
			}
			if !fileExists(filepath.Join(fx.out, gridCopyName)) || !fileExists(filepath.Join(fx.out, "slurm")) {
				t.Error("the grid copy or the log directory is missing")
			}
			if bash, err := exec.LookPath("bash"); err == nil {
				if out, err := exec.Command(bash, "-n", path).CombinedOutput(); err != nil {
					t.Errorf("bash -n: %v\n%s", err, out)
				}
			}
		})
	}
}

// The script does what it says: on the login node it builds and submits;
// in an array task it runs the binary on run SLURM_ARRAY_TASK_ID. go and
// sbatch are replaced by stubs that record their arguments.
func TestSlurmScriptRuns(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	fx := newSweepFixture(t, toyGrid)
	if code, _, stderr := runInProcess(t, context.Background(), newFake(), fx.args("-emit", "slurm", "-samples", "3")...); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	script := filepath.Join(fx.out, "sbatch.sh")
	data, err := os.ReadFile(script)
	must(t, err)
	// Point BIN at a stub binary.
	stubs := filepath.Join(fx.dir, "stubs")
	must(t, os.MkdirAll(stubs, 0o755))
	bin := filepath.Join(stubs, "gekc-experiments")
	record := filepath.Join(fx.dir, "record")
	stub := "#!/usr/bin/env bash\necho \"$(basename \"$0\") $*\" >> " + shellQuote(record) + "\n"
	for _, name := range []string{"gekc-experiments", "go", "sbatch"} {
		must(t, os.WriteFile(filepath.Join(stubs, name), []byte(stub), 0o755))
	}
	edited := regexp.MustCompile(`(?m)^BIN=.*$`).ReplaceAllString(string(data), "BIN="+shellQuote(bin))
	must(t, os.WriteFile(script, []byte(edited), 0o755))
	env := append(os.Environ(), "PATH="+stubs+":"+os.Getenv("PATH"))

	// Login node.
	cmd := exec.Command(bash, script)
	cmd.Env = append(env, "SLURM_ARRAY_TASK_ID=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("submitting: %v\n%s", err, out)
	}
	// Array task 7.
	cmd = exec.Command(bash, script)
	cmd.Env = append(env, "SLURM_ARRAY_TASK_ID=7", "SLURM_CPUS_PER_TASK=3")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("array task: %v\n%s", err, out)
	}
	got, err := os.ReadFile(record)
	must(t, err)
	lines := strings.Split(strings.TrimSpace(string(got)), "\n")
	if len(lines) != 3 {
		t.Fatalf("recorded calls:\n%s", got)
	}
	if !strings.HasPrefix(lines[0], "go build -o "+bin+" ./experiments") {
		t.Errorf("build: %s", lines[0])
	}
	if err := containsAll(lines[1], "sbatch ", "--array=0-11", "--job-name=gekc-toy", "--cpus-per-task=4", "--output="+fx.out+"/slurm/%A_%a.out", script); err != nil {
		t.Errorf("submit %q: %v", lines[1], err)
	}
	want := "gekc-experiments -grid " + filepath.Join(fx.out, gridCopyName) + " -out " + fx.out + " -data " + fx.data + " -only 7 -samples=3"
	if lines[2] != want {
		t.Errorf("task ran\n %q\nwant\n %q", lines[2], want)
	}
}

func TestShellQuote(t *testing.T) {
	tests := map[string]string{
		"plain/path-1.toml": "plain/path-1.toml",
		"":                  "''",
		"with space":        "'with space'",
		"it's":              `'it'\''s'`,
		"$HOME":             "'$HOME'",
	}
	for in, want := range tests {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}
