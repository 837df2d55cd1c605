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
	var dropped [3]int
	for i, split := range [3]*[]Triple{&d.Train, &d.Valid, &d.Test} {
		var mapped []Triple
		for _, t := range *split {
			s, okS := other.Entities.Index(d.Entities.Name(t.S))
			r, okR := other.Relations.Index(d.Relations.Name(t.R))
			o, okO := other.Entities.Index(d.Entities.Name(t.O))
			if !okS || !okR || !okO {
				dropped[i]++
				continue
			}
			mapped = append(mapped, Triple{S: s, R: r, O: o})
		}
		*[3]*[]Triple{&out.Train, &out.Valid, &out.Test}[i] = mapped
	}
	return out, dropped
}

// DroppedNote says what InVocabularyOf left out, "" when nothing.
func DroppedNote(d, other *Dataset, dropped [3]int) string {
	if dropped == [3]int{} {
		return ""
	}
	return fmt.Sprintf("%s in the vocabulary of %s: %d train, %d valid and %d test triples left out (they name an entity or relation %s lacks)",
		d.Name, other.Name, dropped[0], dropped[1], dropped[2], other.Name)
}
