package models

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sort"
	"sync"

	"gekc/graph"
	"gekc/internal/logmath"
	"gekc/kg"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Sampler draws triples exactly from a GeKC by inverse-transform sampling
// along r ~ p(R), s ~ p(S | r), o ~ p(O | s, r) (paper, §4.4). Every step
// uses the circuit's own marginals: p(R) from RelationLogMarginals; p(S | r)
// in closed form (squared: s·M_r·sᵀ; non-negative: the object summed out),
// or under a constraint from LogMarginal over the objects for a batch of all
// entities; and p(O | s, r) from the scores of every object. Ordering R
// first lets all samples with the same relation share one pass over the
// entities.
type Sampler struct {
	m     *Model
	batch int

	relMarg   *RelationMarginals
	subjR     []int // relation indices read by subjProg (see newSampler)
	relPerRun int
	subjAll   bool // subjMarg has a row for every relation (and subjR is unused)
	subjMarg  *G.Node
	subjProg  *graph.Program
	objS      []int
	objR      []int
	objCand   *G.Node
	objProg   *graph.Program
	// gram, computed by gramProg, is copied into gramIn, the input of
	// subjProg, in the fast path of squared models.
	gram, gramIn *G.Node
	gramProg     *graph.Program
	// phiEps ≥ 0: objCand holds the scores φ of a squared model, drawn in
	// proportion to φ² + phiEps without a round trip through logarithms;
	// < 0: objCand holds log-weights.
	phiEps float64
}

// NewSampler compiles the sampling programs of a non-negative or squared
// model; batch bounds the number of objects drawn per pass.
func NewSampler(m *Model, batch int) (*Sampler, error) { return newSampler(m, nil, batch) }

// NewConstrainedSampler samples from p_K ∝ φ·c_K: it never emits a triple
// that violates the domain constraint.
// A nil d means no constraint, as NewSampler.
func NewConstrainedSampler(m *Model, d *Domain, batch int) (*Sampler, error) {
	return newSampler(m, d, batch)
}

func newSampler(m *Model, d *Domain, batch int) (*Sampler, error) {
	if m.Semantics == Energy {
		return nil, fmt.Errorf("models.NewSampler(%s): %w", m.Name, ErrIntractable)
	}
	if batch <= 0 {
		batch = 1000
	}
	s := &Sampler{m: m, batch: batch, objS: make([]int, batch), objR: make([]int, batch), phiEps: -1}
	g := G.NewGraph()
	c, err := m.BindConstrained(g, d)
	if err != nil {
		return nil, err
	}
	if s.relMarg, err = c.NewRelationMarginals(); err != nil {
		return nil, err
	}
	// p(S | r), in one of three ways.
	closedSquared := d == nil && m.Semantics == Squared
	switch {
	case d == nil && m.Semantics == NonNegative:
		// All relations in one run.
		s.relPerRun, s.subjAll = m.Sizes.Relations, true
		s.subjMarg, err = c.nonNegativeSubjectMarginals()
	case closedSquared:
		// In closed form, one relation per run. G_O is computed once per
		// Sample call by its own program and read by that run as an input.
		s.relPerRun, s.subjR = 1, make([]int, 1)
		if s.gram, err = c.RoleGram(Object); err != nil {
			return nil, err
		}
		if s.gramProg, err = graph.Compile(s.gram); err != nil {
			return nil, err
		}
		k := s.gram.Shape()[0]
		s.gramIn = G.NewMatrix(g, m.Dtype, G.WithShape(k, k), G.WithName("object-gram"),
			G.WithValue(tensor.New(tensor.Of(m.Dtype), tensor.WithShape(k, k))))
		s.subjMarg, err = c.squaredSubjectMarginals(graph.IndexVector(g, "r", s.subjR), s.gramIn)
	default:
		s.subjMarg, err = s.constrainedSubjectMarginals(c, d)
	}
	if err != nil {
		return nil, err
	}
	if s.subjProg, err = graph.Compile(s.subjMarg); err != nil {
		return nil, err
	}
	// p(O | s, r) from the candidates' log-weights, or straight from the
	// scores φ of an unconstrained squared model (weights φ² + ε).
	ob, err := c.NewBatch(graph.IndexVector(g, "s", s.objS), graph.IndexVector(g, "r2", s.objR), nil)
	if err != nil {
		return nil, err
	}
	if closedSquared {
		q, err := ob.query(Object)
		if err != nil {
			return nil, err
		}
		if s.objCand, err = graph.MatMul(q, c.RoleTable(Object), false, true); err != nil {
			return nil, err
		}
		s.phiEps = c.eps()
	} else if s.objCand, err = c.Candidates(ob, Object); err != nil {
		return nil, err
	}
	if s.objProg, err = graph.Compile(s.objCand); err != nil {
		return nil, err
	}
	return s, nil
}

// constrainedSubjectMarginals is p_K(S | r) under the constraint d:
// LogMarginal over the objects of a batch of every subject with relPerRun
// relations, masked to the subjects of r's type. Several relations per run
// share the relation-free work (Gram matrices, column slices of the entity
// table); about 64k rows keeps the intermediates near 100 MB at d = 200.
func (s *Sampler) constrainedSubjectMarginals(c *Circuit, d *Domain) (*G.Node, error) {
	ne := s.m.Sizes.Entities
	s.relPerRun = max(1, min(s.m.Sizes.Relations, (1<<16)/ne))
	s.subjR = make([]int, ne*s.relPerRun)
	all := make([]int, ne*s.relPerRun)
	for i := range all {
		all[i] = i % ne
	}
	b, err := c.NewBatch(graph.IndexVector(c.g, "all", all), graph.IndexVector(c.g, "r", s.subjR), nil)
	if err != nil {
		return nil, err
	}
	marg, err := c.LogMarginal(b, Object)
	if err != nil {
		return nil, err
	}
	// p_K(s | r) is zero for subjects of the wrong type.
	have, err := b.typeOf(Subject)
	if err != nil {
		return nil, err
	}
	want, err := b.required(Subject)
	if err != nil {
		return nil, err
	}
	return graph.MaskEqual(marg, have, want)
}

// drawRelations returns n triples whose relations are drawn from p(R),
// the indices of the triples of each relation drawn, and those relations
// in increasing order (a fixed order keeps draws reproducible from the
// seed).
func drawRelations(rm *RelationMarginals, n int, rng *rand.Rand) ([]kg.Triple, map[int][]int, []int, error) {
	out := make([]kg.Triple, n)
	relLog, err := rm.Values()
	if err != nil {
		return nil, nil, nil, err
	}
	relCat, err := newCategorical(relLog)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("p(R): %w", err)
	}
	byRel := map[int][]int{}
	for i := range out {
		r := relCat.draw(rng)
		out[i].R = int32(r)
		byRel[r] = append(byRel[r], i)
	}
	rels := make([]int, 0, len(byRel))
	for r := range byRel {
		rels = append(rels, r)
	}
	sort.Ints(rels)
	return out, byRel, rels, nil
}

// Sample draws n triples.
func (s *Sampler) Sample(n int, rng *rand.Rand) ([]kg.Triple, error) {
	out, byRel, rels, err := drawRelations(s.relMarg, n, rng)
	if err != nil {
		return nil, err
	}
	if s.gramProg != nil {
		if err := s.gramProg.Run(); err != nil {
			return nil, err
		}
		if err := G.Let(s.gramIn, s.gram.Value()); err != nil {
			return nil, err
		}
	}
	ne := s.m.Sizes.Entities
	for from := 0; from < len(rels); from += s.relPerRun {
		chunk := rels[from:min(from+s.relPerRun, len(rels))]
		for i := range s.subjR {
			s.subjR[i] = chunk[min(i/ne, len(chunk)-1)]
		}
		if err := s.subjProg.Run(); err != nil {
			return nil, err
		}
		marg := graph.Float64s(s.subjMarg.Value())
		for j, r := range chunk {
			row := j
			if s.subjAll {
				row = r
			}
			cat, err := newCategorical(marg[row*ne : (row+1)*ne])
			if err != nil {
				return nil, fmt.Errorf("p(S | r=%d): %w", r, err)
			}
			for _, i := range byRel[r] {
				out[i].S = int32(cat.draw(rng))
			}
		}
	}
	us := make([]float64, s.batch)
	idx := make([]int, s.batch)
	for from := 0; from < n; from += s.batch {
		k := min(s.batch, n-from)
		for i := 0; i < s.batch; i++ {
			t := out[from+min(i, k-1)]
			s.objS[i], s.objR[i] = int(t.S), int(t.R)
		}
		if err := s.objProg.Run(); err != nil {
			return nil, err
		}
		// The uniforms are drawn in order, so the result depends on the
		// seed only, not on how rows are spread over goroutines.
		for i := range us[:k] {
			us[i] = rng.Float64()
		}
		var err error
		switch all := s.objCand.Value().Data().(type) {
		case []float32:
			err = drawRows(all, ne, us[:k], idx, s.phiEps)
		case []float64:
			err = drawRows(all, ne, us[:k], idx, s.phiEps)
		default:
			err = fmt.Errorf("candidate scores of type %T", all)
		}
		if err != nil {
			return nil, fmt.Errorf("p(O | s, r): %w", err)
		}
		for i := 0; i < k; i++ {
			out[from+i].O = int32(idx[i])
		}
	}
	return out, nil
}

// drawRows draws idx[i] from row i of w (w[i*n:(i+1)*n]) by inverse
// transform with the uniform us[i], rows in parallel, reusing one cumulative
// buffer per goroutine. The row holds unnormalised log-weights if phiEps <
// 0, else scores φ whose weights are φ² + phiEps.
func drawRows[T float32 | float64](w []T, n int, us []float64, idx []int, phiEps float64) error {
	workers := min(runtime.GOMAXPROCS(0), len(us))
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for worker := 0; worker < workers; worker++ {
		wg.Add(1)
		go func(worker int) {
			defer wg.Done()
			cdf := make([]float64, n)
			for i := worker; i < len(us); i += workers {
				var j int
				var err error
				if phiEps < 0 {
					j, err = drawLog(w[i*n:(i+1)*n], us[i], cdf)
				} else {
					j, err = drawSquared(w[i*n:(i+1)*n], phiEps, us[i], cdf)
				}
				if err != nil {
					errs[worker] = err
					return
				}
				idx[i] = j
			}
		}(worker)
	}
	wg.Wait()
	return errors.Join(errs...)
}

// drawLog returns the index that the uniform u selects by inverse transform
// from unnormalised log-weights, using cdf (len(logw)) as scratch. It is
// newCategorical followed by draw, without allocating.
func drawLog[T float32 | float64](logw []T, u float64, cdf []float64) (int, error) {
	m := math.Inf(-1)
	for _, v := range logw {
		x := float64(v)
		if x != x || math.IsInf(x, 1) {
			return 0, fmt.Errorf("log-weight %v", x)
		}
		m = max(m, x)
	}
	if math.IsInf(m, -1) {
		return 0, errNoMass
	}
	var acc float64
	for i, v := range logw {
		acc += math.Exp(float64(v) - m)
		cdf[i] = acc
	}
	return categorical{cdf: cdf}.pick(u), nil
}

// drawSquared is drawLog for the weights φ² + eps of a squared model's
// scores φ: no logarithm or exponential per candidate.
func drawSquared[T float32 | float64](phi []T, eps, u float64, cdf []float64) (int, error) {
	var acc float64
	for i, v := range phi {
		x := float64(v)
		acc += x*x + eps
		cdf[i] = acc
	}
	if acc != acc || math.IsInf(acc, 0) {
		return 0, fmt.Errorf("scores sum to %v", acc)
	}
	if acc <= 0 {
		return 0, errNoMass
	}
	return categorical{cdf: cdf}.pick(u), nil
}

// categorical samples from unnormalised log-weights by inverse transform.
type categorical struct{ cdf []float64 }

var errNoMass = errors.New("no finite positive mass to sample from")

func newCategorical(logw []float64) (categorical, error) {
	m := math.Inf(-1)
	for _, v := range logw {
		if v != v || math.IsInf(v, 1) {
			return categorical{}, fmt.Errorf("log-weight %v", v)
		}
		m = math.Max(m, v)
	}
	if math.IsInf(m, -1) {
		return categorical{}, errNoMass
	}
	cdf := make([]float64, len(logw))
	var acc float64
	for i, v := range logw {
		acc += math.Exp(v - m)
		cdf[i] = acc
	}
	return categorical{cdf: cdf}, nil
}

func (c categorical) draw(rng *rand.Rand) int { return c.pick(rng.Float64()) }

func (c categorical) len() int { return len(c.cdf) }

// perplexity is exp of the distribution's entropy.
func (c categorical) perplexity() float64 {
	z := c.cdf[len(c.cdf)-1]
	var h, prev float64
	for _, acc := range c.cdf {
		if p := (acc - prev) / z; p > 0 {
			h -= p * math.Log(p)
		}
		prev = acc
	}
	return math.Exp(h)
}

// pick returns the index that the uniform u ∈ [0, 1) selects.
func (c categorical) pick(u float64) int {
	u *= c.cdf[len(c.cdf)-1]
	i := sort.SearchFloat64s(c.cdf, u)
	for i < len(c.cdf)-1 && c.cdf[i] <= u { // skip zero-mass entries on the boundary
		i++
	}
	return i
}

// MixtureScore is implemented by monotone score functions whose circuit is
// one sum unit over product units, each multiplying one column of the
// subject, relation and object tables (and optionally a weight): CP,
// DistMult, RESCAL, TuckER and SimplE. Their non-negative versions sample
// ancestrally. A score with a subtraction (ComplEx, QuatE) cannot be one:
// its restriction's units carry signs.
type MixtureScore interface {
	// Components returns the number of product units.
	Components(sz Sizes) int
	// Component returns the table columns product unit h reads, and the
	// table and flat index of its weight ("" for weight 1).
	Component(sz Sizes, h int) (s, r, o int, weight string, wi int)
}

// AncestralSampler draws triples from a non-negative mixture circuit by
// ancestral sampling (paper, appendix C.3): pick a product unit h with
// probability w_h·Π(column sums of its input units)/Z — not uniformly, which
// would be exact only if every component had the same mass — then draw s,
// r and o from the normalised columns it reads.
type AncestralSampler struct {
	m          *Model
	components categorical
	cols       map[[2]int]categorical // (slot, column) → distribution over rows
	sf         MixtureScore
}

// NewAncestralSampler prepares ancestral sampling for a non-negative model
// whose score function is a MixtureScore. It reads the current parameters;
// build a new one after training further.
func NewAncestralSampler(m *Model) (*AncestralSampler, error) {
	sf, ok := m.Score.(MixtureScore)
	if !ok || m.Semantics != NonNegative {
		return nil, fmt.Errorf("models.NewAncestralSampler(%s): needs a non-negative mixture model (cp+, rescal+, tucker+)", m.Name)
	}
	sz := m.Sizes
	colLSE := map[string][]float64{}
	for _, name := range m.ParamNames() {
		colLSE[name] = columnLogSums(m.Param(name))
	}
	lay := m.Layout
	n := sf.Components(sz)
	logMass := make([]float64, n)
	for h := 0; h < n; h++ {
		s, r, o, w, wi := sf.Component(sz, h)
		v := colLSE[lay.Subject][s] + colLSE[lay.Relation][r] + colLSE[lay.Object][o]
		if w != "" {
			v += at(m.Param(w), wi)
		}
		logMass[h] = v
	}
	comp, err := newCategorical(logMass)
	if err != nil {
		return nil, err
	}
	return &AncestralSampler{m: m, components: comp, cols: map[[2]int]categorical{}, sf: sf}, nil
}

// UniformComponents returns a sampler that draws the product unit
// uniformly instead of by its mass, then s, r and o as a does. It is not a
// sampler of the model unless every component has the same mass: it is
// the ancestral sampler of the paper's public code for CP+ (its
// torch.randint over the rank), kept to measure what that code's samples
// are, as its KTD tables report them.
func (a *AncestralSampler) UniformComponents() (*AncestralSampler, error) {
	uniform, err := newCategorical(make([]float64, a.components.len()))
	if err != nil {
		return nil, err
	}
	return &AncestralSampler{m: a.m, components: uniform, cols: map[[2]int]categorical{}, sf: a.sf}, nil
}

// ComponentPerplexity is exp of the entropy of the product units' masses:
// the number of equally heavy components that would spread the model's
// mass as evenly (the rank when all are equal).
func (a *AncestralSampler) ComponentPerplexity() float64 { return a.components.perplexity() }

func at(t *tensor.Dense, i int) float64 {
	switch d := t.Data().(type) {
	case []float32:
		return float64(d[i])
	case []float64:
		return d[i]
	}
	return math.NaN()
}

// columnLogSums returns log Σ_i exp(x_ij) for each column of a table.
func columnLogSums(t *tensor.Dense) []float64 {
	rows, cols := t.Shape()[0], t.Shape()[1]
	out := make([]float64, cols)
	col := make([]float64, rows)
	for j := 0; j < cols; j++ {
		for i := 0; i < rows; i++ {
			col[i] = at(t, i*cols+j)
		}
		out[j] = logmath.LogSumExp(col)
	}
	return out
}

func (a *AncestralSampler) column(slot Var, j int) (categorical, error) {
	key := [2]int{int(slot), j}
	if c, ok := a.cols[key]; ok {
		return c, nil
	}
	t := a.m.Param(a.m.Layout.TableOf(slot))
	rows, cols := t.Shape()[0], t.Shape()[1]
	lw := make([]float64, rows)
	for i := range lw {
		lw[i] = at(t, i*cols+j)
	}
	c, err := newCategorical(lw)
	if err != nil {
		return c, err
	}
	a.cols[key] = c
	return c, nil
}

// Sample draws n triples.
func (a *AncestralSampler) Sample(n int, rng *rand.Rand) ([]kg.Triple, error) {
	out := make([]kg.Triple, n)
	for i := range out {
		h := a.components.draw(rng)
		cs, cr, co, _, _ := a.sf.Component(a.m.Sizes, h)
		var idx [3]int
		for v, col := range [3]int{cs, cr, co} {
			c, err := a.column(Var(v), col)
			if err != nil {
				return nil, err
			}
			idx[v] = c.draw(rng)
		}
		out[i] = kg.Triple{S: int32(idx[0]), R: int32(idx[1]), O: int32(idx[2])}
	}
	return out, nil
}
