package models

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"gekc/graph"
	"gekc/kg"

	"gonum.org/v1/gonum/mat"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TreeSampler draws triples exactly from an unconstrained squared model at
// any number of entities, as Sampler does (r ~ p(R), s ~ p(S | r),
// o ~ p(O | s, r)) but without scoring every entity per draw: both entity
// draws are quadratic forms in the entity's row, sampled through a Gram
// tree (see gramTree). p(O | s, r) ∝ (q·x_o)² + ε for the object query q
// of (s, r). p(S | r) ∝ s·M_r·sᵀ + ε|E| with M_r = Σ_j λ_j v_j v_jᵀ (its
// eigendecomposition) is a mixture: component j with weight λ_j v_jᵀG_Sv_j,
// then s ∝ (v_j·s)². A draw costs about log(|E|)·k² + k² work instead of
// |E|·k, so sampling a 16M-triple graph over millions of entities takes
// minutes, not days. The ε terms, the uniform mass that keeps every
// triple's probability positive, are drawn as uniform components.
type TreeSampler struct {
	m            *Model
	subj, obj    *gramTree
	relMarg      *RelationMarginals
	eps          float64
	k            int // the subject table's width
	form         *G.Node
	formProg     *graph.Program
	formR        []int
	batch        int
	qS, qR       []int
	query        *G.Node
	queryProg    *graph.Program
	components   map[int]*subjectMixture
	bufQ, bufTgt []float64
}

// subjectMixture is p(S | r) as a mixture of rank-one quadratic forms.
type subjectMixture struct {
	vecs    [][]float64 // √λ_j v_j
	cum     []float64   // cumulative weights of the components
	uniform float64     // ε·|E|·|E|, the uniform part's mass
}

// NewTreeSampler prepares the trees of an unconstrained squared model's
// entity tables.
func NewTreeSampler(m *Model) (*TreeSampler, error) { return newTreeSampler(m, 0) }

// newTreeSampler builds trees with leaves of at most leaf rows (0: the
// default), so that tests can make tiny tables deep.
func newTreeSampler(m *Model, leaf int) (*TreeSampler, error) {
	if m.Semantics != Squared {
		return nil, fmt.Errorf("models.NewTreeSampler(%s): a squared model is needed", m.Name)
	}
	g := G.NewGraph()
	c := m.Bind(g)
	s := &TreeSampler{m: m, eps: c.eps(), batch: 4096, components: map[int]*subjectMixture{}}
	var err error
	if s.obj, err = newGramTree(m.Param(m.Layout.Object), leaf); err != nil {
		return nil, err
	}
	s.subj = s.obj
	if m.Layout.Subject != m.Layout.Object {
		if s.subj, err = newGramTree(m.Param(m.Layout.Subject), leaf); err != nil {
			return nil, err
		}
	}
	s.k = s.subj.k
	if s.relMarg, err = c.NewRelationMarginals(); err != nil {
		return nil, err
	}
	// M_r, reading G_O from the tree's root.
	ko := s.obj.k
	gram := tensor.New(tensor.Of(m.Dtype), tensor.WithShape(ko, ko))
	switch d := gram.Data().(type) {
	case []float32:
		for i, v := range s.obj.root() {
			d[i] = float32(v)
		}
	case []float64:
		copy(d, s.obj.root())
	}
	gin := G.NewMatrix(g, m.Dtype, G.WithShape(ko, ko), G.WithName("tree-object-gram"), G.WithValue(gram))
	s.formR = make([]int, 1)
	if s.form, err = c.squaredSubjectForm(graph.IndexVector(g, "tree-r", s.formR), gin, s.k); err != nil {
		return nil, err
	}
	if s.formProg, err = graph.Compile(s.form); err != nil {
		return nil, err
	}
	s.qS, s.qR = make([]int, s.batch), make([]int, s.batch)
	b, err := c.NewBatch(graph.IndexVector(g, "tree-s", s.qS), graph.IndexVector(g, "tree-rq", s.qR), nil)
	if err != nil {
		return nil, err
	}
	if s.query, err = b.query(Object); err != nil {
		return nil, err
	}
	if s.queryProg, err = graph.Compile(s.query); err != nil {
		return nil, err
	}
	return s, nil
}

// mixture returns p(S | r) as a mixture, computing it on first use.
func (s *TreeSampler) mixture(r int) (*subjectMixture, error) {
	if mx, ok := s.components[r]; ok {
		return mx, nil
	}
	s.formR[0] = r
	if err := s.formProg.Run(); err != nil {
		return nil, err
	}
	k := s.k
	mr := graph.Float64s(s.form.Value())
	sym := mat.NewSymDense(k, nil)
	for i := 0; i < k; i++ {
		for j := i; j < k; j++ {
			sym.SetSym(i, j, (mr[i*k+j]+mr[j*k+i])/2)
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(sym, true) {
		return nil, fmt.Errorf("models: p(S | r=%d): the eigendecomposition of M_r failed", r)
	}
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	vals := eig.Values(nil)
	mx := &subjectMixture{uniform: s.eps * float64(s.m.Sizes.Entities) * float64(s.m.Sizes.Entities)}
	var all []float64 // the components' vectors, row after row
	for j, l := range vals {
		if !(l > 0) {
			continue // M_r is positive semi-definite: these are rounding
		}
		for i := range k {
			all = append(all, math.Sqrt(l)*vecs.At(i, j))
		}
	}
	nc := len(all) / k
	weights := make([]float64, nc)
	quadForms(all, nc, k, s.subj.root(), make([]float64, nc*k), weights)
	var acc float64
	for j, w := range weights {
		acc += w
		mx.vecs = append(mx.vecs, all[j*k:(j+1)*k:(j+1)*k])
		mx.cum = append(mx.cum, acc)
	}
	s.components[r] = mx
	return mx, nil
}

// Sample draws n triples.
func (s *TreeSampler) Sample(n int, rng *rand.Rand) ([]kg.Triple, error) {
	out, byRel, rels, err := drawRelations(s.relMarg, n, rng)
	if err != nil {
		return nil, err
	}
	ne := s.m.Sizes.Entities

	// Subjects: a component (or the uniform part) per draw, then the tree
	// for the draws of components, a chunk at a time.
	const chunk = 1 << 15
	var pending []int // triples whose subject the tree draws
	flush := func(tree *gramTree, assign func(i int, row int32)) {
		if len(pending) == 0 {
			return
		}
		rows := make([]int32, len(pending))
		tree.draw(s.bufQ[:len(pending)*tree.k], s.bufTgt[:len(pending)], rows)
		for j, i := range pending {
			assign(i, rows[j])
		}
		pending = pending[:0]
		s.bufQ, s.bufTgt = s.bufQ[:0], s.bufTgt[:0]
	}
	setS := func(i int, row int32) { out[i].S = row }
	for _, r := range rels {
		mx, err := s.mixture(r)
		if err != nil {
			return nil, err
		}
		var quad float64
		if len(mx.cum) > 0 {
			quad = mx.cum[len(mx.cum)-1]
		}
		for _, i := range byRel[r] {
			u := rng.Float64() * (quad + mx.uniform)
			if u >= quad {
				out[i].S = int32(min(int((u-quad)/(mx.uniform/float64(ne))), ne-1))
				continue
			}
			j := min(sort.SearchFloat64s(mx.cum, u), len(mx.cum)-1)
			for ; j < len(mx.cum)-1 && mx.cum[j] <= u; j++ {
			}
			lo := 0.0
			if j > 0 {
				lo = mx.cum[j-1]
			}
			// Within component j, the point u - lo of its mass picks s.
			s.bufQ = append(s.bufQ, mx.vecs[j]...)
			s.bufTgt = append(s.bufTgt, u-lo)
			pending = append(pending, i)
			if len(pending) == chunk {
				flush(s.subj, setS)
			}
		}
	}
	flush(s.subj, setS)

	// Objects: the query of each (s, r) from the model, its mass against
	// G_O, and the tree.
	ko := s.obj.k
	epsMass := s.eps * float64(ne)
	masses, prod := make([]float64, s.batch), make([]float64, s.batch*ko)
	setO := func(i int, row int32) { out[i].O = row }
	for from := 0; from < n; from += s.batch {
		m := min(s.batch, n-from)
		for i := 0; i < s.batch; i++ {
			t := out[from+min(i, m-1)]
			s.qS[i], s.qR[i] = int(t.S), int(t.R)
		}
		if err := s.queryProg.Run(); err != nil {
			return nil, err
		}
		q := graph.Float64s(s.query.Value())
		quadForms(q, m, ko, s.obj.root(), prod, masses)
		for i := 0; i < m; i++ {
			qi := q[i*ko : (i+1)*ko]
			mass := masses[i]
			u := rng.Float64() * (mass + epsMass)
			if u >= mass {
				out[from+i].O = int32(min(int((u-mass)/s.eps), ne-1))
				continue
			}
			s.bufQ = append(s.bufQ, qi...)
			s.bufTgt = append(s.bufTgt, u)
			pending = append(pending, from+i)
		}
		if len(pending) >= chunk-s.batch {
			flush(s.obj, setO)
		}
	}
	flush(s.obj, setO)
	return out, nil
}
