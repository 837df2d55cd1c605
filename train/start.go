package train

import (
	"fmt"
	"math"
	"slices"
)

// start sets where training begins: from a resumed state (its parameters,
// optimiser state, early-stopping counters, history and the shuffles it
// skips), or, for a distilled model, after validating the model as
// initialised as epoch 0.
func (r *run) start() error {
	if r.cfg.Resume != nil {
		return r.resume(r.cfg.Resume)
	}
	if r.cfg.Init != nil {
		return r.validateInitial()
	}
	return nil
}

// resume continues from the State s.
func (r *run) resume(s *State) error {
	cfg, res, stop := r.cfg, r.res, r.stop
	if r.shard != nil {
		p := r.statePart()
		s = s.rowsOf(p.Tables, p.Lo, p.Hi, p.N)
	}
	if err := s.restore(r.m, r.best, r.bestLL, r.st.Optimizer()); err != nil {
		return err
	}
	if r.bestLL != nil && s.BestLLParams != nil && s.LL != nil {
		r.bestLLEpoch = s.LL.Epoch
	}
	// Its tensors are copied into the model, the best snapshot and the
	// optimiser: holding the state for the whole run would keep a second
	// copy of all of them (the caller should drop it too).
	r.cfg.Resume = nil
	stop.best, stop.bestEpoch, stop.since = s.Best, s.BestEpoch, s.Since
	if s.LL != nil {
		stop.ll = *s.LL
	} else {
		stop.llTracked = false
	}
	r.steps, r.stepTime = s.Steps, Seconds(s.StepSeconds)
	res.Epochs = append(res.Epochs, s.Epochs...)
	res.Initial = s.Initial
	note := "resumed " + ResumePoint(s.Epoch, s.Batch)
	r.resumeNotes = append(slices.Clip(s.Notes), note)
	res.Notes = append(res.Notes, r.resumeNotes...)
	r.obs.Log(note)
	for e := 1; e <= s.Epoch; e++ {
		shuffleEpoch(r.train, cfg.Seed, e)
	}
	r.first = s.Epoch + 1
	r.firstBatch, r.firstLoss, r.firstSeconds = s.Batch, s.EpochLoss, s.EpochSeconds
	if nb := (len(r.train) + cfg.BatchSize - 1) / cfg.BatchSize; r.firstBatch >= nb || (r.firstBatch > 0 && r.first > cfg.Epochs) {
		return fmt.Errorf("train: resume state is at step %d of epoch %d, which has %d steps of %d epochs: %w",
			r.firstBatch, r.first, nb, cfg.Epochs, ErrStateMismatch)
	}
	if stop.stop() {
		r.first = cfg.Epochs + 1 // it had stopped early: only the test is left
	}
	return nil
}

// validateInitial validates a distilled model before training: a converted
// model competes with its own fine-tuning, so if no fine-tuning epoch
// validates better, the result is the model as converted (epoch 0), not
// the least bad fine-tuned one.
func (r *run) validateInitial() error {
	vm, err := r.validationMetrics()
	if err != nil {
		return err
	}
	if score := vm[r.cfg.Eval.Select]; !math.IsNaN(score) {
		_, llImproved := r.stop.observe(0, vm)
		r.best.take(r.m)
		if llImproved && r.bestLL != nil {
			r.bestLL.take(r.m)
			r.bestLLEpoch = 0
		}
		if err := r.stop.testLL(r.evs.ev, r.test, r.cfg.Eval); err != nil {
			return err
		}
	}
	r.res.Epochs = append(r.res.Epochs, EpochRecord{Epoch: 0, TrainLoss: math.NaN(), Valid: vm})
	return nil
}
