package kg

import (
	"reflect"
	"strings"
	"testing"
)

func TestVocab(t *testing.T) {
	v, err := NewVocab([]string{"b", "a", "c"})
	if err != nil {
		t.Fatal(err)
	}
	if v.Len() != 3 || v.Name(0) != "b" {
		t.Errorf("Len %d, Name(0) %q", v.Len(), v.Name(0))
	}
	if id, ok := v.Index("c"); !ok || id != 2 {
		t.Errorf("Index(c) = %d, %v", id, ok)
	}
	if _, ok := v.Index("d"); ok {
		t.Error("Index(d) found")
	}
	names := v.Names()
	names[0] = "changed"
	if v.Name(0) != "b" {
		t.Error("Names shares storage")
	}
}

func TestVocabErrors(t *testing.T) {
	for _, tc := range []struct {
		names []string
		want  string
	}{
		{[]string{"a", "b", "a"}, `name "a" at positions 0 and 2`},
		{[]string{"a", ""}, "empty name at position 1"},
	} {
		if _, err := NewVocab(tc.names); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewVocab(%q): error %v, want %q", tc.names, err, tc.want)
		}
	}
	if _, err := SortedVocab([]string{"a", ""}); err == nil {
		t.Error("SortedVocab accepted an empty name")
	}
}

func TestSortedVocab(t *testing.T) {
	v, err := SortedVocab([]string{"b", "B", "a", "b", "é", "z"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := v.Names(), []string{"B", "a", "b", "z", "é"}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q (byte order, repeats merged)", got, want)
	}
}
