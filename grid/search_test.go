package grid

import (
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestSearchRungs(t *testing.T) {
	for _, c := range []struct {
		min, max, eta, n int
		rungs, survivors []int
	}{
		{2, 40, 3, 27, []int{2, 6, 18, 40}, []int{27, 9, 3, 1}},
		{2, 18, 3, 10, []int{2, 6, 18}, []int{10, 3, 1}},
		{1, 8, 2, 5, []int{1, 2, 4, 8}, []int{5, 2, 1, 1}},
		{5, 5, 3, 4, []int{5}, []int{4}},
		{3, 4, 2, 8, []int{3, 4}, []int{8, 4}},
		{2, 18, 3, 9, []int{2, 6, 18}, []int{9, 3, 1}}, // 18 itself is the last rung, once
		{1, math.MaxInt, 1 << 20, 3, []int{1, 1 << 20, 1 << 40, 1 << 60, math.MaxInt}, []int{3, 1, 1, 1, 1}},
		{0, 5, 3, 4, []int{5}, []int{4}}, // invalid (check says so): no loop
	} {
		s := Search{Method: "halving", MinEpochs: c.min, MaxEpochs: c.max, Eta: c.eta}
		if got := s.Rungs(); !slices.Equal(got, c.rungs) {
			t.Errorf("%+v: rungs %v, want %v", s, got, c.rungs)
		}
		if got := s.Survivors(c.n); !slices.Equal(got, c.survivors) {
			t.Errorf("%+v: survivors of %d %v, want %v", s, c.n, got, c.survivors)
		}
	}
}

const searchGrid = `name = "g"
[defaults]
dataset = "umls"
model = "complex2"
objective = "mle"
rank = 10
batch_size = 100
learning_rate = [0.01, 0.1]
seed = [0, 1]
%s
[search]
method = "halving"
min_epochs = 2
max_epochs = 18
eta = 3
%s`

func TestParseGridSearch(t *testing.T) {
	g, err := ParseGrid("g.toml", []byte(strings.Replace(strings.Replace(searchGrid, "%s", "", 1), "%s", `metric = "ll"`, 1)), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := Search{Method: "halving", MinEpochs: 2, MaxEpochs: 18, Eta: 3, Metric: "ll", Line: 11}
	if g.Search == nil || !reflect.DeepEqual(*g.Search, want) {
		t.Fatalf("search %+v, want %+v", g.Search, want)
	}
	if ids, byID := Configurations(g.Runs); len(ids) != 2 || len(byID[ids[0]]) != 2 || byID[ids[0]][1].Spec.Seed != 1 {
		t.Errorf("configurations %v: want 2 of seeds 0 and 1", byID)
	}
	if got := g.Search.RunsPerRung(g.Runs); !slices.Equal(got, []int{4, 2, 2}) {
		t.Errorf("runs per rung %v, want [4 2 2]: 2, 1 and 1 configurations of 2 seeds", got)
	}
	for _, r := range g.Runs {
		if r.Spec.Epochs != 18 || r.ID != r.Spec.ID() {
			t.Errorf("run %s: epochs %d, want max_epochs 18, and its ID from that spec", r.ID, r.Spec.Epochs)
		}
	}
	noSearch := strings.Replace(searchGrid[:strings.Index(searchGrid, "[search]")], "%s", "epochs = 18", 1)
	plain, err := ParseGrid("g.toml", []byte(noSearch), nil)
	if err != nil {
		t.Fatal(err)
	}
	if plain.Search != nil || len(plain.Runs) != len(g.Runs) || plain.Runs[0].ID != g.Runs[0].ID {
		t.Errorf("the grid without [search] at epochs 18 has runs %v; the search's are %v", plain.Runs[0].ID, g.Runs[0].ID)
	}
}

// An epochs key beside [search] is replaced by max_epochs, and said.
func TestParseGridSearchReplacesEpochs(t *testing.T) {
	src := strings.Replace(strings.Replace(searchGrid, "%s", "epochs = 10\n[[sweep]]\nepochs = [5, 7]", 1), "%s", "", 1)
	g, err := ParseGrid("g.toml", []byte(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"g.toml:10: [defaults] epochs = 10", "g.toml:12: [[sweep]] block 1 epochs = [5 7]"}
	if !slices.Equal(g.Search.Replaced, want) {
		t.Errorf("replaced %q, want %q", g.Search.Replaced, want)
	}
	if len(g.Runs) != 4 {
		t.Errorf("%d runs, want the 4 of one epochs value", len(g.Runs))
	}
	for _, r := range g.Runs {
		if r.Spec.Epochs != 18 {
			t.Errorf("run %s: epochs %d, want max_epochs 18", r.ID, r.Spec.Epochs)
		}
	}
}

func TestParseGridSearchErrors(t *testing.T) {
	for _, c := range []struct{ defaults, search, want string }{
		{"", `metric = "mrr"`, ""},
		{"", `metric = "hits@1"`, `g.toml:11: [search]: metric "hits@1"`},
		{"", "etta = 3", `g.toml:16: [search]: unknown key "etta"`},
		{"", `method = "hyperband"`, "toml"}, // a duplicate key: the TOML parser's error
		{"eval.every = 4", "", "g.toml:11: [search]: rung of 2 epochs is not a multiple of eval.every 4"},
		{"", "", ""},
	} {
		src := strings.Replace(strings.Replace(searchGrid, "%s", c.defaults, 1), "%s", c.search, 1)
		_, err := ParseGrid("g.toml", []byte(src), nil)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%q/%q: %v", c.defaults, c.search, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%q/%q: error %v, want %q", c.defaults, c.search, err, c.want)
		}
	}
	for _, c := range []struct{ section, want string }{
		{"[search]\nmin_epochs = 2\nmax_epochs = 4\neta = 2\n", "method is required"},
		{"[search]\nmethod = \"halving\"\nmin_epochs = 2\nmax_epochs = 4\neta = 1\n", "eta 1"},
		{"[search]\nmethod = \"halving\"\nmin_epochs = 5\nmax_epochs = 4\neta = 2\n", "min_epochs 5, max_epochs 4"},
		{"[search]\nmethod = \"halving\"\nmin_epochs = 0\nmax_epochs = 0\neta = 2\n", "min_epochs 0"},
	} {
		src := searchGrid[:strings.Index(searchGrid, "%s")] + c.section
		if _, err := ParseGrid("g.toml", []byte(src), nil); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.section, err, c.want)
		}
	}
}
