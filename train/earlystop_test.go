package train

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"gekc/kg"
	"gekc/objectives"
)

// scriptValidation makes Run's validations return the scores in script, one
// per validation, the first at index first; it restores the real
// evaluation when the test ends.
func scriptValidation(t *testing.T, script []float64, first int) *int {
	t.Helper()
	real := validationMetrics
	t.Cleanup(func() { validationMetrics = real })
	calls := first
	validationMetrics = func(evaluators, split, *kg.Filter, *kg.Schema, EvalConfig) (map[string]float64, error) {
		if calls >= len(script) {
			t.Fatalf("validation %d: the script has %d scores", calls+1, len(script))
		}
		calls++
		return map[string]float64{"mrr": script[calls-1]}, nil
	}
	return &calls
}

// Early stopping as Config.Patience documents it: a run stops after
// Patience validations in a row without a strictly better score (a tie is
// no improvement); 0 never stops early. Validations are counted, not
// epochs, and the last epoch is always validated. The scores are scripted;
// the stop and best epochs below are worked out by hand.
func TestEarlyStoppingFollowsPatience(t *testing.T) {
	ds := typedTiny(t)
	// Validation scores in order: a tie at the 3rd, a new best at the 5th,
	// one at the 12th.
	script := []float64{0.10, 0.30, 0.30, 0.20, 0.40, 0.35, 0.35, 0.35, 0.39, 0.10, 0.10, 0.45}
	for _, c := range []struct {
		name                          string
		patience, every, epochs       int
		wantStop, wantBest, wantCalls int
	}{
		{"patience 0 never stops", 0, 1, 12, 12, 12, 12},
		{"patience 1 stops at the tie", 1, 1, 12, 3, 2, 3},
		{"patience 3 survives a dip", 3, 1, 12, 8, 5, 8},
		{"patience 4", 4, 1, 12, 9, 5, 9},
		{"patience 5", 5, 1, 12, 10, 5, 10},
		{"patience 7 outlasts the plateau", 7, 1, 12, 12, 12, 12},
		// Validating every 2nd epoch: the 4th validation is after epoch 8.
		{"patience 2 counts validations", 2, 2, 30, 8, 4, 4},
		// Every 5th epoch of 12: epochs 5 and 10, and 12 because it is the last.
		{"the last epoch is validated", 0, 5, 12, 12, 10, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			calls := scriptValidation(t, script, 0)
			cfg := Config{Model: "cp2", Rank: 2, Objective: objectives.MLE{}, LearningRate: 0.01, BatchSize: 16, Epochs: c.epochs,
				Patience: c.patience, Seed: 1, Eval: EvalConfig{Every: c.every, SkipTest: true}}
			// A resume state is saved after every epoch but the one that
			// ends the run.
			var saved []int
			cfg.SaveState = func(s *State) error {
				saved = append(saved, s.Epoch)
				return nil
			}
			res, err := Run(context.Background(), cfg, ds, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(saved) != c.wantStop-1 || len(saved) > 0 && saved[len(saved)-1] != c.wantStop-1 {
				t.Errorf("states saved after epochs %v; want 1..%d", saved, c.wantStop-1)
			}
			if stop := res.Epochs[len(res.Epochs)-1].Epoch; stop != c.wantStop || len(res.Epochs) != c.wantStop {
				t.Errorf("stopped after epoch %d (%d epochs recorded), want %d", stop, len(res.Epochs), c.wantStop)
			}
			if res.BestEpoch != c.wantBest {
				t.Errorf("best epoch %d, want %d", res.BestEpoch, c.wantBest)
			}
			if *calls != c.wantCalls {
				t.Errorf("%d validations, want %d", *calls, c.wantCalls)
			}
			if got, want := res.Valid["mrr"], slices.Max(script[:c.wantCalls]); got != want {
				t.Errorf("selected validation %v, want %v", got, want)
			}
		})
	}
}

// A run resumed from a State saved part-way through a stretch without
// improvement stops at the same epoch as the run that never stopped.
func TestEarlyStoppingSurvivesResume(t *testing.T) {
	ds := typedTiny(t)
	script := []float64{0.10, 0.30, 0.30, 0.20, 0.40, 0.35, 0.35, 0.35, 0.39, 0.10, 0.10, 0.45}
	var saved *State
	scriptValidation(t, script, 0)
	cfg := Config{Model: "cp2", Rank: 2, Objective: objectives.MLE{}, LearningRate: 0.01, BatchSize: 16, Epochs: 12,
		Patience: 3, Seed: 1, Eval: EvalConfig{SkipTest: true}}
	first := cfg
	first.SaveState = keepStateAfter(6, &saved) // one validation without improvement so far
	if _, err := Run(context.Background(), first, ds, nil); err != nil {
		t.Fatal(err)
	}
	if saved == nil || saved.Since != 1 || saved.BestEpoch != 5 {
		t.Fatalf("state after epoch 6: %+v", saved)
	}
	calls := scriptValidation(t, script, 6)
	cfg.Resume = saved
	res, err := Run(context.Background(), cfg, ds, nil)
	if err != nil {
		t.Fatal(err)
	}
	if stop := res.Epochs[len(res.Epochs)-1].Epoch; stop != 8 || res.BestEpoch != 5 || *calls != 8 {
		t.Errorf("resumed run stopped after epoch %d with best %d after %d validations; want 8, 5, 8", stop, res.BestEpoch, *calls)
	}
}

// A stop requested while an epoch is being validated ends the run with the
// state saved after that epoch, once: not again at the next epoch's first
// step (a d = 1000 state is ~0.5 GB, written inside SLURM's warning).
func TestStopDuringValidationSavesOnce(t *testing.T) {
	ds := typedTiny(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	real := validationMetrics
	t.Cleanup(func() { validationMetrics = real })
	validations := 0
	validationMetrics = func(evaluators, split, *kg.Filter, *kg.Schema, EvalConfig) (map[string]float64, error) {
		validations++
		if validations == 2 {
			cancel() // the signal arrives while epoch 2 is validated
		}
		return map[string]float64{"mrr": float64(validations)}, nil
	}
	cfg := Config{Model: "cp2", Rank: 2, Objective: objectives.MLE{}, LearningRate: 0.01, BatchSize: 16, Epochs: 10,
		Patience: 3, Seed: 1, Eval: EvalConfig{SkipTest: true}}
	var saved [][2]int // (epoch, batch) of every state saved
	cfg.SaveState = func(s *State) error {
		saved = append(saved, [2]int{s.Epoch, s.Batch})
		return nil
	}
	if _, err := Run(ctx, cfg, ds, nil); err == nil {
		t.Fatal("the stopped run returned no error")
	}
	if want := [][2]int{{1, 0}, {2, 0}}; !slices.Equal(saved, want) {
		t.Errorf("states saved (epoch, batch) %v, want %v", saved, want)
	}
}

// A stop while the training loss still falls steeply over the epochs
// early stopping waited through is noted; a flat or rising loss, a NaN
// and too short a history are not.
func TestStillFalling(t *testing.T) {
	recs := func(losses ...float64) []EpochRecord {
		var out []EpochRecord
		for i, l := range losses {
			out = append(out, EpochRecord{Epoch: i + 1, TrainLoss: l})
		}
		return out
	}
	for _, c := range []struct {
		name   string
		epochs []EpochRecord
		window int
		noted  bool
	}{
		{"steep", recs(10, 9, 8.5, 8), 2, true},
		{"just over the threshold", recs(5, 1, 0.979), 1, true},
		{"flat", recs(10, 9, 8.9, 8.85), 2, false},
		{"rising", recs(1, 2, 3), 2, false},
		{"NaN", recs(1, math.NaN(), 0.5), 1, false},
		{"shorter than the window", recs(10, 5), 2, false},
	} {
		note := stillFalling(c.epochs, c.window)
		if (note != "") != c.noted {
			t.Errorf("%s: note %q, want one: %v", c.name, note, c.noted)
		}
	}
	if note := stillFalling(recs(10, 9, 8.5, 8), 2); !strings.Contains(note, "fell 11.1% over the last 2 epochs") {
		t.Errorf("note %q", note)
	}
}
