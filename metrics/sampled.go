package metrics

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gekc/graph"
	"gekc/kg"
	"gekc/models"

	G "gorgonia.org/gorgonia"
)

// NegativeSampler draws the negatives of OGB's sampled ranking protocol for
// any graph: for each triple and side, n distinct entities of the type of
// the entity they replace (any entity when the graph is untyped), none of
// them the true one and none forming a known triple (filtered). The draws
// depend only on the seed, the triple and the side, so every run ranks a
// triple against the same negatives, as OGB's shipped lists make them.
type NegativeSampler struct {
	n        int
	seed     uint64
	entities int
	schema   *kg.Schema
	filter   *kg.Filter
	seen     map[int32]struct{}
}

// NewNegativeSampler returns a sampler of n negatives per triple and side
// among the given number of entities; schema (may be nil) makes them
// type-consistent, filter (may be nil) excludes known triples.
func NewNegativeSampler(n int, seed uint64, entities int, schema *kg.Schema, filter *kg.Filter) (*NegativeSampler, error) {
	if n <= 0 || entities <= 0 {
		return nil, fmt.Errorf("metrics.NewNegativeSampler: %d negatives among %d entities", n, entities)
	}
	return &NegativeSampler{n: n, seed: seed, entities: entities, schema: schema, filter: filter, seen: map[int32]struct{}{}}, nil
}

// PerQuery is the number of negatives drawn for each query (fewer where
// the type has fewer candidates).
func (ns *NegativeSampler) PerQuery() int { return ns.n }

// Draw appends to dst the negatives of t's subject (side Subject) or
// object (side Object). Fewer than n come back when the candidates run
// out (a small type): all the admissible ones, in increasing order.
func (ns *NegativeSampler) Draw(dst []int32, t kg.Triple, side models.Var) []int32 {
	answer, known := t.O, []int32(nil)
	if side == models.Subject {
		answer = t.S
	}
	if ns.filter != nil {
		if side == models.Subject {
			known = ns.filter.Subjects(t.R, t.O)
		} else {
			known = ns.filter.Objects(t.S, t.R)
		}
	}
	var pool []int32 // nil: all entities
	if ns.schema != nil && int(answer) < len(ns.schema.EntityType) {
		pool = ns.schema.EntitiesOfType(ns.schema.EntityType[answer])
	}
	size := ns.entities
	if pool != nil {
		size = len(pool)
	}
	excluded := func(e int32) bool {
		if e == answer {
			return true
		}
		_, found := slices.BinarySearch(known, e)
		return found
	}
	at := func(i int) int32 {
		if pool != nil {
			return pool[i]
		}
		return int32(i)
	}
	// Few candidates left (at most twice n beyond the known answers):
	// take them all, or draw among them without rejection.
	if size <= 2*ns.n+len(known)+1 {
		var all []int32
		for i := range size {
			if e := at(i); !excluded(e) {
				all = append(all, e)
			}
		}
		if len(all) <= ns.n {
			return append(dst, all...)
		}
		rng := ns.rng(t, side)
		rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
		return append(dst, all[:ns.n]...)
	}
	rng := ns.rng(t, side)
	clear(ns.seen)
	for len(ns.seen) < ns.n {
		e := at(rng.IntN(size))
		if _, dup := ns.seen[e]; dup || excluded(e) {
			continue
		}
		ns.seen[e] = struct{}{}
		dst = append(dst, e)
	}
	return dst
}

// rng is the stream of one triple's side: a function of the seed and the
// triple, not of its position in a split or subset.
func (ns *NegativeSampler) rng(t kg.Triple, side models.Var) *rand.Rand {
	key := uint64(uint32(t.S))*0x9E3779B97F4A7C15 ^ uint64(uint32(t.R))*0xC2B2AE3D27D4EB4F ^
		uint64(uint32(t.O))*0x165667B19E3779F9 ^ uint64(side)
	return rand.New(rand.NewPCG(ns.seed, key))
}

// RankSampled ranks each triple's true subject and object against the
// sampler's negatives only (OGB's protocol: ties count half, rank = 1 +
// #greater + #equal/2), scoring just those triples: at millions of
// entities this is what makes validating every epoch affordable.
func (e *Evaluator) RankSampled(triples []kg.Triple, ns *NegativeSampler, hits []int) (Ranking, error) {
	sc, err := e.tripleScorer(ns.n + 1)
	if err != nil {
		return Ranking{}, err
	}
	ranks := [2][]float64{make([]float64, len(triples)), make([]float64, len(triples))}
	nonFinite := 0
	var negs []int32
	// Queries are scored a block at a time: the true triple first, then its
	// negatives, for as many queries as fill the scorer's batch.
	block := make([]kg.Triple, 0, sc.batch)
	type span struct{ query, side, from, to int }
	var spans []span
	flush := func() error {
		if len(block) == 0 {
			return nil
		}
		scores := make([]float64, len(block))
		if err := sc.score(block, scores); err != nil {
			return err
		}
		for _, s := range spans {
			pos := scores[s.from]
			if math.IsNaN(pos) || math.IsInf(pos, 0) {
				nonFinite++
			}
			others := scores[s.from+1 : s.to]
			ranks[s.side][s.query] = ogbRank(pos, len(others), func(j int) float64 { return others[j] })
		}
		block, spans = block[:0], spans[:0]
		return nil
	}
	for i, t := range triples {
		for side, v := range []models.Var{models.Subject, models.Object} {
			negs = ns.Draw(negs[:0], t, v)
			if 1+len(negs) > cap(block) {
				return Ranking{}, fmt.Errorf("metrics.RankSampled: %d negatives per query, at most %d", len(negs), cap(block)-1)
			}
			if len(block)+1+len(negs) > cap(block) {
				if err := flush(); err != nil {
					return Ranking{}, err
				}
			}
			from := len(block)
			block = append(block, t)
			for _, n := range negs {
				c := t
				if v == models.Subject {
					c.S = n
				} else {
					c.O = n
				}
				block = append(block, c)
			}
			spans = append(spans, span{i, side, from, len(block)})
		}
	}
	if err := flush(); err != nil {
		return Ranking{}, err
	}
	return summarise(ranks[0], ranks[1], hits, nonFinite), nil
}

// tripleScorer returns the evaluator's program of log-scores of single
// triples at a batch large enough for a query's negatives: a batch of
// sampled queries scores tens of thousands of triples, each a few
// embedding rows, while the ranking batch may be cut to a few queries.
// It holds at least minRows triples (a query and its negatives).
func (e *Evaluator) tripleScorer(minRows int) (*tripleScorer, error) {
	if e.scorer != nil && e.scorer.batch >= minRows {
		return e.scorer, nil
	}
	build := func(rows int) (*tripleScorer, error) {
		bb, err := e.m.BindBatch(e.dom, rows)
		if err != nil {
			return nil, err
		}
		out, err := bb.Circuit.LogScore(bb.Batch)
		if err != nil {
			return nil, err
		}
		return &tripleScorer{bb: bb, out: out, batch: rows}, nil
	}
	// As many rows as 64 MiB of buffers hold, from 1024 to 16384.
	const probe = 1024
	sc, err := build(probe)
	if err != nil {
		return nil, err
	}
	perRow := max(graph.Bytes(sc.out)/probe, 1)
	if rows := max(min(max(int((64<<20)/perRow), probe), 1<<14), minRows); rows != probe {
		if sc, err = build(rows); err != nil {
			return nil, err
		}
	}
	if sc.prog, err = graph.Compile(sc.out); err != nil {
		return nil, err
	}
	e.scorer = sc
	return sc, nil
}

type tripleScorer struct {
	bb    *models.BoundBatch
	out   *G.Node
	prog  *graph.Program
	batch int
}

// score writes log φ of each triple (at most batch) into dst.
func (s *tripleScorer) score(ts []kg.Triple, dst []float64) error {
	n := s.bb.Load(ts, ts[0])
	if err := s.prog.Run(); err != nil {
		return err
	}
	switch d := s.out.Value().Data().(type) {
	case []float32:
		for i := range n {
			dst[i] = float64(d[i])
		}
	case []float64:
		copy(dst[:n], d)
	}
	return nil
}
