package grid

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// base is a [defaults] block that satisfies DefaultValidator, so that test
// grids only state what they test.
const base = `[defaults]
dataset = "toy"
model = "cp"
objective = "pll"
rank = 4
batch_size = 10
learning_rate = 0.01
epochs = 2
`

// brief renders the fields the expansion tests look at.
func brief(s RunSpec) string {
	out := fmt.Sprintf("%s/%s d%d b%d lr%g s%d", s.Model, s.Objective, s.Rank, s.BatchSize, s.LearningRate, s.Seed)
	if w := s.PLLWeights; w != (PLLWeights{1, 1, 1}) {
		out += fmt.Sprintf(" w%g/%g/%g", w.Subject, w.Object, w.Relation)
	}
	if !reflect.DeepEqual(s.Eval.Hits, []int{1, 3, 10}) {
		out += fmt.Sprintf(" hits%v", s.Eval.Hits)
	}
	if s.Eval.Select != "mrr" {
		out += " sel=" + s.Eval.Select
	}
	return out
}

func TestExpandGrid(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string
		dups int
	}{
		{
			name: "defaults only",
			src:  base,
			want: []string{"cp/pll d4 b10 lr0.01 s0"},
		},
		{
			name: "cartesian product, seed fastest whatever the key order",
			src: base + `[[sweep]]
seed = [0, 1]
model = ["cp", "complex"]
`,
			want: []string{"cp/pll d4 b10 lr0.01 s0", "cp/pll d4 b10 lr0.01 s1", "complex/pll d4 b10 lr0.01 s0", "complex/pll d4 b10 lr0.01 s1"},
		},
		{
			name: "blocks in file order, block values override defaults",
			src: base + `[[sweep]]
model = "complex2"
objective = ["pll", "mle"]
[[sweep]]
learning_rate = 0.1
`,
			want: []string{"complex2/pll d4 b10 lr0.01 s0", "complex2/mle d4 b10 lr0.01 s0", "cp/pll d4 b10 lr0.1 s0"},
		},
		{
			name: "seeds shorthand",
			src: base + `[[sweep]]
seeds = 3
`,
			want: []string{"cp/pll d4 b10 lr0.01 s0", "cp/pll d4 b10 lr0.01 s1", "cp/pll d4 b10 lr0.01 s2"},
		},
		{
			name: "axis in defaults combines with axis in block, in field order",
			src: strings.Replace(base, "rank = 4", "rank = [4, 8]", 1) + `[[sweep]]
model = ["cp", "complex"]
`,
			want: []string{"cp/pll d4 b10 lr0.01 s0", "cp/pll d8 b10 lr0.01 s0", "complex/pll d4 b10 lr0.01 s0", "complex/pll d8 b10 lr0.01 s0"},
		},
		{
			name: "block axis replaces defaults axis",
			src: strings.Replace(base, "rank = 4", "rank = [4, 8]", 1) + `[[sweep]]
rank = 16
`,
			want: []string{"cp/pll d16 b10 lr0.01 s0"},
		},
		{
			name: "inline array of tables is an axis; members not named keep defaults",
			src: base + `[[sweep]]
pll_weights = [{relation = 0.0}, {subject = 2, relation = 1}]
`,
			want: []string{"cp/pll d4 b10 lr0.01 s0 w1/1/0", "cp/pll d4 b10 lr0.01 s0 w2/1/1"},
		},
		{
			name: "[[sweep.pll_weights]] is an axis too",
			src: base + `[[sweep]]
model = "cp2"
[[sweep.pll_weights]]
relation = 0.5
[[sweep.pll_weights]]
relation = 2.0
`,
			want: []string{"cp2/pll d4 b10 lr0.01 s0 w1/1/0.5", "cp2/pll d4 b10 lr0.01 s0 w1/1/2"},
		},
		{
			name: "member of a table as an axis",
			src: base + `[[sweep]]
eval.select = ["mrr", "ll"]
`,
			want: []string{"cp/pll d4 b10 lr0.01 s0", "cp/pll d4 b10 lr0.01 s0 sel=ll"},
		},
		{
			name: "list key: an array is a value, an array of arrays an axis",
			src: base + `[[sweep]]
eval.hits = [1, 10]
[[sweep]]
eval.hits = [[1], [5, 50]]
`,
			want: []string{"cp/pll d4 b10 lr0.01 s0 hits[1 10]", "cp/pll d4 b10 lr0.01 s0 hits[1]", "cp/pll d4 b10 lr0.01 s0 hits[5 50]"},
		},
		{
			name: "block member applies on top of a defaults table",
			src: base + `pll_weights = {subject = 2}
[[sweep]]
pll_weights.relation = 0
`,
			want: []string{"cp/pll d4 b10 lr0.01 s0 w2/1/0"},
		},
		{
			// TOML cannot tell an inline table from dotted keys once parsed,
			// so tables always merge member by member.
			name: "tables merge member by member",
			src: base + `pll_weights.relation = 0
[[sweep]]
pll_weights = {object = 3}
`,
			want: []string{"cp/pll d4 b10 lr0.01 s0 w1/3/0"},
		},
		{
			name: "table axis in a block replaces the table from defaults",
			src: base + `pll_weights.subject = 2
[[sweep]]
pll_weights = [{relation = 0}]
`,
			want: []string{"cp/pll d4 b10 lr0.01 s0 w1/1/0"},
		},
		{
			name: "member in a block applies on top of a table axis from defaults",
			src: base + `pll_weights = [{subject = 2}, {subject = 3}]
[[sweep]]
pll_weights.relation = 0
`,
			want: []string{"cp/pll d4 b10 lr0.01 s0 w2/1/0", "cp/pll d4 b10 lr0.01 s0 w3/1/0"},
		},
		{
			name: "[defaults.eval] table",
			src: base + `[defaults.eval]
select = "ll"
hits = [1]
`,
			want: []string{"cp/pll d4 b10 lr0.01 s0 hits[1] sel=ll"},
		},
		{
			name: "whole-number float accepted for an integer key",
			src:  strings.Replace(base, "batch_size = 10", "batch_size = 1e3", 1),
			want: []string{"cp/pll d4 b1000 lr0.01 s0"},
		},
		{
			name: "integer accepted for a float key",
			src:  strings.Replace(base, "learning_rate = 0.01", "learning_rate = 1", 1),
			want: []string{"cp/pll d4 b10 lr1 s0"},
		},
		{
			name: "the same run from two blocks is kept once",
			src: base + `[[sweep]]
seed = [0, 1]
[[sweep]]
seed = [1, 2]
`,
			want: []string{"cp/pll d4 b10 lr0.01 s0", "cp/pll d4 b10 lr0.01 s1", "cp/pll d4 b10 lr0.01 s2"},
			dups: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := ParseGrid("grid.toml", []byte(tt.src), nil)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for i, r := range g.Runs {
				if r.Index != i || r.ID != r.Spec.ID() {
					t.Errorf("run %d: Index %d, ID %s, spec ID %s", i, r.Index, r.ID, r.Spec.ID())
				}
				got = append(got, brief(r.Spec))
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("runs:\n got %q\nwant %q", got, tt.want)
			}
			if g.Duplicates != tt.dups {
				t.Errorf("Duplicates = %d, want %d", g.Duplicates, tt.dups)
			}
		})
	}
}

func TestExpandGridIsDeterministic(t *testing.T) {
	a := base + `[[sweep]]
model = ["cp", "complex"]
seed = [0, 1, 2]
pll_weights = [{relation = 0}, {relation = 1}]
learning_rate = [0.1, 0.01]
`
	// The same grid with keys in another order.
	b := strings.Replace(base, "rank = 4\n", "", 1) + `rank = 4
[[sweep]]
learning_rate = [0.1, 0.01]
pll_weights = [{relation = 0}, {relation = 1}]
seed = [0, 1, 2]
model = ["cp", "complex"]
`
	ids := func(src string) []string {
		g, err := ParseGrid("g.toml", []byte(src), nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range g.Runs {
			out = append(out, r.ID)
		}
		return out
	}
	first := ids(a)
	if len(first) != 24 {
		t.Fatalf("%d runs, want 24", len(first))
	}
	for i := 0; i < 5; i++ {
		if got := ids(a); !reflect.DeepEqual(got, first) {
			t.Fatalf("expansion %d differs:\n%q\n%q", i, got, first)
		}
	}
	if got := ids(b); !reflect.DeepEqual(got, first) {
		t.Errorf("reordering keys changed the expansion:\n%q\n%q", got, first)
	}
}

func TestGridErrors(t *testing.T) {
	rejectMLEForEnergyBased := func(s RunSpec) error {
		if _, sem := splitModel(s.Model); sem == "" && s.Objective == "mle" {
			return errors.New("energy-based model with MLE: no tractable partition function")
		}
		return nil
	}
	tests := []struct {
		name     string
		src      string
		validate Validator
		want     []string // substrings of the error
	}{
		{"unknown key in defaults", base + "ranks = 3\n", nil,
			[]string{"grid.toml:9:", `"ranks"`, `did you mean "rank"`}},
		{"unknown key in second block", base + "[[sweep]]\nseed = 1\n[[sweep]]\nseed = 2\nlearningrate = 0.1\n", nil,
			[]string{"grid.toml:13:", "[[sweep]] block 2", `"learningrate"`, `"learning_rate"`}},
		{"unknown key in [defaults.eval]", base + "[defaults.eval]\nhits = [1]\nselekt = \"ll\"\n", nil,
			[]string{"grid.toml:11:", `"eval.selekt"`, `did you mean "eval.select"`}},
		{"unknown key in an inline table", base + "[[sweep]]\neval = {metric = [\"mrr\"]}\n", nil,
			[]string{"grid.toml:10:", `"eval.metric"`}},
		{"unknown top-level table", "[default]\nrank = 3\n" + strings.Replace(base, "[defaults]\n", "[defaults]\n", 1), nil,
			[]string{"grid.toml:1:", `"default"`}},
		{"wrong type", strings.Replace(base, "rank = 4", `rank = "four"`, 1), nil,
			[]string{"grid.toml:5:", "rank", "want an integer", `"four"`}},
		{"fractional float for an integer", strings.Replace(base, "epochs = 2", "epochs = 2.5", 1), nil,
			[]string{"grid.toml:8:", "epochs", "want an integer"}},
		{"wrong type in an axis", base + "[[sweep]]\nmodel = \"cp\"\nseed = [0, \"one\"]\n", nil,
			[]string{"grid.toml:11:", "seed", "element 1"}},
		{"wrong type in a list", base + "[[sweep]]\neval.hits = [1, \"ten\"]\n", nil,
			[]string{"grid.toml:10:", "eval.hits", "element 1"}},
		{"table key given a scalar", base + "pll_weights = 1.0\n", nil,
			[]string{"grid.toml:9:", "pll_weights", "want a table"}},
		{"syntax error", base + "[[sweep]]\nmodel = [\"cp\",\n", nil,
			[]string{"grid.toml:1"}},
		{"[sweep] instead of [[sweep]]", base + "[sweep]\nmodel = \"cp\"\n", nil,
			[]string{"grid.toml:9:", "[[sweep]]"}},
		{"seed and seeds", base + "[[sweep]]\nseed = 1\nseeds = 3\n", nil,
			[]string{"grid.toml:11:", "seeds and seed"}},
		{"seeds not positive", base + "[[sweep]]\nseeds = 0\n", nil,
			[]string{"grid.toml:10:", "seeds", "positive"}},
		{"empty axis", base + "[[sweep]]\nmodel = []\n", nil,
			[]string{"grid.toml:10:", "model", "empty sweep axis"}},
		{"nested axis in a table axis", base + "[[sweep]]\npll_weights = [{relation = [0, 1]}]\n", nil,
			[]string{"grid.toml:10:", "pll_weights.relation", "nested sweep axis"}},
		{"list mixing values and lists", base + "[[sweep]]\neval.hits = [1, [3]]\n", nil,
			[]string{"grid.toml:10:", "eval.hits", "mixes"}},
		{"name with a path separator", "name = \"a/b\"\n" + base, nil,
			[]string{"grid.toml:1:", "path separator"}},
		{"paper not a boolean", "paper = \"no\"\n" + base, nil,
			[]string{"grid.toml:1:", "paper"}},
		{"name of the wrong type", "name = 3\n" + base, nil,
			[]string{"grid.toml:1:", "name"}},
		{"default validator, with the key's line and run", base + "[[sweep]]\nrank = 1\n[[sweep]]\nrank = 0\n", nil,
			[]string{"grid.toml:12:", "[[sweep]] block 2", "run cp-pll-d0-", "rank 0"}},
		{"validator hook, with block line and run", base + "[[sweep]]\nmodel = [\"cp2\", \"cp\"]\nobjective = \"mle\"\n", rejectMLEForEnergyBased,
			[]string{"grid.toml:9:", "[[sweep]] block 1", "run cp-mle-", "no tractable partition function"}},
		{"too many runs", base + "[[sweep]]\nseeds = 1000\nrank = [" + strings.Repeat("1, ", 200) + "1]\n", nil,
			[]string{"grid.toml:9:", "more than 100000 runs"}},
		{"too many seeds", base + "[[sweep]]\nseeds = 200000\n", nil,
			[]string{"grid.toml:10:", "seeds"}},
		{"unknown model", base + "[[sweep]]\nmodel = \"cpx\"\n", validateKnownModels,
			[]string{"grid.toml:9:", `unknown model "cpx" (known: complex,`}},
		{"no dataset", strings.Replace(base, `dataset = "toy"`, "", 1), nil,
			[]string{"grid.toml:1:", `missing required key "dataset"`, "required keys are dataset, model,"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseGrid("grid.toml", []byte(tt.src), tt.validate)
			if err == nil {
				t.Fatal("no error")
			}
			if e := containsAll(err.Error(), tt.want...); e != nil {
				t.Errorf("error %q: %v", err, e)
			}
		})
	}
}

// TestGridReportsEveryError checks that one parse reports every mistake of
// a grid, each at its line, in file order.
func TestGridReportsEveryError(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string // the lines of the error, each substrings separated by " … "
	}{
		{"three misspelt keys", base + "[[sweep]]\nmodle = \"cp\"\n[[sweep]]\nlearning_rat = 0.1\neval = {selct = \"ll\"}\n",
			[]string{`grid.toml:10: [[sweep]] block 1: unknown key "modle" (did you mean "model"?)`,
				`grid.toml:12: [[sweep]] block 2: unknown key "learning_rat" (did you mean "learning_rate"?)`,
				`grid.toml:13: [[sweep]] block 2: unknown key "eval.selct" (did you mean "eval.select"?)`}},
		// The minimal grid: the missing keys are named as such (no
		// "learning_rate 0"), and the unknown model shows at once.
		{"missing required keys and an unknown model", "[defaults]\ndataset = \"toy\"\nrank = 4\nobjective = \"pll\"\n[[sweep]]\nmodel = \"cpx\"\n",
			[]string{`grid.toml:1: missing required key "learning_rate"`,
				`grid.toml:1: missing required key "batch_size"`,
				`grid.toml:1: missing required key "epochs"`,
				`grid.toml:5: [[sweep]] block 1: its runs: unknown model "cpx"`}},
		{"a key missing from one block", strings.Replace(base, "model = \"cp\"\n", "", 1) + "[[sweep]]\nmodel = \"cp\"\n[[sweep]]\nrank = 8\n",
			[]string{`grid.toml:10: [[sweep]] block 2: missing required key "model": set it in this block or in [defaults]`}},
		{"a misspelt required key is not also missing", strings.Replace(base, "epochs = 2", "epoch = 2", 1),
			[]string{`grid.toml:8: [defaults]: unknown key "epoch" (did you mean "epochs"?)`}},
		{"runs failing alike are one line", base + "[[sweep]]\nseed = [0, 1, 2]\nrank = 0\n",
			[]string{"grid.toml:11: [[sweep]] block 1: run cp-pll-d0-b10-lr0.01-s0- … rank 0: want a positive embedding size (and 2 more runs of this block)"}},
		// An invalid value in [defaults] is reported once, at its line,
		// however many blocks and runs inherit it; each cause on its own.
		{"a bad value in [defaults]", strings.Replace(base, "learning_rate = 0.01", "learning_rate = -1", 1) +
			"[[sweep]]\nrank = [1, 2]\n[[sweep]]\nmodel = \"cp2\"\nepochs = 0\n",
			[]string{"grid.toml:7: [defaults]: learning_rate -1: want a finite positive rate",
				"grid.toml:13: [[sweep]] block 2: run cp2-pll-d4-b10-lr-1- … epochs 0: want a positive maximum"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseGrid("grid.toml", []byte(tt.src), validateKnownModels)
			if err == nil {
				t.Fatal("no error")
			}
			lines := strings.Split(err.Error(), "\n")
			if len(lines) != len(tt.want) {
				t.Fatalf("%d error lines, want %d:\n%v", len(lines), len(tt.want), err)
			}
			for i, w := range tt.want {
				if err := containsAll(lines[i], strings.Split(w, " … ")...); err != nil {
					t.Errorf("line %d = %q: %v", i, lines[i], err)
				}
			}
		})
	}
}

func TestGridErrorsFromFileNameTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.toml")
	must(t, os.WriteFile(path, []byte(base+"colour = 1\n"), 0o644))
	_, err := LoadGrid(path, nil)
	if err == nil || !strings.Contains(err.Error(), path+":9:") {
		t.Fatalf("error %v does not name %s:9", err, path)
	}
	_, err = LoadGrid(filepath.Join(t.TempDir(), "missing.toml"), nil)
	if err == nil || !strings.Contains(err.Error(), "missing.toml") {
		t.Fatalf("error %v does not name the missing file", err)
	}
}

func TestGridName(t *testing.T) {
	g, err := ParseGrid("grids/some-grid.toml", []byte(base), nil)
	must(t, err)
	if g.Name != "some-grid" {
		t.Errorf("Name = %q, want the base name", g.Name)
	}
	g, err = ParseGrid("grids/x.toml", []byte("name = \"given\"\ndescription = \"d\"\n"+base), nil)
	must(t, err)
	if g.Name != "given" || g.Description != "d" {
		t.Errorf("Name, Description = %q, %q", g.Name, g.Description)
	}
}

// paper = false marks a grid whose runs are not the paper's protocol;
// absent or true, it is the paper's.
func TestGridNotPaper(t *testing.T) {
	for _, c := range []struct {
		top  string
		want bool
	}{{"", false}, {"paper = true\n", false}, {"paper = false\n", true}} {
		g, err := ParseGrid("x.toml", []byte(c.top+base), nil)
		must(t, err)
		if g.NotPaper != c.want {
			t.Errorf("%q: NotPaper = %v, want %v", c.top, g.NotPaper, c.want)
		}
	}
}

func TestLineIndex(t *testing.T) {
	src := `name = "x" # [[sweep]] in a comment
[defaults]
rank = 4
eval.hits = [
  1, # a = b in a comment
  "x = y",
]
description = """
[[sweep]]
model = 1
"""
[[sweep]]
model = "cp"
"quoted key" = 1
[sweep.eval]
select = "ll"
[[sweep]]
pll_weights = [ { relation = 0 } ]
[[sweep.pll_weights]]
subject = 1
`
	ix := scanLines(src)
	tests := []struct {
		block, key string
		want       int
	}{
		{"defaults", "", 2},
		{"defaults", "rank", 3},
		{"defaults", "eval.hits", 4},
		{"defaults", "eval", 4},
		{"defaults", "nothing", 2},
		{sweepBlockName(0), "", 12},
		{sweepBlockName(0), "model", 13},
		{sweepBlockName(0), "quoted key", 14},
		{sweepBlockName(0), "eval.select", 16},
		{sweepBlockName(0), "eval", 15},
		{sweepBlockName(1), "", 17},
		{sweepBlockName(1), "pll_weights", 18},
		{sweepBlockName(1), "pll_weights.subject", 20},
		{sweepBlockName(2), "", 0},
	}
	for _, tt := range tests {
		if got := ix.line(tt.block, tt.key); got != tt.want {
			t.Errorf("line(%s, %q) = %d, want %d", tt.block, tt.key, got, tt.want)
		}
	}
	if ix.top["name"] != 1 || ix.line("defaults", "description") != 8 {
		t.Errorf("top = %v, description at %d", ix.top, ix.line("defaults", "description"))
	}
}

// Lines inside an open array, even one that looks like a table header,
// and literal strings, where a backslash escapes nothing, are skipped
// without losing the keys after them.
func TestLineIndexArraysAndLiteralStrings(t *testing.T) {
	src := `[defaults]
eval.hits = [
  [3],
]
rank = 5
tags = ['a\', 'b']
seed = 7
path = 'C:\x' # [not a table]
epochs = 9
`
	ix := scanLines(src)
	for key, want := range map[string]int{"eval.hits": 2, "rank": 5, "tags": 6, "seed": 7, "path": 8, "epochs": 9} {
		if got := ix.line("defaults", key); got != want {
			t.Errorf("line(defaults, %q) = %d, want %d", key, got, want)
		}
	}
}

func TestShippedGrids(t *testing.T) {
	paths, err := filepath.Glob("../grids/*.toml")
	must(t, err)
	want := map[string]int{ // runs per grid, so an accidental change shows
		"umls": 25, "nations-optimizers": 4, "fb15k237": 200, "wn18rr": 200, "fb15k237-cpu": 10, "wn18rr-cpu": 10,
		"hetionet": 9, "biokg": 220,
	}
	seen := map[string]bool{}
	for _, p := range paths {
		g, err := LoadGrid(p, nil)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		seen[g.Name] = true
		if n, ok := want[g.Name]; ok && len(g.Runs) != n {
			t.Errorf("%s: %d runs, want %d", p, len(g.Runs), n)
		}
		if g.Duplicates != 0 {
			t.Errorf("%s: %d duplicate runs", p, g.Duplicates)
		}
		for _, r := range g.Runs {
			if _, sem := splitModel(r.Spec.Model); sem == "" && r.Spec.Objective == "mle" {
				t.Errorf("%s: run %s pairs an energy-based model with MLE", p, r.ID)
			}
		}
	}
	for name := range want {
		if !seen[name] {
			t.Errorf("grid %q not shipped", name)
		}
	}
	// The quick default must stay quick.
	g, err := LoadGrid("../grids/umls.toml", nil)
	must(t, err)
	for _, r := range g.Runs {
		if r.Spec.Dataset != "umls" || r.Spec.Rank != 50 || r.Spec.Seed != 0 || r.Spec.BatchSize != 500 {
			t.Errorf("umls grid run %s: %s", r.ID, DescribeRun(r.Spec))
		}
		// GeKCs use lr 1e-2 on UMLS (few steps per epoch; see the grid's comments).
		if _, sem := splitModel(r.Spec.Model); (sem != "") != (r.Spec.LearningRate == 1e-2) {
			t.Errorf("umls grid run %s: lr %g", r.ID, r.Spec.LearningRate)
		}
	}
}

// FuzzParseGrid checks that no input makes the parser panic, and that every
// error names the file.
func FuzzParseGrid(f *testing.F) {
	paths, _ := filepath.Glob("../grids/*.toml")
	for _, p := range paths {
		if src, err := os.ReadFile(p); err == nil {
			f.Add(src)
		}
	}
	f.Add([]byte(base + "[[sweep]]\npll_weights = [{relation = [0]}]\n"))
	f.Add([]byte("[[sweep.pll_weights]]\n[[sweep]]\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		_, err := ParseGrid("fuzz.toml", src, nil)
		if err != nil && !strings.Contains(err.Error(), "fuzz.toml") {
			t.Errorf("error does not name the file: %v", err)
		}
	})
}

// validateKnownModels stands in for the runner's validator (runspec.Validate,
// which asks the models registry): grid's part is to attribute its errors
// to blocks and lines.
func validateKnownModels(s RunSpec) error {
	if err := DefaultValidator(s); err != nil {
		return err
	}
	known := []string{"complex", "complex+", "complex2", "cp", "cp+", "cp2"}
	if !slices.Contains(known, s.Model) {
		return fmt.Errorf("unknown model %q (known: %s)", s.Model, strings.Join(known, ", "))
	}
	return nil
}

// A required key given a value of the wrong type is reported once, at its
// line, not also as missing (issue 57).
func TestRequiredKeyOfWrongTypeIsOneError(t *testing.T) {
	for _, src := range []string{
		strings.Replace(base, "rank = 4", `rank = "ten"`, 1),
		strings.Replace(base, "rank = 4\n", "", 1) + "[[sweep]]\nrank = \"ten\"\n",
	} {
		_, err := ParseGrid("grid.toml", []byte(src), nil)
		if err == nil {
			t.Fatalf("no error for\n%s", src)
		}
		if lines := strings.Split(err.Error(), "\n"); len(lines) != 1 || strings.Contains(err.Error(), "missing required key") {
			t.Errorf("errors:\n%v\nwant one, about rank's type", err)
		}
		if !strings.Contains(err.Error(), `"ten"`) {
			t.Errorf("error %q does not quote the value", err)
		}
	}
}
