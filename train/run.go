package train

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"gekc/kg"
	"gekc/metrics"
	"gekc/models"
	"gekc/objectives"

	"gorgonia.org/tensor"
)

// Config is one training run.
type Config struct {
	Model        string // registry name, e.g. "complex2"
	Rank         int
	RelationRank int
	Objective    objectives.Objective
	LearningRate float64
	BatchSize    int
	Epochs       int // maximum
	Patience     int // validations without improvement before stopping; 0: never stop early
	Seed         uint64
	Dtype        tensor.Dtype
	InitScale    float64
	EpsMass      float64
	Eval         EvalConfig
	// Init, when set, is copied into the new model's parameters before
	// training (distillation from another run's checkpoint); the test
	// metrics of the model as initialised are then reported in
	// Result.Initial.
	Init func(m *models.Model) error
	// Constrained multiplies the model by the dataset's domain constraint
	// (its Schema): training, ranking and log-likelihoods are those of the
	// constrained GeKC, which puts no mass on inconsistent triples.
	Constrained bool
	// Resume continues a run from the State it saved after an epoch (see
	// SaveState) instead of starting afresh; Init is then not applied,
	// the state's parameters being the ones to continue from.
	Resume *State
	// SaveState, when set, is called after every epoch that does not end
	// the run, with the State to resume from, and once more when ctx is
	// cancelled during training, with the State at the step boundary where
	// training stopped (State.Batch > 0 inside an epoch): a run told to stop
	// (SIGTERM, a SLURM time limit) loses no step. Its tensors alias the
	// live ones: the function must copy or write them out before it
	// returns. An error from it ends the run with that error.
	SaveState func(*State) error
}

// EvalConfig controls validation and testing.
type EvalConfig struct {
	TiePolicy metrics.TiePolicy
	Hits      []int
	BatchSize int
	Select    string // "mrr" or "ll": early stopping and best-epoch metric
	// MinDelta is the least rise of the Select metric that counts as an
	// improvement (0: any rise); LLMinDelta that of the validation
	// log-likelihood, for StopOnLL and Result.LL. The paper's code uses
	// 2e-4 on the MRR and 0.02 nats.
	MinDelta, LLMinDelta float64
	// StopOnLL makes early stopping wait, as the paper's code does, until
	// neither the Select metric nor the validation log-likelihood has
	// improved for Patience validations. For a model without a
	// log-likelihood (or without "ll" among the validation metrics) it
	// changes nothing.
	StopOnLL bool
	Every    int // validate every so many epochs
	MaxValid int // evaluate on a seeded subset of this many validation triples (0: all)
	// LogLikelihood adds the average log-likelihood ("ll") to the metrics of
	// models that can compute it.
	LogLikelihood bool
	// SemK, when not empty, adds Sem@k ("sem@k") for these k, its
	// candidates filtered as for the MRR (the paper's definition); the
	// dataset needs a Schema.
	SemK []int
	// SemUnfilteredK adds the unfiltered variant ("sem_unfiltered@k"),
	// which ranks every entity.
	SemUnfilteredK []int
	// Relations adds the filtered ranking of relation queries (s, ?, o):
	// "mrr_relation" and "hits@k_relation". "mrr" and "hits@k" stay the
	// subject and object queries' mean.
	Relations bool
	// ECE adds the empirical calibration error of the test triples against
	// hard negatives to the test metrics, under the logistic and the min-max
	// mapping of log-scores to probabilities ("ece_logistic",
	// "ece_minmax"); see Calibrate. Validation never computes it: it is not
	// a selection metric.
	ECE bool
	// SkipTest leaves the test split alone (e.g. for smoke runs).
	SkipTest bool
}

// Observer receives progress; every method may be a no-op.
type Observer interface {
	EpochStart(epoch, steps int)
	Step(done int, runningLoss float64)
	EpochEnd(rec EpochRecord)
	Log(msg string)
}

// EpochRecord summarises one epoch.
type EpochRecord struct {
	Epoch       int
	TrainLoss   float64
	Seconds     float64            // training time of the epoch
	EvalSeconds float64            // validation time after it (0 if none)
	Valid       map[string]float64 // nil when the epoch was not validated
}

// Status is how a run ended.
type Status string

const (
	Finished Status = "finished"
	Diverged Status = "diverged"
)

// Result is the outcome of Run.
type Result struct {
	Status      Status
	Epochs      []EpochRecord
	BestEpoch   int
	Valid, Test map[string]float64
	// LL follows the best validation log-likelihood, whichever metric
	// selects the model; its test log-likelihood is also in Test as
	// "ll_at_best_ll" (the number the paper reports). Its Epoch is -1 when
	// the validation had no log-likelihood, or when the run resumed from a
	// state written before runs tracked it.
	LL          LLTrack
	Model       *models.Model      // with the best validated parameters
	StepSeconds float64            // mean seconds per optimisation step
	Initial     map[string]float64 // test metrics before training, when Config.Init is set
	// Calibration holds the reliability bins behind the test ECE metrics,
	// for diagrams; nil unless EvalConfig.ECE was set and the test split
	// evaluated.
	Calibration *metrics.Calibration
	Notes       []string
}

// Run trains a model on ds according to cfg.
func Run(ctx context.Context, cfg Config, ds *kg.Dataset, obs Observer) (*Result, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if obs == nil {
		obs = nopObserver{}
	}
	sz := models.Sizes{Entities: ds.Entities.Len(), Relations: ds.Relations.Len(), Rank: cfg.Rank, RelationRank: cfg.RelationRank}
	m, err := models.New(cfg.Model, sz, models.Options{Seed: cfg.Seed, Dtype: cfg.Dtype, InitScale: cfg.InitScale, EpsMass: cfg.EpsMass})
	if err != nil {
		return nil, err
	}
	if cfg.Init != nil && cfg.Resume == nil {
		if err := cfg.Init(m); err != nil {
			return nil, fmt.Errorf("train: initialising from checkpoint: %w", err)
		}
	}
	var dom *models.Domain
	if cfg.Constrained {
		if ds.Schema == nil {
			return nil, fmt.Errorf("train: domain constraints on %s: the dataset has no schema (entity_types.tsv and relation_schema.tsv)", ds.Name)
		}
		if dom, err = models.DomainFromSchema(ds.Schema); err != nil {
			return nil, err
		}
	}
	if len(cfg.Eval.SemK)+len(cfg.Eval.SemUnfilteredK) > 0 && ds.Schema == nil {
		return nil, fmt.Errorf("train: Sem@k on %s: the dataset has no schema (entity_types.tsv and relation_schema.tsv)", ds.Name)
	}
	st, err := NewConstrainedStepper(m, dom, cfg.Objective, cfg.BatchSize, cfg.LearningRate)
	if err != nil {
		return nil, err
	}
	ev, err := metrics.NewConstrainedEvaluator(m, dom, cfg.Eval.BatchSize)
	if err != nil {
		return nil, err
	}
	filter := kg.NewFilter(ds.Train, ds.Valid, ds.Test)
	validSplit, testSplit := splitsOf(ds)
	valid := validSplit.subset(cfg.Eval.MaxValid, cfg.Seed)
	res := &Result{Status: Finished, Model: m}
	if cfg.Eval.Select == "ll" && m.Semantics == models.Energy {
		return nil, fmt.Errorf("train: %s cannot select on log-likelihood: %w", cfg.Model, models.ErrIntractable)
	}
	if ds.Negatives != nil {
		res.Notes = append(res.Notes, "ranking: OGB protocol, against the dataset's supplied negative heads and tails (ties count half)")
	}
	if cfg.Init != nil && cfg.Resume == nil && !cfg.Eval.SkipTest {
		if res.Initial, err = evaluate(ev, testSplit, filter, ds.Schema, cfg.Eval, false); err != nil {
			return nil, err
		}
		if cfg.Eval.ECE && len(testSplit.triples) > 0 {
			if _, err := addCalibration(res.Initial, ev, ds, filter, cfg.Seed); err != nil {
				return nil, err
			}
		}
	}

	stop := newStopping(cfg.Eval, cfg.Patience)
	snapshot := snapshotOf(m)
	var steps int
	var stepTime time.Duration
	var resumeNotes []string
	train := append([]kg.Triple(nil), ds.Train...)
	first := 1
	var firstBatch int // steps of epoch `first` taken before a mid-epoch resume
	var firstLoss, firstSeconds float64
	if r := cfg.Resume; r != nil {
		if err := r.restore(m, snapshot, st.Adam()); err != nil {
			return nil, err
		}
		stop.best, stop.bestEpoch, stop.since = r.Best, r.BestEpoch, r.Since
		if r.LL != nil {
			stop.ll = *r.LL
		} else {
			stop.llTracked = false
		}
		steps, stepTime = r.Steps, time.Duration(r.StepSeconds*float64(time.Second))
		res.Epochs = append(res.Epochs, r.Epochs...)
		res.Initial = r.Initial
		note := fmt.Sprintf("resumed after epoch %d", r.Epoch)
		if r.Batch > 0 {
			note = fmt.Sprintf("resumed in epoch %d after step %d", r.Epoch+1, r.Batch)
		}
		resumeNotes = append(slices.Clip(r.Notes), note)
		res.Notes = append(res.Notes, resumeNotes...)
		obs.Log(resumeNotes[len(resumeNotes)-1])
		for e := 1; e <= r.Epoch; e++ {
			shuffleEpoch(train, cfg.Seed, e)
		}
		first = r.Epoch + 1
		firstBatch, firstLoss, firstSeconds = r.Batch, r.EpochLoss, r.EpochSeconds
		if nb := (len(train) + cfg.BatchSize - 1) / cfg.BatchSize; firstBatch >= nb || (firstBatch > 0 && first > cfg.Epochs) {
			return nil, fmt.Errorf("train: resume state is at step %d of epoch %d, which has %d steps of %d epochs: %w",
				firstBatch, first, nb, cfg.Epochs, ErrStateMismatch)
		}
		if stop.stop() {
			first = cfg.Epochs + 1 // it had stopped early: only the test is left
		}
	} else if cfg.Init != nil {
		// A converted model competes with its own fine-tuning: if no
		// fine-tuning epoch validates better, the result is the model as
		// converted (epoch 0), not the least bad fine-tuned one.
		vm, err := validationMetrics(ev, valid, filter, ds.Schema, cfg.Eval)
		if err != nil {
			return nil, err
		}
		if score := vm[cfg.Eval.Select]; !math.IsNaN(score) {
			stop.observe(0, vm)
			snapshot.take(m)
			if err := stop.testLL(ev, testSplit, cfg.Eval); err != nil {
				return nil, err
			}
		}
		res.Epochs = append(res.Epochs, EpochRecord{Epoch: 0, TrainLoss: math.NaN(), Valid: vm})
	}
	for epoch := first; epoch <= cfg.Epochs; epoch++ {
		shuffleEpoch(train, cfg.Seed, epoch)
		nb := (len(train) + cfg.BatchSize - 1) / cfg.BatchSize
		obs.EpochStart(epoch, nb)
		start := time.Now()
		var sum float64
		i0 := 0
		if epoch == first && firstBatch > 0 {
			i0, sum = firstBatch, firstLoss
			start = start.Add(-time.Duration(firstSeconds * float64(time.Second)))
		}
		for i := i0; i < nb; i++ {
			if err := ctx.Err(); err != nil {
				if cfg.SaveState != nil {
					s := stateOf(m, snapshot, st.Adam(), res, epoch-1, steps, stepTime.Seconds(), stop, resumeNotes)
					s.Batch, s.EpochLoss, s.EpochSeconds = i, sum, time.Since(start).Seconds()
					if serr := cfg.SaveState(s); serr != nil {
						return nil, fmt.Errorf("train: saving the state at step %d of epoch %d: %w (stopped: %w)", i, epoch, serr, err)
					}
				}
				return nil, err
			}
			batch := train[i*cfg.BatchSize : min((i+1)*cfg.BatchSize, len(train))]
			t0 := time.Now()
			loss, err := st.Step(batch)
			stepTime += time.Since(t0)
			steps++
			if errors.Is(err, ErrDiverged) {
				res.Status = Diverged
				res.Notes = append(res.Notes, fmt.Sprintf("diverged at epoch %d, step %d (loss %v)", epoch, i+1, loss))
				obs.Log(res.Notes[len(res.Notes)-1])
				res.Epochs = append(res.Epochs, EpochRecord{Epoch: epoch, TrainLoss: loss, Seconds: time.Since(start).Seconds()})
				res.StepSeconds = stepTime.Seconds() / float64(steps)
				return res, nil
			}
			if err != nil {
				return nil, err
			}
			sum += loss * float64(len(batch))
			obs.Step(i+1, sum/float64(min((i+1)*cfg.BatchSize, len(train))))
		}
		rec := EpochRecord{Epoch: epoch, TrainLoss: sum / float64(len(train)), Seconds: time.Since(start).Seconds()}
		if epoch%cfg.Eval.Every == 0 || epoch == cfg.Epochs {
			t0 := time.Now()
			vm, err := validationMetrics(ev, valid, filter, ds.Schema, cfg.Eval)
			if err != nil {
				return nil, err
			}
			rec.Valid, rec.EvalSeconds = vm, time.Since(t0).Seconds()
			score := vm[cfg.Eval.Select]
			if math.IsNaN(score) {
				res.Status = Diverged
				res.Notes = append(res.Notes, fmt.Sprintf("validation %s is NaN at epoch %d", cfg.Eval.Select, epoch))
				res.Epochs = append(res.Epochs, rec)
				obs.EpochEnd(rec)
				break
			}
			improved, llImproved := stop.observe(epoch, vm)
			if improved {
				snapshot.take(m)
			}
			if llImproved {
				if err := stop.testLL(ev, testSplit, cfg.Eval); err != nil {
					return nil, err
				}
			}
		}
		res.Epochs = append(res.Epochs, rec)
		obs.EpochEnd(rec)
		if cfg.SaveState != nil && !stop.stop() && epoch < cfg.Epochs {
			s := stateOf(m, snapshot, st.Adam(), res, epoch, steps, stepTime.Seconds(), stop, resumeNotes)
			if err := cfg.SaveState(s); err != nil {
				return nil, fmt.Errorf("train: saving the state after epoch %d: %w", epoch, err)
			}
			// A stop that came during the epoch's validation: this state is
			// the one to resume from; saving it again at the next step would
			// write the same ~0.5 GB twice inside a SLURM warning window.
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		if stop.stop() {
			msg := fmt.Sprintf("early stop at epoch %d: validation %s did not improve for %d evaluations (best %.4f at epoch %d)",
				epoch, cfg.Eval.Select, stop.since, stop.best, stop.bestEpoch)
			if cfg.Eval.StopOnLL && stop.llTracked && stop.ll.Epoch >= 0 {
				msg += fmt.Sprintf(", nor the log-likelihood for %d (best %.4f at epoch %d)", stop.ll.Since, stop.ll.Best, stop.ll.Epoch)
			}
			obs.Log(msg)
			break
		}
	}
	res.StepSeconds = stepTime.Seconds() / float64(max(steps, 1))
	bestEpoch := stop.bestEpoch
	if bestEpoch < 0 {
		if res.Status == Diverged {
			return res, nil
		}
		return nil, errors.New("train: no validation happened")
	}
	snapshot.restore(m)
	res.BestEpoch = bestEpoch
	res.LL = newLLTrack()
	if stop.llTracked {
		res.LL = stop.ll
	} else if stop.ll.Epoch >= 0 {
		res.Notes = append(res.Notes, "no test log-likelihood at the best validation log-likelihood: the run resumed from a state written before runs tracked it")
	}
	for _, r := range res.Epochs {
		if r.Epoch == bestEpoch {
			res.Valid = r.Valid
		}
	}
	if !cfg.Eval.SkipTest {
		if res.Test, err = evaluate(ev, testSplit, filter, ds.Schema, cfg.Eval, false); err != nil {
			return nil, err
		}
		if !math.IsNaN(res.LL.Test) {
			res.Test["ll_at_best_ll"] = res.LL.Test
		}
		if cfg.Eval.ECE && len(testSplit.triples) > 0 {
			if res.Calibration, err = addCalibration(res.Test, ev, ds, filter, cfg.Seed); err != nil {
				return nil, err
			}
			if n := res.Calibration.NaN; n > 0 {
				res.Notes = append(res.Notes, fmt.Sprintf("calibration: %d test triples or negatives with a NaN log-score left out", n))
			}
		}
	}
	if m.Semantics == models.Energy {
		res.Notes = append(res.Notes, "log-likelihood unavailable: energy-based model (intractable partition function)")
	}
	return res, nil
}

func (c *Config) validate() error {
	switch {
	case c.Objective == nil:
		return errors.New("train: no objective")
	case c.BatchSize <= 0, c.Epochs <= 0, c.Rank <= 0:
		return fmt.Errorf("train: batch size, epochs and rank must be positive (%d, %d, %d)", c.BatchSize, c.Epochs, c.Rank)
	case c.LearningRate <= 0:
		return fmt.Errorf("train: learning rate %g", c.LearningRate)
	}
	if c.Patience <= 0 {
		c.Patience = math.MaxInt
	}
	if c.Eval.BatchSize <= 0 {
		c.Eval.BatchSize = 1000
	}
	if c.Eval.Every <= 0 {
		c.Eval.Every = 1
	}
	if c.Eval.Select == "" {
		c.Eval.Select = "mrr"
	}
	if c.Eval.Select != "mrr" && c.Eval.Select != "ll" {
		return fmt.Errorf("train: unknown selection metric %q (mrr, ll)", c.Eval.Select)
	}
	if c.Eval.Hits == nil {
		c.Eval.Hits = []int{1, 3, 10}
	}
	if c.Dtype == (tensor.Dtype{}) {
		c.Dtype = tensor.Float32
	}
	return nil
}

// split is an evaluation split: its triples and, for OGB data sets, the
// supplied negative heads and tails of each.
type split struct {
	triples      []kg.Triple
	heads, tails [][]int32
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
	out := split{triples: make([]kg.Triple, n)}
	for i, j := range idx {
		out.triples[i] = s.triples[j]
		if s.heads != nil {
			out.heads = append(out.heads, s.heads[j])
			out.tails = append(out.tails, s.tails[j])
		}
	}
	return out
}

// validationMetrics evaluates the model on the validation split, after an
// epoch or, for a distilled model, before the first. A variable so that a
// test can script the scores that early stopping and model selection see.
var validationMetrics = func(ev *metrics.Evaluator, sp split, filter *kg.Filter, schema *kg.Schema, cfg EvalConfig) (map[string]float64, error) {
	return evaluate(ev, sp, filter, schema, cfg, true)
}

// evaluate computes ranking metrics (and the log-likelihood and Sem@k when
// asked and possible) on a split.
func evaluate(ev *metrics.Evaluator, sp split, filter *kg.Filter, schema *kg.Schema, cfg EvalConfig, validation bool) (map[string]float64, error) {
	out := map[string]float64{}
	triples := sp.triples
	if len(triples) == 0 {
		return out, nil
	}
	needRank := !validation || cfg.Select == "mrr"
	if needRank {
		var r metrics.Ranking
		var err error
		if sp.heads != nil {
			r, err = ev.RankAgainst(triples, sp.heads, sp.tails, cfg.Hits)
		} else {
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
			rr, err := ev.RankRelations(triples, filter, cfg.TiePolicy, cfg.Hits)
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
		at, err := ev.Sem(triples, schema, sem.ks, sem.filter)
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

// snapshot holds a copy of a model's parameters.
type snapshot map[string]*tensor.Dense

func snapshotOf(m *models.Model) snapshot {
	s := snapshot{}
	for _, n := range m.ParamNames() {
		s[n] = m.Param(n).Clone().(*tensor.Dense)
	}
	return s
}

func (s snapshot) take(m *models.Model) {
	for n, t := range s {
		copyDense(t, m.Param(n))
	}
}

func (s snapshot) restore(m *models.Model) {
	for n, t := range s {
		copyDense(m.Param(n), t)
	}
}

func copyDense(dst, src *tensor.Dense) {
	switch d := dst.Data().(type) {
	case []float32:
		copy(d, src.Data().([]float32))
	case []float64:
		copy(d, src.Data().([]float64))
	}
}

type nopObserver struct{}

func (nopObserver) EpochStart(int, int)  {}
func (nopObserver) Step(int, float64)    {}
func (nopObserver) EpochEnd(EpochRecord) {}
func (nopObserver) Log(string)           {}
