package kg

import "fmt"

// InVocabularyOf re-expresses d's triples in the entity and relation ids of
// other (matched by name), as when a model trained on other is tested on
// d: a surrogate graph's model on the real graph. A triple naming an entity
// or relation that other does not know is left out; Dropped counts them per
// split (train, valid, test). The result shares other's vocabularies and
// schema and has no negatives (d's, in d's ids, would not carry over).
func (d *Dataset) InVocabularyOf(other *Dataset) (*Dataset, [3]int) {
	out := &Dataset{Name: d.Name, Dir: d.Dir, Entities: other.Entities, Relations: other.Relations, Schema: other.Schema}
	// Each name is looked up once, not once per triple it is in.
	ents, rels := idsIn(d.Entities, other.Entities), idsIn(d.Relations, other.Relations)
	var dropped [3]int
	for i, split := range [3]*[]Triple{&d.Train, &d.Valid, &d.Test} {
		var mapped []Triple
		for _, t := range *split {
			s, r, o := ents[t.S], rels[t.R], ents[t.O]
			if s < 0 || r < 0 || o < 0 {
				dropped[i]++
				continue
			}
			mapped = append(mapped, Triple{S: s, R: r, O: o})
		}
		*[3]*[]Triple{&out.Train, &out.Valid, &out.Test}[i] = mapped
	}
	return out, dropped
}

// idsIn maps each id of from to the id of the same name in to, -1 when to
// lacks it.
func idsIn(from, to *Vocab) []int32 {
	ids := make([]int32, from.Len())
	for id := range ids {
		if j, ok := to.Index(from.Name(int32(id))); ok {
			ids[id] = j
		} else {
			ids[id] = -1
		}
	}
	return ids
}

// DroppedNote says what InVocabularyOf left out, "" when nothing.
func DroppedNote(d, other *Dataset, dropped [3]int) string {
	if dropped == [3]int{} {
		return ""
	}
	return fmt.Sprintf("%s in the vocabulary of %s: %d train, %d valid and %d test triples left out (they name an entity or relation %s lacks)",
		d.Name, other.Name, dropped[0], dropped[1], dropped[2], other.Name)
}
