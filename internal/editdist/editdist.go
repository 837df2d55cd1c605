// Package editdist measures how far apart two names are, to suggest the
// name a user probably meant.
package editdist

// Distance is the Levenshtein distance between a and b, in bytes: the
// fewest insertions, deletions and substitutions that turn a into b.
func Distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// Closest returns the candidate nearest to s by Distance, if one is
// within two edits; "" otherwise. The first of equally near ones wins.
func Closest(s string, candidates []string) string {
	best, bestDist := "", 3
	for _, c := range candidates {
		if d := Distance(s, c); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}
