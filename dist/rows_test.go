package dist

import "testing"

func TestRowsCoverInOrder(t *testing.T) {
	for _, c := range []struct{ n, p int }{{1, 1}, {7, 1}, {7, 2}, {7, 3}, {10, 4}, {5, 5}, {1000, 7}} {
		r, err := NewRows(c.n, c.p)
		if err != nil {
			t.Fatal(err)
		}
		next := 0
		for q := 0; q < c.p; q++ {
			lo, hi := r.Lo(q), r.Hi(q)
			if lo != next || hi <= lo {
				t.Fatalf("n=%d p=%d: process %d owns [%d,%d), want it to start at %d and be non-empty", c.n, c.p, q, lo, hi, next)
			}
			if d := (hi - lo) - c.n/c.p; d != 0 && d != 1 {
				t.Fatalf("n=%d p=%d: process %d owns %d rows", c.n, c.p, q, hi-lo)
			}
			for e := lo; e < hi; e++ {
				if o := r.Owner(e); o != q {
					t.Fatalf("n=%d p=%d: Owner(%d) = %d, want %d", c.n, c.p, e, o, q)
				}
			}
			next = hi
		}
		if next != c.n {
			t.Fatalf("n=%d p=%d: blocks end at %d", c.n, c.p, next)
		}
	}
}

func TestRowsRefuseEmptyShards(t *testing.T) {
	for _, c := range []struct{ n, p int }{{2, 3}, {0, 1}, {5, 0}} {
		if _, err := NewRows(c.n, c.p); err == nil {
			t.Errorf("NewRows(%d, %d) accepted", c.n, c.p)
		}
	}
}
