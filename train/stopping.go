package train

import (
	"errors"
	"fmt"
	"math"

	"gekc/models"
)

// LLTrack follows the best validation log-likelihood of a run, apart from
// its selection metric: the paper's code reports a GeKC's test
// log-likelihood at the epoch of its best validation log-likelihood, while
// its test MRR and Hits@k come from the epoch of the best validation MRR.
// Under PLL the two epochs are far apart (the log-likelihood peaks early
// and falls while the MRR still rises), so the test log-likelihood of the
// MRR-selected parameters is not the paper's number.
type LLTrack struct {
	Best  float64 // best validation log-likelihood; −Inf when none
	Epoch int     // its epoch; -1 when none
	Since int     // validations without improvement since Epoch
	// Test is the test log-likelihood of the parameters at Epoch, computed
	// when that validation happened; NaN when not computed (SkipTest, or a
	// run without a test split).
	Test float64
}

func newLLTrack() LLTrack { return LLTrack{Best: math.Inf(-1), Epoch: -1, Test: math.NaN()} }

// stopping is early stopping and model selection: the best validation
// score of the selection metric, and the log-likelihood track.
type stopping struct {
	cfg       EvalConfig
	patience  int
	best      float64
	bestEpoch int
	since     int
	ll        LLTrack
	// llTracked is false for a run resumed from a state written before
	// runs tracked the log-likelihood: its track would start mid-run and
	// name a wrong epoch.
	llTracked bool
}

func newStopping(cfg EvalConfig, patience int) *stopping {
	return &stopping{cfg: cfg, patience: patience, best: math.Inf(-1), bestEpoch: -1, ll: newLLTrack(), llTracked: true}
}

// observe takes a validation's metrics at epoch and reports whether the
// selection metric improved (by more than MinDelta) and whether the
// log-likelihood did (by more than LLMinDelta; never for a model without
// one). The selection score must not be NaN.
func (s *stopping) observe(epoch int, vm map[string]float64) (improved, llImproved bool) {
	if score := vm[s.cfg.Select]; score > s.best+s.cfg.MinDelta {
		s.best, s.bestEpoch, s.since = score, epoch, 0
		improved = true
	} else {
		s.since++
	}
	if ll, ok := vm["ll"]; ok {
		// A NaN never beats the best: it counts as a validation without
		// a rise, so a diverging log-likelihood cannot hold StopOnLL open.
		if ll > s.ll.Best+s.cfg.LLMinDelta {
			s.ll = LLTrack{Best: ll, Epoch: epoch, Test: math.NaN()}
			llImproved = true
		} else {
			s.ll.Since++
		}
	}
	return improved, llImproved
}

// stop reports whether the run ends here: Patience validations without an
// improvement of the selection metric; with StopOnLL, the paper's code's
// rule: more than Patience validations without an improvement of the
// selection metric nor of the log-likelihood (for models that have one).
func (s *stopping) stop() bool {
	if !s.cfg.StopOnLL {
		return s.since >= s.patience
	}
	if s.since <= s.patience {
		return false
	}
	if s.llTracked && s.ll.Epoch >= 0 {
		return s.ll.Since > s.patience
	}
	return true
}

// fallingLoss is the relative decrease of the training loss over the
// epochs early stopping waited through above which a stop is noted: the
// loss still fell steeply, and the selected model may be far from what
// more patience would give (Nations ComplEx²: test MRR 0.54 at patience
// 10, 0.67 at 40).
const fallingLoss = 0.02

// stillFalling returns a note when the training loss of the last window
// epochs fell by more than fallingLoss of its value, "" otherwise.
func stillFalling(epochs []EpochRecord, window int) string {
	if window < 1 || len(epochs) <= window {
		return ""
	}
	from, to := epochs[len(epochs)-1-window], epochs[len(epochs)-1]
	drop := (from.TrainLoss - to.TrainLoss) / math.Abs(from.TrainLoss)
	if !(drop > fallingLoss) { // NaN losses say nothing
		return ""
	}
	return fmt.Sprintf("early stopping came while the training loss still fell %.1f%% over the last %d epochs (%.4g at epoch %d, %.4g at %d): the selected model may be far from converged; a larger patience may select a better one",
		100*drop, window, from.TrainLoss, from.Epoch, to.TrainLoss, to.Epoch)
}

// testLL records the test log-likelihood of the model as it is now, at a
// new best validation log-likelihood: one forward pass over the test
// triples, far cheaper than keeping a second copy of the parameters.
func (s *stopping) testLL(ev evaluator, test split, cfg EvalConfig) error {
	if !s.llTracked || s.ll.Epoch < 0 || cfg.SkipTest || len(test.triples) == 0 {
		return nil
	}
	ll, err := ev.LogLikelihood(test.triples)
	if errors.Is(err, models.ErrIntractable) {
		return nil
	}
	if err != nil {
		return err
	}
	s.ll.Test = ll
	return nil
}
