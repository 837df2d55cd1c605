package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gekc/kg"
)

// synth -planted writes a data set the loader reads with the sizes asked,
// every planted entity, its SOURCE.md and planted.tsv; a grid then trains
// on it. Bad requests are usage errors that say why.
func TestSynthPlanted(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "planted")
	code, stdout, stderr := runInProcess(t, context.Background(), newFake(), "synth", "-planted", "complex2", "-entities", "40",
		"-relations", "3", "-rank", "4", "-to", dir, "-train", "300", "-valid", "20", "-test", "20", "-seed", "2")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	ds, err := kg.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds.Train) != 300 || len(ds.Valid) != 20 || len(ds.Test) != 20 || ds.Entities.Len() != 40 {
		t.Errorf("loaded %d/%d/%d triples over %d entities", len(ds.Train), len(ds.Valid), len(ds.Test), ds.Entities.Len())
	}
	for _, f := range []string{"SOURCE.md", "planted.tsv", "planted.npz"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	if !strings.Contains(stdout, "exact LL train") {
		t.Errorf("stdout: %s", stdout)
	}
	grid := filepath.Join(root, "g.toml")
	must(t, os.WriteFile(grid, []byte("name = \"g\"\n[defaults]\ndataset = \"planted\"\nmodel = \"complex2\"\nobjective = \"mle\"\nrank = 4\nbatch_size = 100\nlearning_rate = 0.01\nepochs = 2\n[[sweep]]\nseed = 0\n"), 0o644))
	var out strings.Builder
	code = runCLI(context.Background(), []string{"-grid", grid, "-data", root, "-out", filepath.Join(root, "out")},
		cliEnv{stdout: &out, stderr: &out, getenv: func(string) string { return "" }, quiet: true, run: nil})
	if code != exitOK || !strings.Contains(out.String(), "| complex2 |") {
		t.Errorf("a grid on the planted data: exit %d\n%s", code, out.String())
	}
	// A typed planted graph: its schema files load, every triple is
	// type-consistent.
	types, schema := filepath.Join(root, "types.tsv"), filepath.Join(root, "schema.tsv")
	must(t, os.WriteFile(types, []byte("type\tcount\nprotein\t30\ndrug\t10\n"), 0o644))
	must(t, os.WriteFile(schema, []byte("relation\thead\ttail\ndrug-protein\tdrug\tprotein\nprotein-protein\tprotein\tprotein\n"), 0o644))
	typed := filepath.Join(root, "typed")
	code, _, stderr = runInProcess(t, context.Background(), newFake(), "synth", "-planted", "complex2", "-types", types, "-schema", schema,
		"-rank", "3", "-to", typed, "-train", "200", "-valid", "10", "-test", "10")
	if code != exitOK {
		t.Fatalf("typed: exit %d: %s", code, stderr)
	}
	tds, err := kg.Load(typed)
	if err != nil {
		t.Fatal(err)
	}
	if tds.Schema == nil || tds.Entities.Len() != 40 || tds.Relations.Len() != 2 {
		t.Fatalf("typed: %d entities, %d relations, schema %v", tds.Entities.Len(), tds.Relations.Len(), tds.Schema != nil)
	}
	for _, tr := range tds.Train {
		if !tds.Schema.Consistent(tr) {
			t.Fatalf("typed: %v breaks the schema", tr)
		}
	}
	// The same in OGB's layout: the loader reads it with its negatives.
	code, _, stderr = runInProcess(t, context.Background(), newFake(), "synth", "-planted", "complex2", "-types", types, "-schema", schema,
		"-rank", "3", "-to", filepath.Join(root, "ogb"), "-train", "200", "-valid", "10", "-test", "10", "-format", "ogb", "-negatives", "4")
	if ods, err := kg.Load(filepath.Join(root, "ogb")); code != exitOK || err != nil || len(ods.Negatives.TestTail[9]) != 4 || !slices.Equal(ods.Train, tds.Train) {
		t.Fatalf("-format ogb: exit %d (%s), %v", code, stderr, err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-planted", "cp2", "-entities", "5", "-relations", "1", "-rank", "2", "-train", "3", "-negatives", "2"}, "with -format ogb"},
		{[]string{"-planted", "cp2", "-entities", "5", "-relations", "1", "-rank", "2", "-train", "3", "-format", "csv"}, "want text or ogb"},
		{[]string{"-planted", "cp2", "-types", types, "-schema", schema, "-rank", "2", "-train", "3", "-format", "ogb", "-negatives", "10"}, `type "drug" has 10 entities`},
		{[]string{"-planted", "complex", "-entities", "5", "-relations", "1", "-rank", "2", "-train", "3"}, "energy-based"},
		{[]string{"-planted", "cp2", "-entities", "2", "-relations", "1", "-rank", "2", "-train", "3", "-valid", "2"}, "can draw only 4"},
		{[]string{"-planted", "cp2", "-entities", "5", "-relations", "1", "-rank", "2"}, "not all zero"},
		{[]string{"-planted", "cp2", "-run", "x", "-train", "3"}, "exactly one of -run"},
		{[]string{"-planted", "cp2", "-entities", "5", "-relations", "1", "-rank", "2", "-train", "3", "-draw", "some"}, "want distinct or iid"},
		{[]string{"-planted", "cp2", "-types", types, "-rank", "2", "-train", "3"}, "-types and -schema go together"},
		{[]string{"-planted", "cp2", "-types", types, "-schema", schema, "-entities", "5", "-rank", "2", "-train", "3"}, "takes its sizes from -types and -schema"},
		{[]string{"-planted", "cp2", "-types", types, "-schema", filepath.Join(root, "nope.tsv"), "-rank", "2", "-train", "3"}, "nope.tsv"},
	} {
		args := append([]string{"synth", "-to", filepath.Join(root, "bad")}, c.args...)
		code, _, stderr := runInProcess(t, context.Background(), newFake(), args...)
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, %q (want %q)", c.args, code, stderr, c.want)
		}
	}
}

// The check of synth -run: a GeKC trained briefly on UMLS, then
// `synth -run … -to DIR -train 4000 -valid 300 -test 300` writes a data
// set of those sizes with its statistics (stats.md, with the KTD to UMLS's
// test triples, and degrees.png) and SOURCE.md, and a grid trains on DIR.
func TestSynthRunSurrogateOfUMLS(t *testing.T) {
	root := t.TempDir()
	data := shippedData(t, "umls")
	grid := filepath.Join(root, "umls.toml")
	must(t, os.WriteFile(grid, []byte("name = \"u\"\n[defaults]\ndataset = \"umls\"\nmodel = \"complex2\"\nobjective = \"mle\"\nrank = 8\nbatch_size = 500\nlearning_rate = 0.01\nepochs = 2\n"), 0o644))
	out := filepath.Join(root, "out")
	trainCLI(t, []string{"-grid", grid, "-data", data, "-out", out})
	dir := filepath.Join(root, "surrogate")
	code, stdout, stderr := runInProcess(t, context.Background(), newFake(), "synth", "-run", "complex2-mle", "-out", out,
		"-data", data, "-to", dir, "-train", "4000", "-valid", "300", "-test", "300", "-seed", "3")
	if code != exitOK {
		t.Fatalf("synth -run: exit %d: %s", code, stderr)
	}
	ds, err := kg.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds.Train) != 4000 || len(ds.Valid) != 300 || len(ds.Test) != 300 || !ds.Synthetic {
		t.Errorf("loaded %d/%d/%d triples (synthetic %v)", len(ds.Train), len(ds.Valid), len(ds.Test), ds.Synthetic)
	}
	stats, err := os.ReadFile(filepath.Join(dir, "stats.md"))
	must(t, err)
	for _, want := range []string{"| statistic | original (train) | surrogate (train) |", "total variation distance", "KTD to the original's test triples"} {
		if !strings.Contains(string(stats), want) {
			t.Errorf("stats.md lacks %q:\n%s", want, stats)
		}
	}
	for _, f := range []string{"degrees.png", "SOURCE.md"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	if !strings.Contains(stdout, "4000/300/300 train/valid/test triples") {
		t.Errorf("stdout: %s", stdout)
	}
	g2 := filepath.Join(root, "sur.toml")
	must(t, os.WriteFile(g2, []byte("name = \"s\"\n[defaults]\ndataset = \"surrogate\"\nmodel = \"complex2\"\nobjective = \"pll\"\nrank = 8\nbatch_size = 500\nlearning_rate = 0.01\nepochs = 1\n"), 0o644))
	table, _ := trainCLI(t, []string{"-grid", g2, "-data", root, "-out", filepath.Join(root, "out2")})
	if !strings.Contains(table, "| complex2 |") {
		t.Errorf("a grid on the surrogate printed:\n%s", table)
	}
}

// synth writes no data set over another unless told (-force), and never
// into a results directory: the user's command that replaced UMLS's
// training triples (issue 57) is refused, and the files stay as they were.
func TestSynthRefusesToOverwrite(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "planted")
	args := func(out string, more ...string) []string {
		return append([]string{"synth", "-planted", "complex2", "-entities", "20", "-relations", "3", "-rank", "2",
			"-to", out, "-train", "30", "-valid", "5", "-test", "5"}, more...)
	}
	if code, _, stderr := runInProcess(t, context.Background(), newFake(), args(dir)...); code != exitOK {
		t.Fatalf("first write: exit %d: %s", code, stderr)
	}
	before, err := os.ReadFile(filepath.Join(dir, "train.txt"))
	must(t, err)
	code, _, stderr := runInProcess(t, context.Background(), newFake(), args(dir, "-seed", "9")...)
	if code == exitOK || !strings.Contains(stderr, "already holds") || !strings.Contains(stderr, "-force") {
		t.Errorf("a second write over it: exit %d: %s", code, stderr)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, "train.txt")); string(after) != string(before) {
		t.Error("the refused write changed train.txt")
	}
	if code, _, stderr := runInProcess(t, context.Background(), newFake(), args(dir, "-seed", "9", "-force")...); code != exitOK {
		t.Errorf("-force: exit %d: %s", code, stderr)
	}
	results := filepath.Join(root, "results")
	must(t, os.MkdirAll(filepath.Join(results, "runs"), 0o755))
	code, _, stderr = runInProcess(t, context.Background(), newFake(), args(results, "-force")...)
	if code == exitOK || !strings.Contains(stderr, "results directory") {
		t.Errorf("into a results directory: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(results, "train.txt")); err == nil {
		t.Error("a data set was written into the results directory")
	}
}
