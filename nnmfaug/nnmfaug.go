package nnmfaug

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"

	"gekc/kg"

	"gonum.org/v1/gonum/mat"
)

// Options are NNMFAug's settings; DefaultOptions gives the paper's.
type Options struct {
	Components int     // NMF components k (256)
	Clusters   int     // Ward clusters C (50)
	Alpha      float64 // added to every relation's weight H[s,r]·T[o,r] (1e-3)
	Iterations int     // NMF iterations at most (1000)
	Tolerance  float64 // NMF stops when ten iterations lower ‖X − W·V‖_F by less than this fraction of its initial value (1e-4)
	Seed       uint64  // of the NMF's initialisation
}

// DefaultOptions are the settings of the paper's code: 256 NMF components
// (its preprocessing command's default, which its README runs; the
// function it calls defaults to 128), at most 1000 iterations with
// scikit-learn's tolerance, 50 clusters, α = 10⁻³.
func DefaultOptions() Options {
	return Options{Components: 256, Clusters: 50, Alpha: 1e-3, Iterations: 1000, Tolerance: 1e-4, Seed: 42}
}

// Model is a fitted NNMFAug sampler over a graph's entities and relations.
type Model struct {
	Entities, Relations int
	// Cluster is each entity's cluster, in [0, Clusters).
	Cluster []int32
	// NMFIterations and NMFError are the factorisation's iterations and its
	// last measured relative error ‖X − W·V‖_F / ‖X‖_F.
	NMFIterations int
	NMFError      float64

	members    [][]int32
	head, tail []float64 // |E| × |R| counts, row-major
	alpha      float64
}

// Fit builds NNMFAug from the training triples of a graph with the given
// numbers of entities and relations.
func Fit(train []kg.Triple, entities, relations int, opt Options) (*Model, error) {
	switch {
	case entities < 1 || relations < 1:
		return nil, fmt.Errorf("nnmfaug: %d entities and %d relations", entities, relations)
	case len(train) == 0:
		return nil, errors.New("nnmfaug: no training triples")
	case opt.Components < 1:
		return nil, fmt.Errorf("nnmfaug: %d components; want at least 1", opt.Components)
	case opt.Clusters < 1 || opt.Clusters > entities:
		return nil, fmt.Errorf("nnmfaug: %d clusters of %d entities; want 1 to %d", opt.Clusters, entities, entities)
	case !(opt.Alpha > 0) || math.IsInf(opt.Alpha, 0):
		return nil, fmt.Errorf("nnmfaug: α %g; want a finite α > 0", opt.Alpha)
	case opt.Iterations < 1 || !(opt.Tolerance >= 0):
		return nil, fmt.Errorf("nnmfaug: %d iterations, tolerance %g", opt.Iterations, opt.Tolerance)
	}
	m := &Model{Entities: entities, Relations: relations, alpha: opt.Alpha,
		head: make([]float64, entities*relations), tail: make([]float64, entities*relations)}
	for i, t := range train {
		if t.S < 0 || int(t.S) >= entities || t.O < 0 || int(t.O) >= entities || t.R < 0 || int(t.R) >= relations {
			return nil, fmt.Errorf("nnmfaug: training triple %d (%d, %d, %d) outside %d entities and %d relations", i, t.S, t.R, t.O, entities, relations)
		}
		m.head[int(t.S)*relations+int(t.R)]++
		m.tail[int(t.O)*relations+int(t.R)]++
	}
	h := mat.NewDense(entities, relations, m.head)
	t := mat.NewDense(entities, relations, m.tail)
	f := factorize(h, t, opt.Components, opt.Iterations, opt.Tolerance, rand.New(rand.NewPCG(opt.Seed, 0x6e6e6d66)))
	m.NMFIterations = f.Iters
	if len(f.Errors) > 0 {
		m.NMFError = math.Sqrt(max(0, f.Errors[len(f.Errors)-1]) / f.Norm2)
	}
	// Each entity's features: its row of W and its column of V.
	k := opt.Components
	feats := make([]float64, entities*2*k)
	for e := 0; e < entities; e++ {
		row := feats[e*2*k : (e+1)*2*k]
		mat.Row(row[:k], e, f.W)
		mat.Col(row[k:], e, f.V)
	}
	m.Cluster = wardClusters(feats, entities, 2*k, opt.Clusters, min(runtime.GOMAXPROCS(0), entities/2048))
	m.members = make([][]int32, opt.Clusters)
	for e, c := range m.Cluster {
		m.members[c] = append(m.members[c], int32(e))
	}
	return m, nil
}

// Clusters is the number of clusters.
func (m *Model) Clusters() int { return len(m.members) }

// relationWeights fills w with H[s,r]·T[o,r] + α and returns their sum.
func (m *Model) relationWeights(s, o int32, w []float64) float64 {
	hs := m.head[int(s)*m.Relations : (int(s)+1)*m.Relations]
	to := m.tail[int(o)*m.Relations : (int(o)+1)*m.Relations]
	var z float64
	for r := range w {
		w[r] = hs[r]*to[r] + m.alpha
		z += w[r]
	}
	return z
}

// Sample draws n triples (none for n ≤ 0): a cluster uniformly, a subject
// and an object uniformly from it, the relation ∝ H[s,r]·T[o,r] + α.
func (m *Model) Sample(n int, rng *rand.Rand) []kg.Triple {
	out := make([]kg.Triple, max(n, 0))
	w := make([]float64, m.Relations)
	for i := range out {
		es := m.members[rng.IntN(len(m.members))]
		s, o := es[rng.IntN(len(es))], es[rng.IntN(len(es))]
		u := rng.Float64() * m.relationWeights(s, o, w)
		r := len(w) - 1
		for j, x := range w {
			if u < x {
				r = j
				break
			}
			u -= x
		}
		out[i] = kg.Triple{S: s, R: int32(r), O: o}
	}
	return out
}

// LogProb is log p(s, r, o) under the sampler: −∞ when s and o lie in
// different clusters. The triple's ids must be within the model's sizes.
func (m *Model) LogProb(t kg.Triple) float64 {
	if m.Cluster[t.S] != m.Cluster[t.O] {
		return math.Inf(-1)
	}
	return m.PaperLogProb(t)
}

// PaperLogProb is the log-probability the paper's code reports for NNMFAug
// (its Table 4): that of the triple were its object in its subject's
// cluster, log(1/C) − 2·log|c(s)| + log p(r | s, o). It equals LogProb when
// s and o share a cluster and is finite when they do not.
func (m *Model) PaperLogProb(t kg.Triple) float64 {
	w := make([]float64, m.Relations)
	z := m.relationWeights(t.S, t.O, w)
	size := float64(len(m.members[m.Cluster[t.S]]))
	return -math.Log(float64(len(m.members))) - 2*math.Log(size) + math.Log(w[t.R]/z)
}
