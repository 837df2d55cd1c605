package runspec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gekc/grid"
	"gekc/models"
	"gekc/train/ckpt"
)

// Each problem that depends on the data is found before any run trains,
// with the grid's file:line and the block (the command's side, exit code
// and nothing written, is experiments' TestPreflightBeforeTraining).
func TestPreflightFindsDataProblems(t *testing.T) {
	data := shippedData(t, "nations")
	bad := filepath.Join(t.TempDir(), "bad.npz")
	must(t, os.WriteFile(bad, []byte("not a zip"), 0o644))
	wrong := filepath.Join(t.TempDir(), "wrong.npz")
	m, err := models.New("complex", models.Sizes{Entities: 3, Relations: 2, Rank: 4}, models.Options{})
	must(t, err)
	must(t, ckpt.Write(wrong, m))
	// nations without test triples
	noTest := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(noTest, "nations"), 0o755))
	for _, f := range []string{"train.txt", "valid.txt"} {
		b, err := os.ReadFile(filepath.Join(data, "nations", f))
		must(t, err)
		must(t, os.WriteFile(filepath.Join(noTest, "nations", f), b, 0o644))
	}
	must(t, os.WriteFile(filepath.Join(noTest, "nations", "test.txt"), nil, 0o644))

	const head = "[defaults]\ndataset = \"nations\"\nrank = 4\nbatch_size = 100\nlearning_rate = 0.01\nepochs = 2\n[[sweep]]\n"
	for _, c := range []struct {
		name, block, root string
		want              []string
	}{
		{"sem_k beyond the entities", "model = \"cp2\"\nobjective = \"pll\"\neval.sem_k = [100]\n", data,
			[]string{"grid.toml:7: [[sweep]] block 1: run cp2-pll-", "eval.sem_k [100]: 100 more than the 14 entities of nations"}},
		{"Sem@k without a schema", "model = \"cp2\"\nobjective = \"pll\"\neval = { metrics = [\"mrr\", \"sem\"], sem_k = [1, 5] }\n", data,
			[]string{`eval.metrics has "sem", but data set nations has no schema`}},
		{"unfiltered Sem@k without a schema", "model = \"cp2\"\nobjective = \"pll\"\neval = { metrics = [\"mrr\", \"sem_unfiltered\"], sem_k = [1, 5] }\n", data,
			[]string{`eval.metrics has "sem_unfiltered", but data set nations has no schema`}},
		{"domain constraints without a schema", "model = [\"cp2\", \"complex2\"]\nobjective = \"pll\"\nconstraints = \"domain\"\n", data,
			[]string{`constraints = "domain", but data set nations has no schema`, "(and 1 more runs of this block)"}},
		{"unreadable distill_from", "model = \"complex2\"\nobjective = \"pll\"\ndistill_from = \"" + bad + "\"\n", data,
			[]string{"distill_from", "not a readable .npz (zip) file"}},
		{"missing distill_from", "model = \"complex2\"\nobjective = \"pll\"\ndistill_from = \"" + bad + ".missing.npz\"\n", data,
			[]string{"distill_from", "does not exist"}},
		{"distill_from of another graph", "model = \"complex2\"\nobjective = \"pll\"\ndistill_from = \"" + wrong + "\"\n", data,
			[]string{"distill_from", "does not fit complex2 with rank 4 on nations", "entry entity has shape [3 8], the model needs [14 8]"}},
		{"distill_from nowhere", "model = \"complex2\"\nobjective = \"pll\"\ndistill_from = \"cp-pll-somewhere\"\n", data,
			[]string{"distill_from \"cp-pll-somewhere\": neither a run of this grid"}},
		{"no test triples", "model = \"cp2\"\nobjective = \"pll\"\n", noTest, []string{"dataset nations: no test triples"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			g, err := grid.ParseGrid("grid.toml", []byte(head+c.block), Validate)
			must(t, err)
			out := filepath.Join(t.TempDir(), "out")
			_, err = PreflightRuns(g, c.root, out, g.Runs)
			if err == nil {
				t.Fatal("preflight passed")
			}
			if missing := containsAll(err.Error(), c.want...); missing != nil {
				t.Errorf("%v in\n%v", missing, err)
			}
			if _, serr := os.Stat(out); !os.IsNotExist(serr) {
				t.Error("preflight created the results directory")
			}
		})
	}
}

// A grid with a model of a table per role on a data set whose test
// triples put an entity in a role training never gives it is told so,
// naming those models; one of shared tables is not.
func TestPreflightRoleNote(t *testing.T) {
	root := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(root, "toy"), 0o755))
	for f, text := range map[string]string{
		"train.txt": "a\tr\tb\nb\tr\tc\n", // a is never an object, c never a subject
		"valid.txt": "a\tr\tc\n",
		"test.txt":  "c\tr\ta\n", // both in the role they lack
	} {
		must(t, os.WriteFile(filepath.Join(root, "toy", f), []byte(text), 0o644))
	}
	const head = "[defaults]\ndataset = \"toy\"\nrank = 2\nbatch_size = 2\nlearning_rate = 0.01\nepochs = 1\n[[sweep]]\nobjective = \"pll\"\n"
	for _, c := range []struct {
		models, want string
	}{
		{`["cp2", "complex2", "cp+"]`, "note: toy: 1 valid/test triples of entities in training put one in a role it never has there (1 entities are never a subject in training, 1 never an object); cp2, cp+ keep a subject and an object table"},
		{`["cp"]`, "note: toy: 1 valid/test triples of entities in training put one in a role it never has there (1 entities are never a subject in training, 1 never an object); cp keeps a subject"},
		{`["complex2", "distmult"]`, ""},
	} {
		g, err := grid.ParseGrid("grid.toml", []byte(head+"model = "+c.models+"\n"), Validate)
		must(t, err)
		notes, err := PreflightRuns(g, root, t.TempDir(), g.Runs)
		must(t, err)
		var got string
		for _, n := range notes {
			if strings.Contains(n, "role") {
				got = n
			}
		}
		if c.want == "" && got != "" || !strings.HasPrefix(got, c.want) {
			t.Errorf("models %s: note %q, want one starting %q", c.models, got, c.want)
		}
	}
}
