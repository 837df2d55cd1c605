package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gekc/grid"
	"gekc/models"
	"gekc/sweep"
	"gekc/train"
	"gekc/train/ckpt"
)

// realCLI runs the command in process as main does (the real validator and
// preflight), with run as the run function, from dir.
func realCLI(t *testing.T, dir string, run sweep.RunFunc, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = runCLI(context.Background(), args, cliEnv{stdout: &out, stderr: &errOut, getenv: func(string) string { return "" },
		dir: dir, run: run, validate: sweep.Validate, preflight: sweep.PreflightRuns, quiet: true})
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

// TestPreflightBeforeTraining checks the problems that depend on the data:
// each stops the command before any run trains, with the grid's file:line.
func TestPreflightBeforeTraining(t *testing.T) {
	data := shippedData(t, "nations")
	bad := filepath.Join(t.TempDir(), "bad.npz")
	must(t, os.WriteFile(bad, []byte("not a zip"), 0o644))
	wrong := filepath.Join(t.TempDir(), "wrong.npz")
	m, err := models.New("complex", models.Sizes{Entities: 3, Relations: 2, Rank: 4}, models.Options{})
	must(t, err)
	must(t, ckpt.Write(wrong, m))
	const head = "[defaults]\ndataset = \"nations\"\nrank = 4\nbatch_size = 100\nlearning_rate = 0.01\nepochs = 2\n[[sweep]]\n"
	tests := []struct {
		name, block string
		want        []string
	}{
		{"sem_k beyond the entities", "model = \"cp2\"\nobjective = \"pll\"\neval.sem_k = [100]\n",
			[]string{"grid.toml:7: [[sweep]] block 1: run cp2-pll-", "eval.sem_k [100]: 100 more than the 14 entities of nations"}},
		{"Sem@k without a schema", "model = \"cp2\"\nobjective = \"pll\"\neval = { metrics = [\"mrr\", \"sem\"], sem_k = [1, 5] }\n",
			[]string{`eval.metrics has "sem", but data set nations has no schema`}},
		{"unfiltered Sem@k without a schema", "model = \"cp2\"\nobjective = \"pll\"\neval = { metrics = [\"mrr\", \"sem_unfiltered\"], sem_k = [1, 5] }\n",
			[]string{`eval.metrics has "sem_unfiltered", but data set nations has no schema`}},
		{"domain constraints without a schema", "model = [\"cp2\", \"complex2\"]\nobjective = \"pll\"\nconstraints = \"domain\"\n",
			[]string{`constraints = "domain", but data set nations has no schema`, "(and 1 more runs of this block)"}},
		{"unreadable distill_from", "model = \"complex2\"\nobjective = \"pll\"\ndistill_from = \"" + bad + "\"\n",
			[]string{"distill_from", "not a readable .npz (zip) file"}},
		{"missing distill_from", "model = \"complex2\"\nobjective = \"pll\"\ndistill_from = \"" + bad + ".missing.npz\"\n",
			[]string{"distill_from", "does not exist"}},
		{"distill_from of another graph", "model = \"complex2\"\nobjective = \"pll\"\ndistill_from = \"" + wrong + "\"\n",
			[]string{"distill_from", "does not fit complex2 with rank 4 on nations", "entry entity has shape [3 8], the model needs [14 8]"}},
		{"distill_from nowhere", "model = \"complex2\"\nobjective = \"pll\"\ndistill_from = \"cp-pll-somewhere\"\n",
			[]string{"distill_from \"cp-pll-somewhere\": neither a run of this grid"}},
	}
	// nations without test triples
	noTest := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(noTest, "nations"), 0o755))
	for _, f := range []string{"train.txt", "valid.txt"} {
		b, err := os.ReadFile(filepath.Join(data, "nations", f))
		must(t, err)
		must(t, os.WriteFile(filepath.Join(noTest, "nations", f), b, 0o644))
	}
	must(t, os.WriteFile(filepath.Join(noTest, "nations", "test.txt"), nil, 0o644))
	tests = append(tests, struct {
		name, block string
		want        []string
	}{"no test triples", "model = \"cp2\"\nobjective = \"pll\"\n", []string{"dataset nations: no test triples"}})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			grid := filepath.Join(dir, "grid.toml")
			must(t, os.WriteFile(grid, []byte(head+tt.block), 0o644))
			root := data
			if tt.name == "no test triples" {
				root = noTest
			}
			code, stdout, stderr := realCLI(t, dir, noTraining(t), "-grid", grid, "-data", root, "-out", filepath.Join(dir, "out"))
			if code != exitUsage {
				t.Fatalf("exit %d, want %d\n%s", code, exitUsage, stderr)
			}
			if err := containsAll(stderr, append(tt.want, "nothing was trained")...); err != nil {
				t.Errorf("%v\n%s", err, stderr)
			}
			if stdout != "" {
				t.Errorf("stdout: %q", stdout)
			}
			if fileExists(filepath.Join(dir, "out")) {
				t.Error("the results directory was created")
			}
		})
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

// TestDemoReference checks that the committed run of the demo grid, kept
// for comparison under results/umls-reference (the demo itself writes
// results/umls, so that it trains on a fresh clone), is that grid's: the
// same grid file and one finished row per run.
func TestDemoReference(t *testing.T) {
	gridFile, err := os.ReadFile(filepath.Join("..", "grids", "umls.toml"))
	must(t, err)
	ref := filepath.Join("..", "results", "umls-reference")
	copied, err := os.ReadFile(filepath.Join(ref, sweep.GridCopyName))
	must(t, err)
	if !bytes.Equal(gridFile, copied) {
		t.Errorf("%s differs from grids/umls.toml", filepath.Join(ref, sweep.GridCopyName))
	}
	g, err := grid.LoadGrid(filepath.Join("..", "grids", "umls.toml"), sweep.Validate)
	must(t, err)
	if g.Name != "umls" {
		t.Errorf("the demo grid is named %q: its default results directory would not be results/umls", g.Name)
	}
	rows := readRows(t, ref)
	finished := map[string]bool{}
	for _, r := range rows {
		if train.Status(r["status"]) == train.Finished {
			finished[r["id"]] = true
		}
	}
	for _, r := range g.Runs {
		if !finished[r.ID] {
			t.Errorf("run %s of grids/umls.toml has no finished row in %s", r.ID, ref)
		}
	}
	if len(rows) != len(g.Runs) {
		t.Errorf("%d rows in the reference, %d runs in the grid", len(rows), len(g.Runs))
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
			fx := newSweepFixture(t, toyGrid)
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
	fx := newSweepFixture(t, toyGrid)
	if code := runCLI(context.Background(), fx.args("-v", "-q"), cliEnv{stdout: &bytes.Buffer{}, stderr: &errOut, getenv: func(string) string { return "" }, run: newFake().run}); code != exitUsage {
		t.Errorf("-v -q: exit %d, want %d", code, exitUsage)
	}
}
