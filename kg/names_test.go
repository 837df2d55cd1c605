package kg

import (
	"errors"
	"reflect"
	"testing"
)

func TestVocabNear(t *testing.T) {
	v, err := NewVocab([]string{"cell", "cell_function", "cell_component", "Cello", "alga", "algae_x", "entity", "isa", "part_of"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		n    int
		want []string
	}{
		// Case-insensitive equality first, then prefixes (shorter first).
		{"cell", 3, []string{"cell", "Cello", "cell_function"}},
		{"CELL", 2, []string{"cell", "Cello"}},
		// A substring: "_comp" is in one name only.
		{"_comp", 3, []string{"cell_component"}},
		// Prefixes, the least longer first.
		{"alg", 3, []string{"alga", "algae_x"}},
		// Edit distance within max(2, len/3).
		{"enity", 3, []string{"entity"}},
		{"is_a", 3, []string{"isa"}},
		{"partof", 3, []string{"part_of"}},
		// Nothing close.
		{"zzzzzz", 3, nil},
		{"cell", 0, nil},
	} {
		if got := v.Near(c.name, c.n); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Near(%q, %d) = %q, want %q", c.name, c.n, got, c.want)
		}
	}
}

func TestVocabLookup(t *testing.T) {
	v, err := NewVocab([]string{"isa", "part_of", "location_of"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		id      int32
		wantErr string
	}{
		{"part_of", 1, ""},
		{"is_a", 0, `unknown relation "is_a"; did you mean "isa"?`},
		{"of", 0, `unknown relation "of"; did you mean "part_of", "location_of"?`},
		{"causes", 0, `unknown relation "causes"`},
		{"", 0, `unknown relation ""; did you mean "isa", "part_of", "location_of"?`},
	} {
		id, err := v.Lookup("relation", c.name)
		if c.wantErr == "" {
			if err != nil || id != c.id {
				t.Errorf("Lookup(%q) = %d, %v; want %d", c.name, id, err, c.id)
			}
			continue
		}
		var ne *NameError
		if err == nil || err.Error() != c.wantErr || !errors.As(err, &ne) || ne.Name != c.name {
			t.Errorf("Lookup(%q): error %v, want %s", c.name, err, c.wantErr)
		}
	}
}
