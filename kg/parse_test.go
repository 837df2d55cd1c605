package kg

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// namedTriples spells out triples by name, which makes expectations
// independent of id assignment.
func namedTriples(tf *TripleFile) [][3]string {
	var out [][3]string
	for _, t := range tf.Triples {
		out = append(out, [3]string{tf.Entities.Name(t.S), tf.Relations.Name(t.R), tf.Entities.Name(t.O)})
	}
	return out
}

func TestParseTriples(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     [][3]string
	}{
		{"empty", "", nil},
		{"only empty lines", "\n\n\r\n", nil},
		{"one", "a\tr\tb\n", [][3]string{{"a", "r", "b"}}},
		{"no final newline", "a\tr\tb\nc\tr\td", [][3]string{{"a", "r", "b"}, {"c", "r", "d"}}},
		{"CRLF", "a\tr\tb\r\nc\tr\td\r\n", [][3]string{{"a", "r", "b"}, {"c", "r", "d"}}},
		{"CR without LF at end", "a\tr\tb\r", [][3]string{{"a", "r", "b"}}},
		{"only one CR stripped", "a\tr\tb\r\r\n", [][3]string{{"a", "r", "b\r"}}},
		{"BOM", "\ufeffa\tr\tb\n", [][3]string{{"a", "r", "b"}}},
		{"BOM only at start", "a\tr\tb\n\ufeffc\tr\td\n", [][3]string{{"a", "r", "b"}, {"\ufeffc", "r", "d"}}},
		{"spaces inside names", "Side Effect::C1\tcauses it\tBiological Process::GO:1\n",
			[][3]string{{"Side Effect::C1", "causes it", "Biological Process::GO:1"}}},
		{"spaces around names are kept", " a \tr\tb \n", [][3]string{{" a ", "r", "b "}}},
		{"trailing empty lines", "a\tr\tb\n\n\n", [][3]string{{"a", "r", "b"}}},
		{"trailing CRLF empty lines", "a\tr\tb\r\n\r\n", [][3]string{{"a", "r", "b"}}},
		{"duplicates kept", "a\tr\tb\na\tr\tb\n", [][3]string{{"a", "r", "b"}, {"a", "r", "b"}}},
		{"self loop", "a\tr\ta\n", [][3]string{{"a", "r", "a"}}},
		{"relation named like an entity", "a\ta\tb\n", [][3]string{{"a", "a", "b"}}},
		{"Gr>G", "Gene::1\tGr>G\tGene::2\n", [][3]string{{"Gene::1", "Gr>G", "Gene::2"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tf, err := ParseTriples(strings.NewReader(tc.in), "in.txt")
			if err != nil {
				t.Fatal(err)
			}
			if got := namedTriples(tf); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestParseTriplesErrors(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"two fields", "a\tr\tb\nc\td\n", "train.txt:2: expected 3 tab-separated fields, got 2"},
		{"four fields", "a\tr\tb\tc\n", "train.txt:1: expected 3 tab-separated fields, got 4"},
		{"trailing tab", "a\tr\tb\t\n", "train.txt:1: expected 3 tab-separated fields, got 4"},
		{"spaces are not separators", "a r b\n", "train.txt:1: expected 3 tab-separated fields, got 1"},
		{"empty subject", "\tr\tb\n", "train.txt:1: empty subject (field 1)"},
		{"empty relation", "a\t\tb\n", "train.txt:1: empty relation (field 2)"},
		{"empty object", "a\tr\t\n", "train.txt:1: empty object (field 3)"},
		{"empty object before CR", "a\tr\t\r\n", "train.txt:1: empty object (field 3)"},
		{"empty line inside", "a\tr\tb\n\nc\tr\td\n", "train.txt:2: empty line before more data on line 3"},
		{"empty lines at start", "\n\na\tr\tb\n", "train.txt:1: empty line before more data on line 3"},
		{"whitespace line at end", "a\tr\tb\n \n", "train.txt:2: expected 3 tab-separated fields, got 1"},
		{"too long", "a\tr\t" + strings.Repeat("b", maxLine) + "\n", "train.txt:1: line longer than 1048576 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseTriples(strings.NewReader(tc.in), "train.txt")
			if err == nil || err.Error() != tc.want {
				t.Fatalf("got error %v, want %q", err, tc.want)
			}
			var le *LineError
			if !errors.As(err, &le) {
				t.Errorf("error %T is not a *LineError", err)
			}
		})
	}
}

func TestParseTriplesSortsVocabularies(t *testing.T) {
	tf, err := ParseTriples(strings.NewReader("b\ty\tc\na\tx\tb\n"), "in")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := tf.Entities.Names(), []string{"a", "b", "c"}; !reflect.DeepEqual(got, want) {
		t.Errorf("entities %q, want %q", got, want)
	}
	if got, want := tf.Relations.Names(), []string{"x", "y"}; !reflect.DeepEqual(got, want) {
		t.Errorf("relations %q, want %q", got, want)
	}
	if want := []Triple{{1, 1, 2}, {0, 0, 1}}; !reflect.DeepEqual(tf.Triples, want) {
		t.Errorf("triples %v, want %v", tf.Triples, want)
	}
}

func TestReadTriplesFile(t *testing.T) {
	dir := t.TempDir()
	const content = "a\tr\tb\nb\tr\tc\n"
	plain := filepath.Join(dir, "x.txt")
	writeFile(t, plain, content)
	gz := filepath.Join(dir, "y.txt.gz")
	writeFile(t, gz, content)
	for _, path := range []string{plain, gz} {
		tf, err := ReadTriplesFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(tf.Triples) != 2 || tf.Name != path {
			t.Errorf("%s: %d triples named %q", path, len(tf.Triples), tf.Name)
		}
	}

	corrupt := filepath.Join(dir, "corrupt.txt.gz")
	if err := os.WriteFile(corrupt, []byte("not gzip"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadTriplesFile(corrupt); err == nil || !strings.Contains(err.Error(), corrupt) {
		t.Errorf("corrupt gzip: error %v does not name the file", err)
	}
	if _, err := ReadTriplesFile(filepath.Join(dir, "missing.txt")); err == nil {
		t.Error("missing file: no error")
	}
}
