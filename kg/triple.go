package kg

// A Triple is one fact (subject, relation, object) as ids into a Dataset's
// Entities and Relations vocabularies.
//
// int32 ids keep a triple at 12 bytes, which matters at ogbl-biokg's five
// million triples, and cover every public benchmark with room to spare.
type Triple struct {
	S, R, O int32
}

// compareTriples orders triples by subject, then relation, then object.
func compareTriples(a, b Triple) int {
	switch {
	case a.S != b.S:
		return cmpInt32(a.S, b.S)
	case a.R != b.R:
		return cmpInt32(a.R, b.R)
	default:
		return cmpInt32(a.O, b.O)
	}
}

func cmpInt32(a, b int32) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
