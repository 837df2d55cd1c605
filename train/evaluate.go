package train

import (
	"errors"

	"fmt"
	"gekc/dist"
	"math/rand/v2"

	"gekc/kg"
	"gekc/metrics"
	"gekc/models"
)

// split is an evaluation split: its triples and, for OGB data sets, the
// supplied negative heads and tails of each.
type split struct {
	triples      []kg.Triple
	heads, tails [][]int32
	negatives    *metrics.NegativeSampler // sampled negatives (EvalConfig.Negatives), when heads is nil
}

// Seeds of the sampled negatives of each split: constants, so that every
// run of every grid ranks a triple against the same negatives.
const (
	validNegativesSeed = 0x7a11d
	testNegativesSeed  = 0x7e57
)

// withNegatives gives valid and test sampled negatives when cfg asks for
// them and the data set ships none, each filtered by its split's filter.
func withNegatives(valid, test split, ds *kg.Dataset, validFilter, testFilter *kg.Filter, cfg EvalConfig) (split, split, error) {
	if cfg.Negatives <= 0 || valid.heads != nil {
		return valid, test, nil
	}
	var err error
	n := ds.Entities.Len()
	if valid.negatives, err = metrics.NewNegativeSampler(cfg.Negatives, validNegativesSeed, n, ds.Schema, validFilter); err != nil {
		return valid, test, err
	}
	test.negatives, err = metrics.NewNegativeSampler(cfg.Negatives, testNegativesSeed, n, ds.Schema, testFilter)
	return valid, test, err
}

func splitsOf(ds *kg.Dataset) (valid, test split) {
	valid, test = split{triples: ds.Valid}, split{triples: ds.Test}
	if n := ds.Negatives; n != nil {
		valid.heads, valid.tails = n.ValidHead, n.ValidTail
		test.heads, test.tails = n.TestHead, n.TestTail
	}
	return valid, test
}

// subset returns a seeded random subset of at most n triples (all if n ≤ 0),
// with their negatives.
func (s split) subset(n int, seed uint64) split {
	if n <= 0 || n >= len(s.triples) {
		return s
	}
	rng := rand.New(rand.NewPCG(seed, 0xfeed))
	idx := rng.Perm(len(s.triples))[:n]
	out := split{triples: make([]kg.Triple, n), negatives: s.negatives}
	for i, j := range idx {
		out.triples[i] = s.triples[j]
		if s.heads != nil {
			out.heads = append(out.heads, s.heads[j])
			out.tails = append(out.tails, s.tails[j])
		}
	}
	return out
}

// evaluator is what a run's evaluation asks of the model beyond
// metrics.Evaluator's other queries: metrics.Evaluator itself, or, in a
// sharded run, dist.Evaluator, each process ranking against its own rows.
type evaluator interface {
	Rank(triples []kg.Triple, filter *kg.Filter, policy metrics.TiePolicy, hits []int) (metrics.Ranking, error)
	RankSampled(triples []kg.Triple, ns *metrics.NegativeSampler, hits []int) (metrics.Ranking, error)
	RankAgainst(triples []kg.Triple, heads, tails [][]int32, hits []int) (metrics.Ranking, error)
	LogLikelihood(triples []kg.Triple) (float64, error)
}

// evaluators are a run's: ev ranks and scores, whole answers the queries
// only a whole model answers (relation ranks, Sem@k, calibration).
type evaluators struct {
	ev    evaluator
	whole *metrics.Evaluator
}

// newEvaluators builds a run's evaluators and sets mem's evaluation parts:
// metrics.Evaluator, its batch cut to what the budget leaves; in a sharded
// run the sharded evaluator only, its candidate buffers within the
// configured cap.
func newEvaluators(cfg Config, m *models.Model, dom *models.Domain, shard *dist.Stepper, mem *Memory) (evaluators, error) {
	if shard != nil {
		ev, err := shard.Evaluator(evalLimit(cfg, mem.Total()).Batch)
		if err != nil {
			return evaluators{}, err
		}
		mem.Eval, mem.EvalBatch = ev.BufferBytes(), ev.Queries()
		return evaluators{ev: ev}, nil
	}
	ev, err := metrics.NewEvaluatorWithin(m, dom, cfg.Eval.BatchSize, evalLimit(cfg, mem.Total()))
	if err != nil {
		return evaluators{}, err
	}
	mem.Eval, mem.EvalBatch = ev.BufferBytes(), ev.BatchSize()
	return evaluators{ev: ev, whole: ev}, nil
}

// validationMetrics evaluates the model on the validation split, after an
// epoch or, for a distilled model, before the first. A variable so that a
// test can script the scores that early stopping and model selection see.
var validationMetrics = func(evs evaluators, sp split, filter *kg.Filter, schema *kg.Schema, cfg EvalConfig) (map[string]float64, error) {
	return evaluate(evs, sp, filter, schema, cfg, true)
}

// evaluate computes ranking metrics (and the log-likelihood and Sem@k when
// asked and possible) on a split.
func evaluate(evs evaluators, sp split, filter *kg.Filter, schema *kg.Schema, cfg EvalConfig, validation bool) (map[string]float64, error) {
	ev := evs.ev
	out := map[string]float64{}
	triples := sp.triples
	if len(triples) == 0 {
		return out, nil
	}
	needRank := !validation || cfg.Select == "mrr"
	if needRank {
		var r metrics.Ranking
		var err error
		switch {
		case sp.heads != nil:
			r, err = ev.RankAgainst(triples, sp.heads, sp.tails, cfg.Hits)
		case sp.negatives != nil:
			r, err = ev.RankSampled(triples, sp.negatives, cfg.Hits)
		default:
			r, err = ev.Rank(triples, filter, cfg.TiePolicy, cfg.Hits)
		}
		if err != nil {
			return nil, err
		}
		out["mrr"] = r.MRR
		out["mrr_subject"], out["mrr_object"] = r.MRRSubject, r.MRRObject
		for k, v := range r.Hits {
			out[fmt.Sprintf("hits@%d", k)] = v
		}
		if r.NonFinite > 0 {
			out["nonfinite"] = float64(r.NonFinite)
		}
		if cfg.Relations {
			rr, err := evs.whole.RankRelations(triples, filter, cfg.TiePolicy, cfg.Hits)
			if err != nil {
				return nil, err
			}
			out["mrr_relation"] = rr.MRR
			for k, v := range rr.Hits {
				out[fmt.Sprintf("hits@%d_relation", k)] = v
			}
			if rr.NonFinite > 0 {
				out["nonfinite_relation"] = float64(rr.NonFinite)
			}
		}
	}
	if cfg.LogLikelihood || cfg.Select == "ll" {
		ll, err := ev.LogLikelihood(triples)
		switch {
		case errors.Is(err, models.ErrIntractable):
		case err != nil:
			return nil, err
		default:
			out["ll"] = ll
		}
	}
	for _, sem := range []struct {
		ks     []int
		filter *kg.Filter
		name   string
	}{{cfg.SemK, filter, "sem@%d"}, {cfg.SemUnfilteredK, nil, "sem_unfiltered@%d"}} {
		if len(sem.ks) == 0 || validation {
			continue
		}
		at, err := evs.whole.Sem(triples, schema, sem.ks, sem.filter)
		if err != nil {
			return nil, err
		}
		for k, v := range at {
			out[fmt.Sprintf(sem.name, k)] = v
		}
	}
	return out, nil
}

// calibrationStream is the PCG stream of the hard negatives' draws, so that
// they depend on the run's seed only and any later analysis of the same run
// (Calibrate with the same seed) draws the same ones.
const calibrationStream = 0xece

// Calibrate returns the calibration of ev's model on the test triples of ds
// against one hard negative each (metrics.HardNegatives, drawn with seed),
// the min-max range being that of the training triples' log-scores. filter
// must hold the known triples: train, valid and test.
func Calibrate(ev *metrics.Evaluator, ds *kg.Dataset, filter *kg.Filter, seed uint64) (*metrics.Calibration, error) {
	neg := metrics.HardNegatives(ds.Test, ds.Train, filter, rand.New(rand.NewPCG(seed, calibrationStream)))
	c, err := ev.Calibration(ds.Test, neg, ds.Train)
	if err != nil {
		return nil, fmt.Errorf("train: calibration on %s: %w", ds.Name, err)
	}
	return c, nil
}

// addCalibration computes Calibrate and records both ECEs in out.
func addCalibration(out map[string]float64, ev *metrics.Evaluator, ds *kg.Dataset, filter *kg.Filter, seed uint64) (*metrics.Calibration, error) {
	c, err := Calibrate(ev, ds, filter, seed)
	if err != nil {
		return nil, err
	}
	out["ece_logistic"], out["ece_minmax"] = c.Logistic.ECE, c.MinMax.ECE
	return c, nil
}
