package tsne

import (
	"cmp"
	"container/heap"
	"math"
	"runtime"
	"slices"
	"sync"

	"gonum.org/v1/gonum/mat"
)

// The Barnes–Hut approximation (van der Maaten, 2014), as scikit-learn's
// method="barnes_hut": affinities only between each point and its
// ⌊3·perplexity + 1⌋ nearest neighbours, and the repulsion of a far cell
// of a quadtree over the embedding taken at its centre of mass. A step
// costs O(n log n), so tens of thousands of points embed in minutes.

// sparseP is the symmetric joint affinity matrix in compressed rows: row
// i's neighbours are col[start[i]:start[i+1]] with values val[...].
type sparseP struct {
	start []int
	col   []int32
	val   []float64
}

// neighbourCount is scikit-learn's: ⌊3·perplexity + 1⌋, at most n − 1.
func neighbourCount(n int, perplexity float64) int {
	return min(n-1, int(3*perplexity+1))
}

// nearestNeighbours returns, for each row of x, the indices and squared
// Euclidean distances of its k nearest other rows (nearest first; ties by
// index), chosen by blocks of the Gram matrix, never all n² distances at
// once.
func nearestNeighbours(x *mat.Dense, k int) (idx []int32, dist []float64) {
	n, dim := x.Dims()
	norms := make([]float64, n)
	for i := range n {
		r := x.RawRowView(i)
		for _, v := range r {
			norms[i] += v * v
		}
	}
	idx, dist = make([]int32, n*k), make([]float64, n*k)
	const block = 256
	// A block's products (256 × n) are the only large scratch, kept from
	// block to block; rows are shared among workers, each with its own heap.
	workers := max(1, runtime.GOMAXPROCS(0))
	buf := make([]float64, min(n, block)*n)
	for lo := 0; lo < n; lo += block {
		hi := min(n, lo+block)
		g := mat.NewDense(hi-lo, n, buf[:(hi-lo)*n])
		g.Mul(x.Slice(lo, hi, 0, dim), x.T())
		var wg sync.WaitGroup
		rows := make(chan int)
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				h := &maxHeap{}
				for i := range rows {
					gi := g.RawRowView(i - lo)
					h.items = h.items[:0]
					for j := range n {
						if j == i {
							continue
						}
						d := math.Max(norms[i]+norms[j]-2*gi[j], 0)
						if len(h.items) < k {
							heap.Push(h, neighbour{d, int32(j)})
						} else if top := h.items[0]; d < top.d || (d == top.d && int32(j) < top.j) {
							h.items[0] = neighbour{d, int32(j)}
							heap.Fix(h, 0)
						}
					}
					// |x_i|² + |x_j|² − 2x_i·x_j loses what the norms share
					// (equal points come out 10⁻¹³ apart): the chosen ones
					// that near are summed again from their differences.
					xi := x.RawRowView(i)
					for m, nb := range h.items {
						if nb.d > 1e-6*(norms[i]+norms[nb.j]) {
							continue
						}
						var d float64
						for c, v := range x.RawRowView(int(nb.j)) {
							d += (xi[c] - v) * (xi[c] - v)
						}
						h.items[m].d = d
					}
					slices.SortFunc(h.items, func(a, b neighbour) int {
						return cmp.Or(cmp.Compare(a.d, b.d), cmp.Compare(a.j, b.j))
					})
					for m, nb := range h.items {
						idx[i*k+m], dist[i*k+m] = nb.j, nb.d
					}
				}
			}()
		}
		for i := lo; i < hi; i++ {
			rows <- i
		}
		close(rows)
		wg.Wait()
	}
	return idx, dist
}

type neighbour struct {
	d float64
	j int32
}

// maxHeap keeps the k nearest found so far, the farthest on top.
type maxHeap struct{ items []neighbour }

func (h *maxHeap) Len() int { return len(h.items) }
func (h *maxHeap) Less(a, b int) bool {
	x, y := h.items[a], h.items[b]
	return x.d > y.d || (x.d == y.d && x.j > y.j)
}
func (h *maxHeap) Swap(a, b int) { h.items[a], h.items[b] = h.items[b], h.items[a] }
func (h *maxHeap) Push(v any)    { h.items = append(h.items, v.(neighbour)) }
func (h *maxHeap) Pop() any {
	v := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return v
}

// sparseAffinities returns the joint affinities of the points x over their
// k nearest neighbours: each conditional p_·|i a Gaussian over i's
// neighbours of entropy log(perplexity), then p_ij = (p_j|i + p_i|j) / 2n,
// as the exact affinities are but zero beyond the neighbours.
func sparseAffinities(x *mat.Dense, perplexity float64) sparseP {
	n, _ := x.Dims()
	k := neighbourCount(n, perplexity)
	idx, dist := nearestNeighbours(x, k)
	cond := make([]float64, n*k)
	for i := range n {
		conditional(dist[i*k:(i+1)*k], -1, perplexity, cond[i*k:(i+1)*k])
	}
	// Each (i, j) and its mirror (j, i), then merged row by row.
	type entry struct {
		i, j int32
		v    float64
	}
	entries := make([]entry, 0, 2*n*k)
	for i := range n {
		for m := range k {
			j, v := idx[i*k+m], cond[i*k+m]/float64(2*n)
			entries = append(entries, entry{int32(i), j, v}, entry{j, int32(i), v})
		}
	}
	slices.SortFunc(entries, func(a, b entry) int { return cmp.Or(cmp.Compare(a.i, b.i), cmp.Compare(a.j, b.j)) })
	p := sparseP{start: make([]int, n+1)}
	for e, en := range entries {
		if e > 0 && en.i == entries[e-1].i && en.j == entries[e-1].j {
			p.val[len(p.val)-1] += en.v
			continue
		}
		p.col = append(p.col, en.j)
		p.val = append(p.val, en.v)
		p.start[en.i+1] = len(p.col)
	}
	for i := 1; i <= n; i++ { // rows without entries (none but for k = 0)
		p.start[i] = max(p.start[i], p.start[i-1])
	}
	return p
}

// quadtree is a region quadtree over the embedding: node 0 is the root;
// a leaf holds perm[lo:hi], one point or points that coincide (or are too
// close to split further).
type quadtree struct {
	nodes []quadNode
	perm  []int32
	pos   []int32 // pos[i]: where point i is in perm
}

type quadNode struct {
	cx, cy, half float64 // the square cell: centre and half its width
	mx, my       float64 // centre of mass of its points
	count        int
	lo, hi       int32
	child        [4]int32 // -1 where a quadrant is empty; all -1 in a leaf
	coincident   bool     // a leaf whose points are all at (mx, my)
}

// maxDepth bounds the tree where points nearly coincide: past it a leaf
// holds all of them, and they are summed exactly.
const maxDepth = 48

// build makes t the quadtree of the positions y (n×2, row-major),
// reusing its storage.
func (t *quadtree) build(y []float64) {
	n := len(y) / 2
	t.nodes = t.nodes[:0]
	t.perm = t.perm[:0]
	minX, minY, maxX, maxY := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	for i := range n {
		t.perm = append(t.perm, int32(i))
		minX, maxX = math.Min(minX, y[2*i]), math.Max(maxX, y[2*i])
		minY, maxY = math.Min(minY, y[2*i+1]), math.Max(maxY, y[2*i+1])
	}
	half := math.Max(maxX-minX, maxY-minY)/2*(1+1e-9) + 1e-12
	t.split((minX+maxX)/2, (minY+maxY)/2, half, 0, int32(n), 0, y)
	t.pos = slices.Grow(t.pos[:0], n)[:n]
	for at, p := range t.perm {
		t.pos[p] = int32(at)
	}
}

// split adds the node of cell (cx, cy, half) holding perm[lo:hi] and its
// subtree, and returns its index.
func (t *quadtree) split(cx, cy, half float64, lo, hi int32, depth int, y []float64) int32 {
	id := int32(len(t.nodes))
	t.nodes = append(t.nodes, quadNode{cx: cx, cy: cy, half: half, lo: lo, hi: hi, count: int(hi - lo), child: [4]int32{-1, -1, -1, -1}})
	var mx, my float64
	same := true
	for _, p := range t.perm[lo:hi] {
		mx, my = mx+y[2*p], my+y[2*p+1]
		same = same && y[2*p] == y[2*t.perm[lo]] && y[2*p+1] == y[2*t.perm[lo]+1]
	}
	t.nodes[id].mx, t.nodes[id].my = mx/float64(hi-lo), my/float64(hi-lo)
	if hi-lo <= 1 || same {
		t.nodes[id].mx, t.nodes[id].my = y[2*t.perm[lo]], y[2*t.perm[lo]+1] // exactly
		t.nodes[id].coincident = true
		return id
	}
	if depth >= maxDepth {
		return id
	}
	// Partition into quadrants: by x (left of cx first), then each half by
	// y (below cy first): quadrant q = 2·[x ≥ cx] + [y ≥ cy].
	mid := partition(t.perm[lo:hi], func(p int32) bool { return y[2*p] < cx }) + lo
	bounds := [5]int32{lo, 0, mid, 0, hi}
	bounds[1] = partition(t.perm[lo:mid], func(p int32) bool { return y[2*p+1] < cy }) + lo
	bounds[3] = partition(t.perm[mid:hi], func(p int32) bool { return y[2*p+1] < cy }) + mid
	h := half / 2
	for q := range 4 {
		if bounds[q] == bounds[q+1] {
			continue
		}
		qx, qy := cx-h, cy-h
		if q >= 2 {
			qx = cx + h
		}
		if q%2 == 1 {
			qy = cy + h
		}
		c := t.split(qx, qy, h, bounds[q], bounds[q+1], depth+1, y)
		t.nodes[id].child[q] = c
	}
	return id
}

// partition moves the elements satisfying first to the front and returns
// how many there are.
func partition(s []int32, first func(int32) bool) int32 {
	k := 0
	for i, v := range s {
		if first(v) {
			s[i], s[k] = s[k], v
			k++
		}
	}
	return int32(k)
}

// leaf reports whether node is a leaf.
func (nd *quadNode) leaf() bool {
	return nd.child == [4]int32{-1, -1, -1, -1}
}

// repulsion returns, for point i at (xi, yi), Σ_{j≠i} k_ij and
// Σ_{j≠i} k_ij² (y_i − y_j), k_ij = 1/(1 + |y_i − y_j|²), where a cell
// seen at an angle under θ (its width over the distance to its centre of
// mass) counts as all its points at that centre. A cell holding the point
// is always opened, so the point never repels itself (at θ ≤ 1/√2 the
// angle alone ensures it; scikit-learn's summarises such a cell at larger
// θ). Other points where the point is count each (k = 1), as in exact
// t-SNE, where scikit-learn's leaves them out.
func (t *quadtree) repulsion(i int32, y []float64, theta float64, stack []int32) (z, fx, fy float64, _ []int32) {
	xi, yi := y[2*i], y[2*i+1]
	at := t.pos[i]
	stack = append(stack[:0], 0)
	for len(stack) > 0 {
		nd := &t.nodes[stack[len(stack)-1]]
		stack = stack[:len(stack)-1]
		inside := nd.lo <= at && at < nd.hi
		if nd.coincident {
			c := float64(nd.count)
			if inside {
				c--
			}
			dx, dy := xi-nd.mx, yi-nd.my
			k := 1 / (1 + dx*dx + dy*dy)
			z += c * k
			fx, fy = fx+c*k*k*dx, fy+c*k*k*dy
			continue
		}
		if nd.leaf() { // points too close to split further, at maxDepth
			for _, j := range t.perm[nd.lo:nd.hi] {
				if j == i {
					continue
				}
				dx, dy := xi-y[2*j], yi-y[2*j+1]
				k := 1 / (1 + dx*dx + dy*dy)
				z += k
				fx, fy = fx+k*k*dx, fy+k*k*dy
			}
			continue
		}
		dx, dy := xi-nd.mx, yi-nd.my
		d2 := dx*dx + dy*dy
		if w := 2 * nd.half; !inside && w*w < theta*theta*d2 {
			k := 1 / (1 + d2)
			c := float64(nd.count)
			z += c * k
			fx, fy = fx+c*k*k*dx, fy+c*k*k*dy
			continue
		}
		for _, c := range nd.child {
			if c >= 0 {
				stack = append(stack, c)
			}
		}
	}
	return z, fx, fy, stack
}

// barnesHut is the approximate objective: sparse P, quadtree repulsion.
type barnesHut struct {
	p     sparseP
	theta float64
	tree  quadtree
	rep   []float64 // per point: repulsive force (2) and its z term (1)
}

// chunk is the number of points a worker takes at a time; the normaliser
// is summed chunk by chunk in order, so an embedding does not depend on
// the number of workers.
const chunk = 256

// gradient writes the approximate gradient of KL(P‖Q) at y into grad,
// with P multiplied by exaggeration, as the exact one: 4 (e·Σ_j p_ij k_ij
// (y_i − y_j) − Σ_j k_ij² (y_i − y_j) / Z). With withKL it returns
// KL(e·P‖Q) over P's entries, Q normalised by the approximate Z.
func (b *barnesHut) gradient(y []float64, exaggeration float64, grad []float64, withKL bool) float64 {
	n := len(y) / 2
	b.tree.build(y)
	if cap(b.rep) < 3*n {
		b.rep = make([]float64, 3*n)
	}
	rep := b.rep[:3*n]
	chunks := (n + chunk - 1) / chunk
	zs := make([]float64, chunks)
	work := make(chan int)
	var wg sync.WaitGroup
	for range max(1, min(runtime.GOMAXPROCS(0), chunks)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var stack []int32
			for c := range work {
				var zc float64
				for i := c * chunk; i < min(n, (c+1)*chunk); i++ {
					var z, fx, fy float64
					z, fx, fy, stack = b.tree.repulsion(int32(i), y, b.theta, stack)
					rep[3*i], rep[3*i+1], rep[3*i+2] = fx, fy, z
					zc += z
				}
				zs[c] = zc
			}
		}()
	}
	for c := range chunks {
		work <- c
	}
	close(work)
	wg.Wait()
	var z float64
	for _, v := range zs {
		z += v
	}
	var kl float64
	for i := range n {
		xi, yi := y[2*i], y[2*i+1]
		var ax, ay float64
		for e := b.p.start[i]; e < b.p.start[i+1]; e++ {
			j := b.p.col[e]
			dx, dy := xi-y[2*j], yi-y[2*j+1]
			k := 1 / (1 + dx*dx + dy*dy)
			pij := exaggeration * b.p.val[e]
			ax, ay = ax+pij*k*dx, ay+pij*k*dy
			if withKL && pij > 0 { // an affinity that underflowed adds nothing
				kl += pij * math.Log(pij/math.Max(k/z, 1e-12))
			}
		}
		grad[2*i] = 4 * (ax - rep[3*i]/z)
		grad[2*i+1] = 4 * (ay - rep[3*i+1]/z)
	}
	return kl
}

// divergence is KL(P‖Q) at y, Q's normaliser by the quadtree.
func (b *barnesHut) divergence(y []float64) float64 {
	return b.gradient(y, 1, make([]float64, len(y)), true)
}
