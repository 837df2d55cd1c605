package kg

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
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

// Index finds every name and only them, whether ids follow byte order (the
// text layout's) or not (OGB's numbered names), checked against a map.
func TestVocabIndexAgainstMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, sorted := range []bool{true, false} {
		var names []string
		seen := map[string]bool{}
		for len(names) < 2000 {
			n := strconv.Itoa(rng.IntN(5000)) // "10" before "9" in byte order
			if rng.IntN(3) == 0 {
				n += "/x é"
			}
			if !seen[n] {
				seen[n] = true
				names = append(names, n)
			}
		}
		if sorted {
			slices.Sort(names)
		}
		v, err := NewVocab(names)
		if err != nil {
			t.Fatal(err)
		}
		if (v.order == nil) != sorted {
			t.Errorf("sorted %v: order array present %v", sorted, v.order != nil)
		}
		want := map[string]int32{}
		for i, n := range names {
			want[n] = int32(i)
			if got := v.Name(int32(i)); got != n {
				t.Fatalf("Name(%d) = %q, want %q", i, got, n)
			}
		}
		for _, probe := range append(slices.Clone(names), "", "0", "99999", "1/x", "zz", "1/x é!") {
			id, ok := v.Index(probe)
			wid, wok := want[probe]
			if ok != wok || ok && id != wid {
				t.Errorf("sorted %v: Index(%q) = %d, %v; want %d, %v", sorted, probe, id, ok, wid, wok)
			}
		}
		if got, want := v.Bytes(), int64(len(strings.Join(names, "")))+4*int64(len(names)+len(v.order)); got != want {
			t.Errorf("Bytes %d, want %d (names once, 4 bytes an id, 4 more unsorted)", got, want)
		}
	}
}

// Of several repeated names, the error names the one a reader in order
// meets first repeated, at its two positions, as a map-building reader did.
func TestVocabReportsFirstRepeat(t *testing.T) {
	for _, c := range []struct {
		names []string
		want  string
	}{
		{[]string{"z", "b", "z", "b"}, `name "z" at positions 0 and 2`},
		{[]string{"z", "b", "b", "z"}, `name "b" at positions 1 and 2`},
		{[]string{"a", "b", "b"}, `name "b" at positions 1 and 2`}, // sorted input
		{[]string{"c", "a", "c", "c"}, `name "c" at positions 0 and 2`},
	} {
		if _, err := NewVocab(c.names); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("NewVocab(%q): %v, want %q", c.names, err, c.want)
		}
	}
}
