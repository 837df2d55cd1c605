package editdist

import "testing"

func TestDistance(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"", "abc", 3},
		{"abc", "", 3},
		{"rank", "rank", 0},
		{"rnak", "rank", 2},
		{"learning_rat", "learning_rate", 1},
		{"kitten", "sitting", 3},
	} {
		if got := Distance(tt.a, tt.b); got != tt.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
		if got := Distance(tt.b, tt.a); got != tt.want {
			t.Errorf("Distance(%q, %q) = %d, want %d (symmetric)", tt.b, tt.a, got, tt.want)
		}
	}
}

func TestClosest(t *testing.T) {
	for _, c := range []struct{ s, want string }{{"swep", "sweep"}, {"analyse", "analyze"}, {"tabels", "tables"}, {"nothing", ""}, {"query", "query"}} {
		if got := Closest(c.s, []string{"sweep", "analyze", "tables", "query"}); got != c.want {
			t.Errorf("Closest(%q) = %q, want %q", c.s, got, c.want)
		}
	}
}
