package kg

import (
	"sort"
	"strconv"
	"strings"

	"gekc/internal/editdist"
)

// A NameError reports a name that is not in a vocabulary, with the
// vocabulary's names closest to it: most unknown names are misspelt.
type NameError struct {
	Kind string   // what the vocabulary names, e.g. "entity" or "relation"
	Name string   // the unknown name
	Near []string // close names of the vocabulary, closest first; may be empty
}

// Error reads `unknown entity "algae"; did you mean "alga"?`.
func (e *NameError) Error() string {
	msg := "unknown " + e.Kind + " " + strconv.Quote(e.Name)
	if len(e.Near) > 0 {
		quoted := make([]string, len(e.Near))
		for i, n := range e.Near {
			quoted[i] = strconv.Quote(n)
		}
		msg += "; did you mean " + strings.Join(quoted, ", ") + "?"
	}
	return msg
}

// Lookup returns the id of name, or a *NameError that calls it a kind
// ("entity", "relation") and suggests up to three of the names Near it.
func (v *Vocab) Lookup(kind, name string) (int32, error) {
	if id, ok := v.Index(name); ok {
		return id, nil
	}
	return 0, &NameError{Kind: kind, Name: name, Near: v.Near(name, 3)}
}

// Near returns up to n names of v close to name, best first: the names
// equal to it but for case, then those it is a case-insensitive prefix of,
// then those it is a substring of (shorter first within each), then those
// within an edit distance of a third of its length, at least 2 (closer
// first). Ties go in byte order.
func (v *Vocab) Near(name string, n int) []string {
	type cand struct {
		name  string
		class int
		dist  int
	}
	lower := strings.ToLower(name)
	limit := max(2, len([]rune(name))/3)
	var cs []cand
	for id := range int32(v.Len()) {
		c := v.Name(id)
		lc := strings.ToLower(c)
		switch {
		case lc == lower:
			cs = append(cs, cand{c, 0, 0})
		case strings.HasPrefix(lc, lower):
			cs = append(cs, cand{c, 1, len(c) - len(name)})
		case strings.Contains(lc, lower):
			cs = append(cs, cand{c, 2, len(c) - len(name)})
		default:
			if d := editdist.Distance(lower, lc); d <= limit {
				cs = append(cs, cand{c, 3, d})
			}
		}
	}
	sort.SliceStable(cs, func(i, j int) bool {
		if cs[i].class != cs[j].class {
			return cs[i].class < cs[j].class
		}
		if cs[i].dist != cs[j].dist {
			return cs[i].dist < cs[j].dist
		}
		return cs[i].name < cs[j].name
	})
	var out []string
	for _, c := range cs[:max(0, min(n, len(cs)))] {
		out = append(out, c.name)
	}
	return out
}
