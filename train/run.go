package train

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"gekc/dist"
	"gekc/internal/procstat"
	"gekc/kg"
	"gekc/metrics"
	"gekc/models"

	"gorgonia.org/tensor"
)

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

// Status is how a run ended, in the words of every run record and results
// table (the status column of results.tsv). Run itself returns Finished or
// Diverged; Failed is the runner's, for a run that ended in an error (Run's
// error, a panic), which a resumed sweep retries.
type Status string

const (
	Finished Status = "finished" // trained and evaluated
	Diverged Status = "diverged" // a non-finite loss or validation metric ended it; never selected as best
	Failed   Status = "failed"   // ended in an error; retried on resume
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
	LL LLTrack
	// Model has the best validated parameters; in a sharded run it is
	// this process's part (Part says which rows), which ckpt.WritePart
	// writes whole.
	Model *models.Model
	Part  *StatePart
	// BestLLParams are the parameters at LL.Epoch, by parameter name, when
	// Config.KeepBestLL asked for them and the log-likelihood was
	// validated and did not select; nil otherwise, and when the run
	// resumed from a state that did not keep them (a note says so).
	BestLLParams map[string]*tensor.Dense
	StepSeconds  float64            // mean seconds per optimisation step
	Initial      map[string]float64 // test metrics before training, when Config.Init is set
	// Memory is what the run held, part by part (buffers as allocated by
	// their programs' first runs, data as loaded).
	Memory Memory
	// Calibration holds the reliability bins behind the test ECE metrics,
	// for diagrams; nil unless EvalConfig.ECE was set and the test split
	// evaluated.
	Calibration *metrics.Calibration
	Notes       []string
	// Processes is each process's account of a sharded run (Config.Shard),
	// in rank order; nil for a run on one process.
	Processes []dist.ProcessStats
}

// UseBestLLParams loads BestLLParams into Model and reports whether the run
// kept them; Model is unchanged when it did not.
func (r *Result) UseBestLLParams() bool {
	if r.BestLLParams == nil {
		return false
	}
	snapshot(r.BestLLParams).restore(r.Model)
	return true
}

// Run trains a model on ds according to cfg.
func Run(ctx context.Context, cfg Config, ds *kg.Dataset, obs Observer) (*Result, error) {
	r, err := newRun(ctx, cfg, ds, obs)
	if err != nil {
		return nil, err
	}
	if err := r.start(); err != nil {
		return nil, err
	}
	r.lastSave = time.Now()
	for epoch := r.first; epoch <= r.cfg.Epochs; epoch++ {
		rec, diverged, err := r.trainEpoch(epoch)
		if err != nil {
			return nil, err
		}
		if diverged {
			return r.res, nil
		}
		more, err := r.endEpoch(epoch, rec)
		if err != nil {
			return nil, err
		}
		if !more {
			break
		}
	}
	return r.finish()
}

// run is one call of Run in progress: what it built and how far it got.
type run struct {
	ctx    context.Context
	cfg    Config
	ds     *kg.Dataset
	obs    Observer
	m      *models.Model // in a sharded run, this process's part (Stepper.PartModel)
	st     stepper
	shard  *dist.Stepper // the step's part of a sharded run (Config.Shard); nil otherwise
	evs    evaluators
	filter *kg.Filter
	valid  split // the validation subset early stopping sees
	test   split
	// testDS and testFilter are what the test split is drawn from and
	// filtered by: ds and filter, or Eval.TestOn in ds's vocabulary.
	testDS     *kg.Dataset
	testFilter *kg.Filter
	res        *Result

	stop        *stopping
	best        snapshot // the parameters of the best validated epoch
	bestLL      snapshot // those of the best validation log-likelihood (Config.KeepBestLL); nil when not kept
	bestLLEpoch int      // the epoch bestLL holds; -1 when none
	train       []kg.Triple
	steps       int
	stepTime    time.Duration
	resumeNotes []string  // notes carried from the resumed state, kept in every state saved
	lastSave    time.Time // when SaveState was last called (the run's start before that)

	// The first epoch to train and, after a mid-epoch resume, the steps
	// of it already taken with their summed loss and seconds.
	first, firstBatch       int
	firstLoss, firstSeconds float64

	// groupSaves: some process of the sharded run has a SaveState, so all
	// build its states together.
	groupSaves bool
}

// newRun checks cfg and builds the model, its stepper and evaluator, and,
// for a distilled model, the test metrics as initialised.
func newRun(ctx context.Context, cfg Config, ds *kg.Dataset, obs Observer) (*run, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if obs == nil {
		obs = nopObserver{}
	}
	// What this run holds per process is what its processes' count says,
	// whatever the grid asked for.
	cfg.Processes = 1
	if cfg.Shard != nil {
		cfg.Processes = cfg.Shard.Size()
	}
	if cfg.MemoryBudget > 0 {
		// Refused here, not by the out-of-memory killer hours later.
		if _, err := EstimateMemory(cfg, RunSizes(ds, cfg.Eval.TestOn)); err != nil {
			return nil, err
		}
	}
	var dom *models.Domain
	var err error
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
	opt, err := cfg.Optimizer.New(cfg.LearningRate)
	if err != nil {
		return nil, err
	}
	var m *models.Model
	var steps stepper
	var shard *dist.Stepper
	var mem Memory
	if cfg.Shard != nil {
		// Each process holds its part of the model only.
		steps, shard, m, mem, err = newShardedSteps(cfg, modelSizes(cfg, ds.Entities.Len(), ds.Relations.Len()), opt)
	} else {
		if m, err = NewModel(cfg, ds.Entities.Len(), ds.Relations.Len()); err != nil {
			return nil, err
		}
		if cfg.Init != nil && cfg.Resume == nil {
			if err := cfg.Init(m); err != nil {
				return nil, fmt.Errorf("train: initialising from checkpoint: %w", err)
			}
		}
		steps, mem, err = newSteps(cfg, m, dom, opt)
	}
	if err != nil {
		return nil, err
	}
	filter := kg.NewFilter(ds.Train, ds.Valid, ds.Test)
	mem.Data = dataBytes(SizesOf(ds), filter.Bytes())
	// The data set tested on is held before the evaluator is sized, as
	// EstimateMemory counts it: the evaluation batch is cut to what the run
	// then leaves of its budget.
	testDS, testFilter := ds, filter
	var testOn []kg.Triple
	var testNote string
	if other := cfg.Eval.TestOn; other != nil {
		if other.Negatives != nil {
			return nil, fmt.Errorf("train: testing on %s: its shipped negatives are in its own ids; test on a data set without them", other.Name)
		}
		mapped, dropped := other.InVocabularyOf(ds)
		testDS, testFilter, testOn = mapped, kg.NewFilter(mapped.Train, mapped.Valid, mapped.Test), mapped.Test
		mem.Data += testFilter.Bytes() + 12*int64(len(mapped.Train)+len(mapped.Valid)+len(mapped.Test))
		if other != ds {
			mem.Data += other.Bytes()
		}
		testNote = fmt.Sprintf("tested on %s's test split (%d triples), filtered by its splits", other.Name, len(mapped.Test))
		if n := kg.DroppedNote(other, ds, dropped); n != "" {
			testNote += "; " + n
		}
	}
	evs, err := newEvaluators(cfg, m, dom, shard, &mem)
	if err != nil {
		return nil, err
	}
	validSplit, testSplit := splitsOf(ds)
	if cfg.Eval.TestOn != nil {
		testSplit = split{triples: testOn}
	}
	validSplit, testSplit, err = withNegatives(validSplit, testSplit, ds, filter, testFilter, cfg.Eval)
	if err != nil {
		return nil, err
	}
	r := &run{ctx: ctx, cfg: cfg, ds: ds, obs: obs, m: m, st: steps, shard: shard, evs: evs,
		filter: filter,
		valid:  validSplit.subset(cfg.Eval.MaxValid, cfg.Seed), test: testSplit,
		testDS: testDS, testFilter: testFilter,
		res: &Result{Status: Finished, Model: m, LL: newLLTrack(), Memory: mem}}
	if testNote != "" {
		r.res.Notes = append(r.res.Notes, testNote)
	}
	if shard != nil {
		r.res.Part = r.statePart()
		r.res.Notes = append(r.res.Notes, fmt.Sprintf("sharded over %d processes: entity rows %d–%d here",
			cfg.Shard.Size(), shard.Rows().Lo(cfg.Shard.Rank()), shard.Rows().Hi(cfg.Shard.Rank())-1))
		agreed, err := shard.Agree(cfg.SaveState != nil)
		if err != nil {
			return nil, err
		}
		r.groupSaves = agreed[0]
	}
	if cfg.Eval.Select == "ll" && m.Semantics == models.Energy {
		return nil, fmt.Errorf("train: %s cannot select on log-likelihood: %w", cfg.Model, models.ErrIntractable)
	}
	switch {
	case ds.Negatives != nil:
		r.res.Notes = append(r.res.Notes, "ranking: OGB protocol, against the dataset's supplied negative heads and tails (ties count half)")
	case cfg.Eval.Negatives > 0:
		r.res.Notes = append(r.res.Notes, fmt.Sprintf("ranking: OGB protocol, against %d sampled negatives per side (filtered, type-consistent when typed, the same for every run; ties count half)", cfg.Eval.Negatives))
	}
	if cfg.Init != nil && cfg.Resume == nil && !cfg.Eval.SkipTest {
		if r.res.Initial, err = evaluate(evs, testSplit, r.testFilter, ds.Schema, cfg.Eval, false); err != nil {
			return nil, err
		}
		if cfg.Eval.ECE && len(testSplit.triples) > 0 {
			if _, err := addCalibration(r.res.Initial, evs.whole, r.testDS, r.testFilter, cfg.Seed); err != nil {
				return nil, err
			}
		}
	}
	r.stop = newStopping(cfg.Eval, cfg.Patience)
	r.best = snapshotOf(m)
	if keepsBestLL(cfg, m) {
		r.bestLL = snapshotOf(m)
	}
	r.bestLLEpoch = -1
	r.train = append([]kg.Triple(nil), ds.Train...)
	r.first = 1
	return r, nil
}

// keepsBestLL says whether a run of m under cfg keeps the parameters of
// its best validation log-likelihood apart from the selected ones.
func keepsBestLL(cfg Config, m *models.Model) bool {
	return cfg.KeepBestLL && cfg.Eval.LogLikelihood && cfg.Eval.Select != "ll" && m.Semantics != models.Energy
}

// trainEpoch takes the optimisation steps of one epoch. diverged reports a
// step whose loss diverged: the result is then final (Status Diverged).
func (r *run) trainEpoch(epoch int) (rec EpochRecord, diverged bool, err error) {
	cfg, res := r.cfg, r.res
	shuffleEpoch(r.train, cfg.Seed, epoch)
	nb := (len(r.train) + cfg.BatchSize - 1) / cfg.BatchSize
	r.obs.EpochStart(epoch, nb)
	start := time.Now()
	var sum float64
	i0 := 0
	if epoch == r.first && r.firstBatch > 0 {
		i0, sum = r.firstBatch, r.firstLoss
		start = start.Add(-Seconds(r.firstSeconds))
	}
	for i := i0; i < nb; i++ {
		// A long epoch is also saved inside it, so that a kill without
		// warning (SIGKILL, a node lost) costs at most StateEvery of work.
		stop, save, err := r.boundary(i > i0 && cfg.StateEvery > 0 && time.Since(r.lastSave) >= cfg.StateEvery)
		if err != nil {
			return rec, false, err
		}
		if stop != nil {
			if serr := r.saveInEpoch(epoch, i, sum, &start); serr != nil {
				return rec, false, fmt.Errorf("%w (stopped: %w)", serr, stop)
			}
			return rec, false, stop
		}
		if save {
			if err := r.saveInEpoch(epoch, i, sum, &start); err != nil {
				return rec, false, err
			}
		}
		batch := r.train[i*cfg.BatchSize : min((i+1)*cfg.BatchSize, len(r.train))]
		t0 := time.Now()
		loss, err := r.st.Step(batch)
		r.stepTime += time.Since(t0)
		r.steps++
		if errors.Is(err, ErrDiverged) {
			res.Status = Diverged
			res.Notes = append(res.Notes, fmt.Sprintf("diverged at epoch %d, step %d (loss %v)", epoch, i+1, loss))
			r.obs.Log(res.Notes[len(res.Notes)-1])
			res.Epochs = append(res.Epochs, EpochRecord{Epoch: epoch, TrainLoss: loss, Seconds: time.Since(start).Seconds()})
			res.StepSeconds = r.stepTime.Seconds() / float64(r.steps)
			return rec, true, nil
		}
		if err != nil {
			return rec, false, err
		}
		sum += loss * float64(len(batch))
		r.obs.Step(i+1, sum/float64(min((i+1)*cfg.BatchSize, len(r.train))))
	}
	return EpochRecord{Epoch: epoch, TrainLoss: sum / float64(len(r.train)), Seconds: time.Since(start).Seconds()}, false, nil
}

// saveInEpoch hands SaveState the state at the boundary before step i of
// epoch (State.Batch = i), with the epoch's summed loss and seconds so far,
// and moves *start on by the save's own time: the epoch's seconds are
// training's, not the disk's.
func (r *run) saveInEpoch(epoch, i int, sum float64, start *time.Time) error {
	if !r.saves() {
		return nil
	}
	s := r.state(epoch - 1)
	s.Batch, s.EpochLoss, s.EpochSeconds = i, sum, time.Since(*start).Seconds()
	r.lastSave = time.Now()
	if err := r.save(s); err != nil {
		return fmt.Errorf("train: saving the state at step %d of epoch %d: %w", i, epoch, err)
	}
	*start = start.Add(time.Since(r.lastSave))
	return nil
}

// endEpoch validates after an epoch when due, keeps the best parameters,
// saves the state to resume from and decides on early stopping; more
// reports whether training goes on.
func (r *run) endEpoch(epoch int, rec EpochRecord) (more bool, err error) {
	cfg, res, stop := r.cfg, r.res, r.stop
	if epoch%cfg.Eval.Every == 0 || epoch == cfg.Epochs {
		nan, err := r.validate(epoch, &rec)
		if err != nil {
			return false, err
		}
		if nan {
			res.Status = Diverged
			res.Notes = append(res.Notes, fmt.Sprintf("validation %s is NaN at epoch %d", cfg.Eval.Select, epoch))
			res.Epochs = append(res.Epochs, rec)
			r.obs.EpochEnd(rec)
			return false, nil
		}
	}
	res.Epochs = append(res.Epochs, rec)
	r.obs.EpochEnd(rec)
	stopping, due, err := r.boundary(time.Since(r.lastSave) >= cfg.StateEvery)
	if err != nil {
		return false, err
	}
	last := stop.stop() || epoch >= cfg.Epochs
	if r.saves() && (!last && (due || stopping != nil) || last && cfg.SaveFinal) {
		r.lastSave = time.Now()
		if err := r.save(r.state(epoch)); err != nil {
			return false, fmt.Errorf("train: saving the state after epoch %d: %w", epoch, err)
		}
		// A stop that came during the epoch's validation: this state is
		// the one to resume from; saving it again at the next step would
		// write the same ~0.5 GB twice inside a SLURM warning window.
		if stopping != nil {
			return false, stopping
		}
	}
	if stop.stop() {
		msg := fmt.Sprintf("early stop at epoch %d: validation %s did not improve for %d evaluations (best %.4f at epoch %d)",
			epoch, cfg.Eval.Select, stop.since, stop.best, stop.bestEpoch)
		if cfg.Eval.StopOnLL && stop.llTracked && stop.ll.Epoch >= 0 {
			msg += fmt.Sprintf(", nor the log-likelihood for %d (best %.4f at epoch %d)", stop.ll.Since, stop.ll.Best, stop.ll.Epoch)
		}
		r.obs.Log(msg)
		if note := stillFalling(res.Epochs, stop.since*cfg.Eval.Every); note != "" {
			res.Notes = append(res.Notes, note)
			r.obs.Log(note)
		}
		return false, nil
	}
	return true, nil
}

// validate evaluates the model after epoch into rec and lets early stopping
// observe it: an improvement of the selection metric snapshots the
// parameters, one of the log-likelihood evaluates the test log-likelihood.
// nan reports a NaN selection metric, which nothing observes.
func (r *run) validate(epoch int, rec *EpochRecord) (nan bool, err error) {
	t0 := time.Now()
	vm, err := r.validationMetrics()
	if err != nil {
		return false, err
	}
	rec.Valid, rec.EvalSeconds = vm, time.Since(t0).Seconds()
	if math.IsNaN(vm[r.cfg.Eval.Select]) {
		return true, nil
	}
	improved, llImproved := r.stop.observe(epoch, vm)
	if improved {
		r.best.take(r.m)
	}
	if llImproved {
		if r.bestLL != nil {
			r.bestLL.take(r.m)
			r.bestLLEpoch = epoch
		}
		if err := r.stop.testLL(r.evs.ev, r.test, r.cfg.Eval); err != nil {
			return false, err
		}
	}
	return false, nil
}

// state is the State to resume from after epoch.
func (r *run) state(epoch int) *State {
	var bestLL snapshot // saved only when it is the LL track's, else a resume would take it for that
	if r.bestLLInStep() {
		bestLL = r.bestLL
	}
	if r.shard != nil {
		return r.partState(epoch, bestLL)
	}
	return stateOf(r.m, r.best, bestLL, r.st.Optimizer(), r.res, epoch, r.steps, r.stepTime.Seconds(), r.stop, r.resumeNotes)
}

// bestLLInStep says whether bestLL holds the parameters of the epoch the
// log-likelihood track names: not after a resume from a state that did not
// keep them (or tracked no LL), until the log-likelihood improves again.
func (r *run) bestLLInStep() bool {
	return r.bestLL != nil && r.stop.llTracked && r.bestLLEpoch == r.stop.ll.Epoch
}

// finish restores the best validated parameters and evaluates them on the
// test split.
func (r *run) finish() (*Result, error) {
	cfg, res, stop := r.cfg, r.res, r.stop
	res.StepSeconds = r.stepTime.Seconds() / float64(max(r.steps, 1))
	if r.shard != nil {
		rss, _ := procstat.PeakRSS() // 0 where /proc has none
		var err error
		if res.Processes, err = r.shard.Processes(rss); err != nil {
			return nil, err
		}
	}
	bestEpoch := stop.bestEpoch
	if bestEpoch < 0 {
		if res.Status == Diverged {
			return res, nil
		}
		return nil, errors.New("train: no validation happened")
	}
	r.best.restore(r.m)
	res.BestEpoch = bestEpoch
	switch {
	case r.bestLL == nil || stop.ll.Epoch < 0:
	case r.bestLLInStep():
		res.BestLLParams = r.bestLL
	case !stop.llTracked:
		res.Notes = append(res.Notes, "the parameters at the best validation log-likelihood were not kept: the run resumed from a state written before runs tracked it")
	default:
		res.Notes = append(res.Notes, fmt.Sprintf("the parameters at the best validation log-likelihood (epoch %d) were not kept: the run resumed from a state that did not keep them", stop.ll.Epoch))
	}
	res.LL = newLLTrack()
	if stop.llTracked {
		res.LL = stop.ll
	} else if stop.ll.Epoch >= 0 {
		res.Notes = append(res.Notes, "no test log-likelihood at the best validation log-likelihood: the run resumed from a state written before runs tracked it")
	}
	for _, e := range res.Epochs {
		if e.Epoch == bestEpoch {
			res.Valid = e.Valid
		}
	}
	if !cfg.Eval.SkipTest && !cfg.Eval.NoFinalTest {
		var err error
		if res.Test, err = evaluate(r.evs, r.test, r.testFilter, r.ds.Schema, cfg.Eval, false); err != nil {
			return nil, err
		}
		if !math.IsNaN(res.LL.Test) {
			res.Test["ll_at_best_ll"] = res.LL.Test
		}
		if cfg.Eval.ECE && len(r.test.triples) > 0 {
			if res.Calibration, err = addCalibration(res.Test, r.evs.whole, r.testDS, r.testFilter, cfg.Seed); err != nil {
				return nil, err
			}
			if n := res.Calibration.NaN; n > 0 {
				res.Notes = append(res.Notes, fmt.Sprintf("calibration: %d test triples or negatives with a NaN log-score left out", n))
			}
		}
	}
	if r.m.Semantics == models.Energy {
		res.Notes = append(res.Notes, "log-likelihood unavailable: energy-based model (intractable partition function)")
	}
	return res, nil
}

type nopObserver struct{}

func (nopObserver) EpochStart(int, int)  {}
func (nopObserver) Step(int, float64)    {}
func (nopObserver) EpochEnd(EpochRecord) {}
func (nopObserver) Log(string)           {}
