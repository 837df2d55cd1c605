package models

import (
	"fmt"
	"runtime"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gorgonia.org/tensor"
)

// gramTree draws rows x of an n×k table in proportion to (q·x)² for a
// query q, exactly and without scoring every row: a binary tree over
// blocks of consecutive rows holds each block's Gram matrix Σ xxᵀ, so the
// mass of a block, Σ_x (q·x)² = qᵀ(Σ xxᵀ)q, costs k² whatever the block's
// size. A draw descends from the root, going left when its target (a
// uniform point of the query's total mass, as in inverse-transform
// sampling) falls within the left block's mass, and scores only the rows
// of the leaf it reaches: log(n/leaf)·k² + leaf·k work instead of n·k.
//
// Memory: 16·n·k²/leaf bytes of Gram matrices; with leaf = 4k, as
// newGramTree picks, that is as much as the table in float32.
type gramTree struct {
	n, k  int
	table *tensor.Dense
	nodes []gramNode
}

type gramNode struct {
	lo, hi      int // rows lo..hi-1
	left, right int // child nodes; -1 at a leaf
	gram        []float64
}

// newGramTree builds the tree of a table (float32 or float64, n×k) with
// leaves of at most leaf rows (0: 4k).
func newGramTree(table *tensor.Dense, leaf int) (*gramTree, error) {
	sh := table.Shape()
	if len(sh) != 2 {
		return nil, fmt.Errorf("models: Gram tree of a %v table", sh)
	}
	t := &gramTree{n: sh[0], k: sh[1], table: table}
	if leaf <= 0 {
		leaf = max(4*t.k, 64)
	}
	var build func(lo, hi int) int
	build = func(lo, hi int) int {
		id := len(t.nodes)
		t.nodes = append(t.nodes, gramNode{lo: lo, hi: hi, left: -1, right: -1})
		if hi-lo <= leaf {
			t.nodes[id].gram = t.blockGram(lo, hi)
			return id
		}
		mid := lo + (hi-lo)/2
		l := build(lo, mid)
		r := build(mid, hi)
		g := make([]float64, t.k*t.k)
		for i := range g {
			g[i] = t.nodes[l].gram[i] + t.nodes[r].gram[i]
		}
		t.nodes[id].left, t.nodes[id].right, t.nodes[id].gram = l, r, g
		return id
	}
	build(0, t.n)
	return t, nil
}

// rows copies rows lo..hi-1 of the table into dst as float64.
func (t *gramTree) rows(lo, hi int, dst []float64) []float64 {
	dst = dst[:0]
	switch d := t.table.Data().(type) {
	case []float32:
		for _, v := range d[lo*t.k : hi*t.k] {
			dst = append(dst, float64(v))
		}
	case []float64:
		dst = append(dst, d[lo*t.k:hi*t.k]...)
	}
	return dst
}

// blockGram returns Σ xxᵀ over rows lo..hi-1, a full symmetric k×k matrix.
func (t *gramTree) blockGram(lo, hi int) []float64 {
	x := t.rows(lo, hi, nil)
	g := make([]float64, t.k*t.k)
	blas64.Implementation().Dsyrk(blas.Upper, blas.Trans, t.k, hi-lo, 1, x, t.k, 0, g, t.k)
	for i := 0; i < t.k; i++ {
		for j := 0; j < i; j++ {
			g[i*t.k+j] = g[j*t.k+i]
		}
	}
	return g
}

// root returns the Gram matrix of the whole table.
func (t *gramTree) root() []float64 { return t.nodes[0].gram }

// quadForms writes into dst[i] the quadratic form q_iᵀGq_i of each row of
// Q (m×k, row-major; G k×k), using p (at least m·k values) for Q·G: one
// matrix product for a batch of draws rather than a matrix-vector product
// per draw, which reads G once per batch and is one BLAS call, not m.
func quadForms(q []float64, m, k int, g, p, dst []float64) {
	if m == 0 {
		return
	}
	p = p[:m*k]
	blas64.Implementation().Dgemm(blas.NoTrans, blas.NoTrans, m, k, k, 1, q, k, g, k, 0, p, k)
	for i := range m {
		var s float64
		for c, v := range p[i*k : (i+1)*k] {
			s += v * q[i*k+c]
		}
		dst[i] = s
	}
}

// draw writes into out[i] the row whose cumulative mass (q_i·x)², in row
// order, first passes targets[i] ∈ [0, q_iᵀGq_i), for the m queries of Q
// (m×k, row-major); targets is overwritten.
// Draws are independent: GOMAXPROCS goroutines take a share each.
func (t *gramTree) draw(q []float64, targets []float64, out []int32) {
	n := len(targets)
	workers := max(1, min(runtime.GOMAXPROCS(0), n/256))
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := w*n/workers, (w+1)*n/workers
		wg.Add(1)
		go func() {
			defer wg.Done()
			idx := make([]int, hi-lo)
			for i := range idx {
				idx[i] = i
			}
			var buf treeBuffers
			t.descend(0, idx, q[lo*t.k:hi*t.k], targets[lo:hi], out[lo:hi], &buf)
		}()
	}
	wg.Wait()
}

type treeBuffers struct{ q, p, x, s []float64 }

func grow(b []float64, n int) []float64 {
	if cap(b) < n {
		return make([]float64, n)
	}
	return b[:n]
}

func (t *gramTree) descend(node int, idx []int, q, targets []float64, out []int32, buf *treeBuffers) {
	if len(idx) == 0 {
		return
	}
	k, nd := t.k, t.nodes[node]
	m := len(idx)
	buf.q = grow(buf.q, m*k)
	for j, i := range idx {
		copy(buf.q[j*k:(j+1)*k], q[i*k:(i+1)*k])
	}
	impl := blas64.Implementation()
	if nd.left < 0 {
		// Score the leaf's rows: S = Q Xᵀ (m × rows), then inverse transform.
		rows := nd.hi - nd.lo
		buf.x = t.rows(nd.lo, nd.hi, buf.x)
		buf.s = grow(buf.s, m*rows)
		impl.Dgemm(blas.NoTrans, blas.Trans, m, rows, k, 1, buf.q, k, buf.x, k, 0, buf.s, rows)
		for j, i := range idx {
			acc, last := 0.0, -1
			pick := -1
			for r, v := range buf.s[j*rows : (j+1)*rows] {
				w := v * v
				if w > 0 {
					last = r
				}
				acc += w
				if acc > targets[i] {
					pick = r
					break
				}
			}
			if pick < 0 { // rounding: the target passed the leaf's mass
				pick = max(last, 0)
			}
			out[i] = int32(nd.lo + pick)
		}
		return
	}
	// P = Q G_left; the left mass of query j is P_j·Q_j.
	buf.p = grow(buf.p, m*k)
	impl.Dgemm(blas.NoTrans, blas.NoTrans, m, k, k, 1, buf.q, k, t.nodes[nd.left].gram, k, 0, buf.p, k)
	var left, right []int
	for j, i := range idx {
		var mass float64
		for c := 0; c < k; c++ {
			mass += buf.p[j*k+c] * buf.q[j*k+c]
		}
		if targets[i] < mass {
			left = append(left, i)
		} else {
			targets[i] -= mass
			right = append(right, i)
		}
	}
	t.descend(nd.left, left, q, targets, out, buf)
	t.descend(nd.right, right, q, targets, out, buf)
}
