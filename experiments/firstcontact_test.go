package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gekc/runspec"
	"gekc/sweep"
	"gekc/sweep/sweeptest"
)

// realCLI runs the command in process as main does (the real validator and
// preflight), with run as the run function, from dir.
func realCLI(t *testing.T, dir string, run sweep.RunFunc, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = runCLI(context.Background(), args, cliEnv{stdout: &out, stderr: &errOut, getenv: func(string) string { return "" },
		dir: dir, run: run, validate: runspec.Validate, preflight: runspec.PreflightRuns, quiet: true})
	return code, out.String(), errOut.String()
}

// noTraining is a run function that fails the test: the command must stop
// before it.
func noTraining(t *testing.T) sweep.RunFunc {
	return func(_ context.Context, job sweep.Job) (*sweep.Outcome, error) {
		t.Errorf("run %s was trained; the command should have stopped before", job.ID)
		return &sweep.Outcome{}, nil
	}
}

// TestGridByName checks that -grid NAME finds grids/NAME and
// grids/NAME.toml of the repository from anywhere in it: the design card's
// `go run ./experiments -grid biokg.toml` reaches the check of the data,
// which is not shipped.
func TestGridByName(t *testing.T) {
	for _, name := range []string{"biokg.toml", "biokg"} {
		code, _, stderr := realCLI(t, ".", noTraining(t), "-grid", name, "-out", t.TempDir())
		if code != exitUsage {
			t.Errorf("-grid %s: exit %d, want %d", name, code, exitUsage)
		}
		if err := containsAll(stderr, "dataset directory not found", "ogbl-biokg", "point -data"); err != nil {
			t.Errorf("-grid %s: %v\n%s", name, err, stderr)
		}
	}
	code, _, stderr := realCLI(t, ".", noTraining(t), "-grid", "no-such-grid")
	if code != exitUsage || !strings.Contains(stderr, "no-such-grid") || !strings.Contains(stderr, filepath.Join("grids", "no-such-grid.toml")) {
		t.Errorf("unknown grid: exit %d\n%s", code, stderr)
	}
}

// TestThreeBadKeysThreeErrors is the check: one run of the command
// reports all three misspelt keys.
func TestThreeBadKeysThreeErrors(t *testing.T) {
	fx := newSweepFixture(t, `[defaults]
dataset = "nations"
model = "cp2"
objective = "pll"
rank = 4
batch_size = 100
learning_rat = 0.01
epoch = 2
[[sweep]]
modle = "cp"
`)
	code, _, stderr := realCLI(t, ".", noTraining(t), "-grid", fx.grid, "-data", shippedData(t, "nations"), "-out", fx.out)
	if code != exitUsage {
		t.Fatalf("exit %d, want %d\n%s", code, exitUsage, stderr)
	}
	for _, want := range []string{`:7: [defaults]: unknown key "learning_rat"`, `:8: [defaults]: unknown key "epoch"`, `:10: [[sweep]] block 1: unknown key "modle"`} {
		if !strings.Contains(stderr, want) {
			t.Errorf("missing %q in\n%s", want, stderr)
		}
	}
}

// TestPreflightBeforeTraining: a problem that depends on the data (each
// one is sweep's TestPreflightFindsDataProblems) stops the command before
// any run trains: a usage exit, the grid's file:line on stderr, nothing on
// stdout and no results directory.
func TestPreflightBeforeTraining(t *testing.T) {
	dir := t.TempDir()
	grid := filepath.Join(dir, "grid.toml")
	must(t, os.WriteFile(grid, []byte("[defaults]\ndataset = \"nations\"\nrank = 4\nbatch_size = 100\nlearning_rate = 0.01\nepochs = 2\n"+
		"[[sweep]]\nmodel = \"cp2\"\nobjective = \"pll\"\neval.sem_k = [100]\n"), 0o644))
	code, stdout, stderr := realCLI(t, dir, noTraining(t), "-grid", grid, "-data", shippedData(t, "nations"), "-out", filepath.Join(dir, "out"))
	if code != exitUsage {
		t.Fatalf("exit %d, want %d\n%s", code, exitUsage, stderr)
	}
	if err := containsAll(stderr, "grid.toml:7: [[sweep]] block 1: run cp2-pll-", "100 more than the 14 entities of nations", "nothing was trained"); err != nil {
		t.Errorf("%v\n%s", err, stderr)
	}
	if stdout != "" {
		t.Errorf("stdout: %q", stdout)
	}
	if fileExists(filepath.Join(dir, "out")) {
		t.Error("the results directory was created")
	}
}

// TestSweepEndsWithTable trains two tiny real runs and checks the table
// on stdout, and the note about test entities absent from training, once.
func TestSweepEndsWithTable(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	src := shippedData(t, "nations")
	must(t, os.MkdirAll(filepath.Join(data, "nations"), 0o755))
	for _, f := range []string{"train.txt", "valid.txt"} {
		b, err := os.ReadFile(filepath.Join(src, "nations", f))
		must(t, err)
		must(t, os.WriteFile(filepath.Join(data, "nations", f), b, 0o644))
	}
	test, err := os.ReadFile(filepath.Join(src, "nations", "test.txt"))
	must(t, err)
	test = append(test, "atlantis\tembassy\tusa\n"...)
	must(t, os.WriteFile(filepath.Join(data, "nations", "test.txt"), test, 0o644))

	grid := filepath.Join(dir, "grid.toml")
	must(t, os.WriteFile(grid, []byte(`[defaults]
dataset = "nations"
rank = 4
batch_size = 500
learning_rate = 0.01
epochs = 2
[[sweep]]
model = ["cp2", "complex+"]
objective = "mle"
`), 0o644))
	code, stdout, stderr := realCLI(t, dir, sweep.Train, "-grid", grid, "-data", data, "-out", filepath.Join(dir, "out"))
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if err := containsAll(stdout, " model ", " objective ", " MRR ", " Hits@10 ", " LL ", "| cp2 ", "| complex+ "); err != nil {
		t.Errorf("stdout: %v\n%s", err, stdout)
	}
	note := "nations: 1 valid/test triples mention 1 entities and 0 relations absent from training"
	if n := strings.Count(stderr, note); n != 1 {
		t.Errorf("the note on unseen entities appears %d times, want once:\n%s", n, stderr)
	}
}

// TestVerbosityFlags checks -v and -q on a sweep whose stderr is not a
// terminal: by default no line per epoch (12 runs of 3 epochs would give
// 36), -v a line for each, -q none; a line per run in every case, and the
// table on stdout.
func TestVerbosityFlags(t *testing.T) {
	for _, tt := range []struct {
		flag        string
		epochLines  int
		code        int
		stdoutTable bool
	}{
		{"", 0, exitOK, true},
		{"-v", 36, exitOK, true},
		{"-q", 0, exitOK, true},
	} {
		t.Run("flag "+tt.flag, func(t *testing.T) {
			fx := newSweepFixture(t, sweeptest.ToyGrid)
			args := fx.args()
			if tt.flag != "" {
				args = append(args, tt.flag)
			}
			var out, errOut bytes.Buffer
			code := runCLI(context.Background(), args, cliEnv{stdout: &out, stderr: &errOut, getenv: func(string) string { return "" }, run: newFake().run})
			if code != tt.code {
				t.Fatalf("exit %d\n%s", code, errOut.String())
			}
			if n := strings.Count(errOut.String(), ": loss "); n != tt.epochLines {
				t.Errorf("%d epoch lines, want %d:\n%s", n, tt.epochLines, errOut.String())
			}
			if n := strings.Count(errOut.String(), " finished  valid MRR"); n != 12 {
				t.Errorf("%d run lines, want 12:\n%s", n, errOut.String())
			}
			if !strings.Contains(out.String(), " MRR ") {
				t.Errorf("no table on stdout:\n%s", out.String())
			}
		})
	}
	var errOut bytes.Buffer
	fx := newSweepFixture(t, sweeptest.ToyGrid)
	if code := runCLI(context.Background(), fx.args("-v", "-q"), cliEnv{stdout: &bytes.Buffer{}, stderr: &errOut, getenv: func(string) string { return "" }, run: newFake().run}); code != exitUsage {
		t.Errorf("-v -q: exit %d, want %d", code, exitUsage)
	}
}
