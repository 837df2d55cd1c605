package kg

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestLoadPlain(t *testing.T) {
	dir := writeDataset(t, map[string]string{
		"train.txt.gz": "b\tr2\tc\na\tr1\tb\na\tr1\tb\n",
		"valid.txt":    "\ufeffc\tr1\td\r\n",
		"test.txt":     "a\tr3\te\n\n",
	})
	d, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := d.Entities.Names(), []string{"a", "b", "c", "d", "e"}; !reflect.DeepEqual(got, want) {
		t.Errorf("entities %q, want %q", got, want)
	}
	if got, want := d.Relations.Names(), []string{"r1", "r2", "r3"}; !reflect.DeepEqual(got, want) {
		t.Errorf("relations %q, want %q", got, want)
	}
	if want := []Triple{{1, 1, 2}, {0, 0, 1}, {0, 0, 1}}; !reflect.DeepEqual(d.Train, want) {
		t.Errorf("train %v, want %v", d.Train, want)
	}
	if want := []Triple{{2, 0, 3}}; !reflect.DeepEqual(d.Valid, want) {
		t.Errorf("valid %v, want %v", d.Valid, want)
	}
	if want := []Triple{{0, 2, 4}}; !reflect.DeepEqual(d.Test, want) {
		t.Errorf("test %v, want %v", d.Test, want)
	}
	if d.Schema != nil || d.Negatives != nil {
		t.Errorf("schema %v, negatives %v, want nil", d.Schema, d.Negatives)
	}
	if d.Name != filepath.Base(dir) || d.Dir != dir {
		t.Errorf("name %q, dir %q", d.Name, d.Dir)
	}
	st := d.Stats()
	if st.Train.Duplicates != 1 || st.Valid.UnseenEntities != 1 || st.Test.UnseenTriples != 1 {
		t.Errorf("stats %+v", st)
	}
}

// TestLoadDeterministic checks that ids depend on the names only, not on
// the order of lines or on which split a name first appears in.
func TestLoadDeterministic(t *testing.T) {
	a, err := Load(writeDataset(t, map[string]string{
		"train.txt": "x\tp\ty\ny\tq\tz\n", "valid.txt": "z\tp\tw\n", "test.txt": "",
	}))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Load(writeDataset(t, map[string]string{
		"train.txt": "y\tq\tz\nx\tp\ty\n", "valid.txt": "", "test.txt": "z\tp\tw\n",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a.Entities.Names(), b.Entities.Names()) || !reflect.DeepEqual(a.Relations.Names(), b.Relations.Names()) {
		t.Errorf("vocabularies differ: %q %q vs %q %q", a.Entities.Names(), a.Relations.Names(), b.Entities.Names(), b.Relations.Names())
	}
	if a.Valid[0] != b.Test[0] {
		t.Errorf("same triple, different ids: %v vs %v", a.Valid[0], b.Test[0])
	}
}

func TestLoadPlainErrors(t *testing.T) {
	ok := map[string]string{"train.txt": "a\tr\tb\n", "valid.txt": "a\tr\tb\n", "test.txt": "a\tr\tb\n"}
	with := func(changes map[string]string) map[string]string {
		m := make(map[string]string)
		for k, v := range ok {
			m[k] = v
		}
		for k, v := range changes {
			if v == "<delete>" {
				delete(m, k)
			} else {
				m[k] = v
			}
		}
		return m
	}
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  string // a substring of the error, after replacing DIR
	}{
		{"plain and gz", with(map[string]string{"valid.txt.gz": "a\tr\tb\n"}),
			"both DIR/valid.txt and DIR/valid.txt.gz exist"},
		{"no test", with(map[string]string{"test.txt": "<delete>"}), "DIR has no test.txt[.gz]"},
		{"empty train", with(map[string]string{"train.txt": "\n"}), "DIR/train.txt: no triples"},
		{"bad line in valid", with(map[string]string{"valid.txt": "a\tr\tb\na\tr\n"}),
			"DIR/valid.txt:2: expected 3 tab-separated fields, got 2"},
		{"bad line in gz test", with(map[string]string{"test.txt": "<delete>", "test.txt.gz": "a\t\tb\n"}),
			"DIR/test.txt.gz:1: empty relation (field 2)"},
		{"types without schema", with(map[string]string{"entity_types.tsv": "a\tT\n"}),
			"has entity_types.tsv but no relation_schema.tsv[.gz]"},
		{"schema without types", with(map[string]string{"relation_schema.tsv.gz": "h\n"}),
			"has relation_schema.tsv.gz but no entity_types.tsv[.gz]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeDataset(t, tc.files)
			_, err := Load(dir)
			want := strings.ReplaceAll(tc.want, "DIR", dir)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("got error %v, want one containing %q", err, want)
			}
		})
	}
}

func TestLoadMissingDir(t *testing.T) {
	if _, err := Load(filepath.Join(t.TempDir(), "nothing")); err == nil {
		t.Fatal("no error")
	}
}

func TestLoadSplitIsDirectory(t *testing.T) {
	dir := writeDataset(t, map[string]string{"valid.txt": "a\tr\tb\n", "test.txt": "a\tr\tb\n"})
	if err := os.Mkdir(filepath.Join(dir, "train.txt"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Fatalf("got %v", err)
	}
}

func TestTrainingSplit(t *testing.T) {
	root := t.TempDir()
	write := func(rel string) {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("plain/train.txt")
	write("gz/train.txt.gz")
	write("ogb/split/random/train.pt")
	write("other/results.tsv")
	for _, c := range []struct{ dir, want string }{
		{"plain", "train.txt"}, {"gz", "train.txt.gz"}, {"ogb", "train.pt"}, {"other", ""}, {"absent", ""},
	} {
		got, err := TrainingSplit(filepath.Join(root, c.dir))
		if err != nil || filepath.Base(got) != c.want && !(c.want == "" && got == "") {
			t.Errorf("%s: %q, %v; want %q", c.dir, got, err, c.want)
		}
	}
}
