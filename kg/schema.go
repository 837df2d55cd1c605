package kg

import "sync"

// A Schema gives every entity one type and every relation one subject type
// and one object type, the domain constraints of typed graphs such as
// Hetionet and ogbl-biokg. A generative model uses it to put no mass on
// triples the schema rules out.
//
// Treat a Schema as read-only once built: EntitiesOfType caches its answer.
type Schema struct {
	Types       *Vocab  // type names
	EntityType  []int32 // per entity id, its type id
	SubjectType []int32 // per relation id, the type of its subjects
	ObjectType  []int32 // per relation id, the type of its objects

	once   sync.Once
	byType [][]int32
}

// Consistent reports whether t's subject and object have the types its
// relation allows. Ids outside the schema are not consistent.
func (s *Schema) Consistent(t Triple) bool {
	if !inRange(t.S, len(s.EntityType)) || !inRange(t.O, len(s.EntityType)) ||
		!inRange(t.R, len(s.SubjectType)) || !inRange(t.R, len(s.ObjectType)) {
		return false
	}
	return s.EntityType[t.S] == s.SubjectType[t.R] && s.EntityType[t.O] == s.ObjectType[t.R]
}

// EntitiesOfType returns the ids of the entities of type t in increasing
// order, or nil if t is out of range. The slice is shared: do not modify it.
func (s *Schema) EntitiesOfType(t int32) []int32 {
	s.once.Do(func() {
		s.byType = make([][]int32, s.Types.Len())
		for e, et := range s.EntityType {
			if inRange(et, len(s.byType)) {
				s.byType[et] = append(s.byType[et], int32(e))
			}
		}
	})
	if !inRange(t, len(s.byType)) {
		return nil
	}
	return s.byType[t]
}

func inRange(id int32, n int) bool { return id >= 0 && int(id) < n }
