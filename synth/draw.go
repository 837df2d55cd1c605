package synth

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"gekc/kg"
)

// A Sampler draws triples from a model (models.Sampler, models.TreeSampler
// and query's conditioned samplers are ones).
type Sampler interface {
	Sample(n int, rng *rand.Rand) ([]kg.Triple, error)
}

// Splits are the sizes of a data set's splits.
type Splits struct{ Train, Valid, Test int }

// Total is the number of triples of all splits.
func (s Splits) Total() int { return s.Train + s.Valid + s.Test }

// Draw is how triples are drawn.
type Draw string

const (
	// Distinct draws as many distinct triples as the splits hold (a sample
	// without replacement: a set, as a knowledge graph is), shuffles them
	// and deals them out to train, valid and test.
	Distinct Draw = "distinct"
	// IID draws valid and test as Distinct does, then the training triples
	// independently from the model conditioned on not being held out: the
	// training split repeats a triple as often as the model makes it, and
	// the splits never share a triple.
	IID Draw = "iid"
)

// ParseDraw reads "distinct" or "iid".
func ParseDraw(s string) (Draw, error) {
	switch d := Draw(s); d {
	case Distinct, IID:
		return d, nil
	}
	return "", fmt.Errorf("draw %q: want distinct or iid", s)
}

// Sampled is a drawn data set.
type Sampled struct {
	Train, Valid, Test []kg.Triple
	Draws              int // triples the sampler drew, the ones rejected as repeats included
}

// errExhausted reports a model whose mass sits on too few triples for the
// sizes asked.
var errExhausted = errors.New("the model puts its mass on too few triples for the sizes asked: more than 50 draws per kept triple")

// DrawSplits draws a data set of the given sizes from s, seeded. support is
// the number of triples the model can draw (|E|²|R| for a squared model,
// fewer under a domain constraint); sizes that need more distinct triples
// than that are refused before any sampling.
func DrawSplits(s Sampler, sz Splits, how Draw, support float64, seed uint64) (*Sampled, error) {
	if sz.Train < 0 || sz.Valid < 0 || sz.Test < 0 || sz.Total() == 0 {
		return nil, fmt.Errorf("synth: split sizes %d/%d/%d: want non-negative sizes, not all zero", sz.Train, sz.Valid, sz.Test)
	}
	need := float64(sz.Total())
	if how == IID {
		need = float64(sz.Valid + sz.Test + min(sz.Train, 1)) // and at least one training triple
	}
	if need > support {
		return nil, fmt.Errorf("synth: %s needs %.0f distinct triples, but the model can draw only %.0f", how, need, support)
	}
	rng := rand.New(rand.NewPCG(seed, 0x5e7))
	out := &Sampled{}
	seen := map[kg.Triple]struct{}{}
	// distinct draws n triples never drawn before, in the order drawn.
	distinct := func(n int) ([]kg.Triple, error) {
		var got []kg.Triple
		for len(got) < n {
			if out.Draws > 50*sz.Total()+1000 {
				return nil, fmt.Errorf("synth: %w", errExhausted)
			}
			batch, err := s.Sample(request(n-len(got)), rng)
			if err != nil {
				return nil, err
			}
			for _, t := range batch {
				if len(got) == n {
					break
				}
				out.Draws++
				if _, old := seen[t]; !old {
					seen[t] = struct{}{}
					got = append(got, t)
				}
			}
		}
		return got, nil
	}
	// Drawn without replacement, early triples are the probable ones: the
	// set is shuffled before it is split, so the splits are exchangeable.
	split := func(ts []kg.Triple, sizes ...int) [][]kg.Triple {
		rng.Shuffle(len(ts), func(i, j int) { ts[i], ts[j] = ts[j], ts[i] })
		var parts [][]kg.Triple
		for _, n := range sizes {
			parts = append(parts, ts[:n:n])
			ts = ts[n:]
		}
		return parts
	}
	if how == Distinct {
		all, err := distinct(sz.Total())
		if err != nil {
			return nil, err
		}
		p := split(all, sz.Train, sz.Valid, sz.Test)
		out.Train, out.Valid, out.Test = p[0], p[1], p[2]
		return out, nil
	}
	// i.i.d.: the held-out triples first (distinct), then training triples
	// drawn independently from the model conditioned on not being held out.
	held, err := distinct(sz.Valid + sz.Test)
	if err != nil {
		return nil, err
	}
	p := split(held, sz.Valid, sz.Test)
	out.Valid, out.Test = p[0], p[1]
	for len(out.Train) < sz.Train {
		if out.Draws > 50*sz.Total()+1000 {
			return nil, fmt.Errorf("synth: %w", errExhausted)
		}
		batch, err := s.Sample(request(sz.Train-len(out.Train)), rng)
		if err != nil {
			return nil, err
		}
		for _, t := range batch {
			if len(out.Train) == sz.Train {
				break
			}
			out.Draws++
			if _, old := seen[t]; !old {
				out.Train = append(out.Train, t)
			}
		}
	}
	return out, nil
}

// request is how many triples to ask a sampler for when want more are
// needed: a few more for the repeats, and never fewer than 4096, since a
// call has a fixed cost (p(R), the query program's batch) that small calls
// would pay again and again near the end of a distinct draw.
func request(want int) int { return min(max(want+want/4+16, 4096), 1<<20) }
