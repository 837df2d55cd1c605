package kg

import (
	"reflect"
	"testing"
)

// A data set moved into another's vocabulary keeps exactly the triples
// whose three names the other knows, now in the other's ids.
func TestInVocabularyOf(t *testing.T) {
	vocab := func(names ...string) *Vocab {
		v, err := NewVocab(names)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	real := &Dataset{Name: "real", Entities: vocab("a", "b", "c", "z"), Relations: vocab("likes", "owns"),
		Train: []Triple{{0, 0, 1}, {3, 0, 0}}, // the second names z
		Valid: []Triple{{1, 1, 2}},
		Test:  []Triple{{2, 0, 0}, {0, 1, 3}, {1, 0, 2}}} // the second names z
	surrogate := &Dataset{Name: "surrogate", Entities: vocab("a", "b", "c", "d"), Relations: vocab("knows", "likes", "owns")}
	got, dropped := real.InVocabularyOf(surrogate)
	// a, b, c keep ids 0, 1, 2; likes is 1 and owns 2 in the surrogate.
	want := [3][]Triple{{{0, 1, 1}}, {{1, 2, 2}}, {{2, 1, 0}, {1, 1, 2}}}
	for i, split := range [3][]Triple{got.Train, got.Valid, got.Test} {
		if !reflect.DeepEqual(split, want[i]) {
			t.Errorf("split %d = %v, want %v", i, split, want[i])
		}
	}
	if dropped != [3]int{1, 0, 1} {
		t.Errorf("dropped %v, want [1 0 1]", dropped)
	}
	if got.Entities != surrogate.Entities || got.Relations != surrogate.Relations {
		t.Error("the mapped data set does not share the target's vocabularies")
	}
	if note := DroppedNote(real, surrogate, dropped); note == "" {
		t.Error("no note for dropped triples")
	}
	if note := DroppedNote(real, surrogate, [3]int{}); note != "" {
		t.Errorf("a note with nothing dropped: %q", note)
	}
}
