package kg

import (
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
)

// Stats describes a Dataset, as researchers report it.
type Stats struct {
	Entities, Relations int
	Types               int // 0 without a Schema
	Train, Valid, Test  SplitStats
}

// SplitStats describes one split.
type SplitStats struct {
	Triples    int
	Duplicates int // triples that repeat an earlier triple of the split
	Entities   int // distinct entities in the split
	Relations  int // distinct relations in the split
	// For valid and test: triples also in train, a leak for evaluation;
	// entities absent from train, which no model can have learned; and the
	// triples that hold such an entity.
	InTrain        int
	UnseenEntities int
	UnseenTriples  int
}

// Stats counts what Stats documents. It sorts a copy of each split, so it
// takes about a second for five million triples.
func (d *Dataset) Stats() Stats {
	st := Stats{Entities: d.Entities.Len(), Relations: d.Relations.Len()}
	if d.Schema != nil {
		st.Types = d.Schema.Types.Len()
	}
	inTrain := make([]bool, d.Entities.Len())
	for _, t := range d.Train {
		inTrain[t.S], inTrain[t.O] = true, true
	}
	train := sortedTriples(d.Train)
	st.Train = splitStats(d.Train, train, nil, nil, d.Entities.Len(), d.Relations.Len())
	st.Valid = splitStats(d.Valid, nil, train, inTrain, d.Entities.Len(), d.Relations.Len())
	st.Test = splitStats(d.Test, nil, train, inTrain, d.Entities.Len(), d.Relations.Len())
	return st
}

func sortedTriples(ts []Triple) []Triple {
	s := slices.Clone(ts)
	slices.SortFunc(s, compareTriples)
	return s
}

// splitStats describes ts. sorted is ts sorted, or nil to sort here; train
// is the sorted train split and inTrain its entities, both nil for train.
func splitStats(ts, sorted, train []Triple, inTrain []bool, numEntities, numRelations int) SplitStats {
	if sorted == nil {
		sorted = sortedTriples(ts)
	}
	st := SplitStats{Triples: len(ts)}
	for i := 1; i < len(sorted); i++ {
		if sorted[i] == sorted[i-1] {
			st.Duplicates++
		}
	}
	ents := make([]bool, numEntities)
	rels := make([]bool, numRelations)
	unseen := make([]bool, numEntities)
	for _, t := range ts {
		for _, e := range [2]int32{t.S, t.O} {
			if !ents[e] {
				ents[e] = true
				st.Entities++
			}
			if inTrain != nil && !inTrain[e] && !unseen[e] {
				unseen[e] = true
				st.UnseenEntities++
			}
		}
		if !rels[t.R] {
			rels[t.R] = true
			st.Relations++
		}
		if inTrain != nil && (!inTrain[t.S] || !inTrain[t.O]) {
			st.UnseenTriples++
		}
		if train != nil {
			if _, found := slices.BinarySearchFunc(train, t, compareTriples); found {
				st.InTrain++
			}
		}
	}
	return st
}

// String formats s as a small table.
func (s Stats) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d entities, %d relations", s.Entities, s.Relations)
	if s.Types > 0 {
		fmt.Fprintf(&b, ", %d entity types", s.Types)
	}
	b.WriteString("\n")
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "split\ttriples\tduplicates\tentities\trelations\tin train\tunseen entities\tunseen triples\t")
	for _, row := range []struct {
		name string
		st   SplitStats
	}{{"train", s.Train}, {"valid", s.Valid}, {"test", s.Test}} {
		if row.name == "train" {
			fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%d\t-\t-\t-\t\n", row.name, row.st.Triples, row.st.Duplicates, row.st.Entities, row.st.Relations)
			continue
		}
		fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t\n", row.name, row.st.Triples, row.st.Duplicates,
			row.st.Entities, row.st.Relations, row.st.InTrain, row.st.UnseenEntities, row.st.UnseenTriples)
	}
	w.Flush()
	return b.String()
}

// String returns a one-line summary; Stats has the details.
func (d *Dataset) String() string {
	s := fmt.Sprintf("%s: %d entities, %d relations, %d/%d/%d train/valid/test triples",
		d.Name, d.Entities.Len(), d.Relations.Len(), len(d.Train), len(d.Valid), len(d.Test))
	if d.Schema != nil {
		s += fmt.Sprintf(", %d entity types", d.Schema.Types.Len())
	}
	return s
}

// Unseen counts what the valid and test splits mention that the train split
// does not. Such entities and relations still get ids (the splits share one
// vocabulary), but no model trains their embeddings, so they are worth a
// note when a data set is loaded.
//
// It also counts the entities train has in one role only. A model with a
// table per role (CP: a subject row and an object row per entity) trains
// the row of the missing role on no data term, only through its
// normaliser, so valid and test triples that put such an entity in that
// role (RoleTriples) are scored by an untrained row.
type Unseen struct {
	Triples   int // valid and test triples with an unseen entity or relation
	Entities  int // distinct entities of valid and test absent from train
	Relations int // distinct relations of valid and test absent from train

	// Entities of train that are never a subject there, and never an
	// object.
	NeverSubject, NeverObject int
	// RoleTriples are the valid and test triples of entities all in train
	// whose subject is never a subject there or whose object is never an
	// object.
	RoleTriples int
}

// TrainRoles reports, for each entity id, whether the train split has it
// as a subject and whether as an object.
func (d *Dataset) TrainRoles() (asSubject, asObject []bool) {
	asSubject = make([]bool, d.Entities.Len())
	asObject = make([]bool, d.Entities.Len())
	for _, t := range d.Train {
		asSubject[t.S], asObject[t.O] = true, true
	}
	return asSubject, asObject
}

// Unseen counts what Unseen documents, in one pass over the splits.
func (d *Dataset) Unseen() Unseen {
	asSubject, asObject := d.TrainRoles()
	relInTrain := make([]bool, d.Relations.Len())
	for _, t := range d.Train {
		relInTrain[t.R] = true
	}
	inTrain := func(e int32) bool { return asSubject[e] || asObject[e] }
	var u Unseen
	for e := range asSubject {
		if asObject[e] && !asSubject[e] {
			u.NeverSubject++
		}
		if asSubject[e] && !asObject[e] {
			u.NeverObject++
		}
	}
	entCounted := make([]bool, d.Entities.Len())
	relCounted := make([]bool, d.Relations.Len())
	for _, ts := range [2][]Triple{d.Valid, d.Test} {
		for _, t := range ts {
			unseen := false
			for _, e := range [2]int32{t.S, t.O} {
				if !inTrain(e) {
					unseen = true
					if !entCounted[e] {
						entCounted[e] = true
						u.Entities++
					}
				}
			}
			if !relInTrain[t.R] {
				unseen = true
				if !relCounted[t.R] {
					relCounted[t.R] = true
					u.Relations++
				}
			}
			if unseen {
				u.Triples++
			}
			if inTrain(t.S) && inTrain(t.O) && (!asSubject[t.S] || !asObject[t.O]) {
				u.RoleTriples++
			}
		}
	}
	return u
}

// String is the one-line note, e.g. "2 valid/test triples mention 1
// entities and 0 relations absent from training"; "" when nothing is
// unseen.
func (u Unseen) String() string {
	if u.Triples == 0 {
		return ""
	}
	return fmt.Sprintf("%d valid/test triples mention %d entities and %d relations absent from training (they are in the vocabulary but never trained)",
		u.Triples, u.Entities, u.Relations)
}

// RoleString is the one-line note on entities train has in one role only,
// e.g. "12 valid/test triples of entities in training put one in a role it
// never has there (3 entities are never a subject in training, 40 never an
// object)"; "" when there are none.
func (u Unseen) RoleString() string {
	if u.RoleTriples == 0 {
		return ""
	}
	return fmt.Sprintf("%d valid/test triples of entities in training put one in a role it never has there (%d entities are never a subject in training, %d never an object)",
		u.RoleTriples, u.NeverSubject, u.NeverObject)
}
