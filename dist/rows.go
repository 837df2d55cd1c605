package dist

import "fmt"

// Rows splits n rows into p contiguous blocks, the first n mod p of them
// one row longer: process q owns rows [Lo(q), Hi(q)). Contiguous blocks
// keep each owner's rows in order, so a sorted list of rows is grouped by
// owner in rank order, and resharding to another p is a copy of ranges.
type Rows struct{ N, P int }

// NewRows checks that every one of p processes gets at least one of n rows.
func NewRows(n, p int) (Rows, error) {
	if p < 1 || n < p {
		return Rows{}, fmt.Errorf("dist: %d rows cannot be split over %d processes (each needs one)", n, p)
	}
	return Rows{N: n, P: p}, nil
}

// Lo is the first row of process q.
func (r Rows) Lo(q int) int { return q*(r.N/r.P) + min(q, r.N%r.P) }

// Hi is one past the last row of process q.
func (r Rows) Hi(q int) int { return r.Lo(q + 1) }

// Owner is the process that owns row e.
func (r Rows) Owner(e int) int {
	size, extra := r.N/r.P, r.N%r.P
	if e < extra*(size+1) {
		return e / (size + 1)
	}
	return extra + (e-extra*(size+1))/size
}
