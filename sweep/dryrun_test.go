package sweep

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gekc/grid"
	"gekc/resultsdir"
	"gekc/runspec"
	"gekc/train"
)

const dryRunGrid = `name = "dry"
[defaults]
objective = "mle"
model = "cp2"
rank = 4
batch_size = 100
learning_rate = 0.01
epochs = 2

[[sweep]]
dataset = ["nations", "umls"]
`

func TestCheckDatasets(t *testing.T) {
	g, err := grid.ParseGrid("dry.toml", []byte(dryRunGrid), runspec.Validate)
	must(t, err)
	root := t.TempDir()
	must(t, os.Mkdir(filepath.Join(root, "nations"), 0o755))
	must(t, os.WriteFile(filepath.Join(root, "umls"), nil, 0o644)) // a file, not a directory
	for _, c := range []struct {
		name    string
		root    string
		runs    []grid.Run
		wantErr string
	}{
		{"present", root, g.Runs[:1], ""},
		{"no runs", filepath.Join(root, "none"), nil, ""},
		{"a file", root, g.Runs, "dataset directory not found: " + filepath.Join(root, "umls") + " (data root " + root + ")"},
		{"no root", filepath.Join(root, "none"), g.Runs, "dataset directory not found: " +
			filepath.Join(root, "none", "nations") + ", " + filepath.Join(root, "none", "umls") + " (data root"},
	} {
		err := CheckDatasets(c.root, c.runs)
		switch {
		case c.wantErr == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr) || !strings.Contains(err.Error(), "GEKC_DATA")):
			t.Errorf("%s: error %v, want %q and how to point elsewhere", c.name, err, c.wantErr)
		}
	}
}

// The run list shows every selected run's state in out, and a note for a
// missing data set.
func TestWriteRunList(t *testing.T) {
	g, err := grid.ParseGrid("dry.toml", []byte(dryRunGrid), runspec.Validate)
	must(t, err)
	out, root := t.TempDir(), t.TempDir()
	must(t, os.Mkdir(filepath.Join(root, "umls"), 0o755))
	done := g.Runs[1]
	must(t, os.MkdirAll(filepath.Join(out, resultsdir.RunsDirName, done.ID), 0o755))
	must(t, resultsdir.WriteRecord(filepath.Join(out, resultsdir.RunsDirName, done.ID, resultsdir.MetricsName), &resultsdir.Record{ID: done.ID, Status: train.Finished, Spec: done.Spec}))

	var b bytes.Buffer
	must(t, WriteRunList(&b, g, g.Runs[1:], out, root))
	lines := strings.Split(b.String(), "\n")
	if lines[0] != "grid dry (dry.toml): 2 runs, 1 selected" || lines[1] != "out  "+out || lines[2] != "data "+root {
		t.Errorf("heading %q", lines[:3])
	}
	if len(lines) != 7 || !strings.HasPrefix(lines[4], "index  id") || !strings.HasPrefix(lines[5], "1      "+done.ID) ||
		!strings.HasSuffix(lines[5], "finished") || !strings.Contains(lines[5], "umls cp2 mle d=4") || lines[6] != "" {
		t.Errorf("table:\n%s", b.String())
	}

	b.Reset()
	must(t, WriteRunList(&b, g, g.Runs, out, root))
	if err := containsAll(b.String(), "grid dry (dry.toml): 2 runs\n", "pending\n", "finished\n",
		"\nnote: dataset directory not found: "+filepath.Join(root, "nations")); err != nil {
		t.Errorf("%v in\n%s", err, b.String())
	}
}

// The dry run's memory estimate of a run tested on another data set
// (eval.test_on) counts that data set too; one that does not load gets a
// line saying so.
func TestDryRunCountsTestOnData(t *testing.T) {
	src := "[defaults]\ndataset = \"nations\"\nmodel = \"complex2\"\nobjective = \"pll\"\nrank = 4\nbatch_size = 100\n" +
		"learning_rate = 0.01\nepochs = 1\n[[sweep]]\neval.test_on = [\"\", \"umls\", \"missing\"]\n"
	g, err := grid.ParseGrid("t.toml", []byte(src), runspec.Validate)
	must(t, err)
	var b bytes.Buffer
	must(t, writeMemoryEstimates(&b, g.Runs, t.TempDir(), shippedData(t, "umls")))
	var col [2]int // the data column's place, from the header
	data := map[string]string{}
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.HasPrefix(l, "index") {
			col = [2]int{strings.Index(l, "data"), strings.Index(l, "evaluation")}
		} else if f := strings.Fields(l); len(f) > 0 && len(f[0]) == 1 {
			data[f[0]] = l
		}
	}
	cell := func(i string) string {
		if l := data[i]; col[1] > 0 && len(l) > col[1] {
			return strings.TrimSpace(l[col[0]:col[1]])
		}
		return ""
	}
	if own, umls := cell("0"), cell("1"); own == "" || own == umls {
		t.Errorf("data column %q without test_on, %q with test_on = umls:\n%s", own, umls, b.String())
	}
	if !strings.Contains(data["2"], "eval.test_on: ") || !strings.Contains(data["2"], "missing") {
		t.Errorf("a test_on data set that does not load: %q", data["2"])
	}
}
