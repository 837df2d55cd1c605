// Package sweeptest is what the tests of the runner (sweep) and of the
// command (experiments) share, as net/http/httptest is for HTTP: a training
// run that trains nothing but behaves like one (Trainer), a toy grid, and
// checks of a results directory. Nothing of it is in the shipped command.
//
// The fake reports progress, writes a partial and then a final checkpoint,
// takes its time per epoch while honouring cancellation, and fails,
// diverges or panics on the runs it is told to. Its metrics are derived
// from the run's spec, so tables built from them are predictable. It knows
// the run's spec and the observer, not the runner's job type, so that the
// runner's own tests can import this package.
package sweeptest

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"gekc/grid"
	"gekc/internal/atomicfile"
	"gekc/train"
)

// Trainer is the fake. Its zero value is ready; set the fields before the
// first Run.
type Trainer struct {
	Sleep                time.Duration  // per epoch
	Fail, Diverge, Panic *regexp.Regexp // IDs of the runs that do so
	Block                chan struct{}  // if non-nil, the first run waits here (or on ctx)
	Started              chan string    // if non-nil, receives each ID as its run starts
	CallsLog             string         // if set, each run appends "<ID>\n" to this file
	mu                   sync.Mutex
	calls                map[string]int
}

// Result is what a fake run ends with: the fields of sweep.Outcome that
// training fills.
type Result struct {
	Status      train.Status
	Epochs      []train.EpochRecord
	BestEpoch   int
	Valid, Test map[string]float64
	Notes       []string
}

// IDs matches exactly the given run IDs, for Fail, Diverge and Panic.
func IDs(ids ...string) *regexp.Regexp {
	quoted := make([]string, len(ids))
	for i, id := range ids {
		quoted[i] = regexp.QuoteMeta(id)
	}
	return regexp.MustCompile("^(" + strings.Join(quoted, "|") + ")$")
}

// Calls is how many times run id was started.
func (f *Trainer) Calls(id string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[id]
}

// TotalCalls is how many runs were started in all.
func (f *Trainer) TotalCalls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.calls {
		n += c
	}
	return n
}

// Run "trains" run id of spec in runDir: min(spec.Epochs, 3) epochs of 4
// steps, reported to obs. A finished run writes checkpoint.npz and has
// test MRR 0.3 + 0.01·seed + 0.001·len(model), valid MRR 0.02 above.
func (f *Trainer) Run(ctx context.Context, id string, spec grid.RunSpec, runDir string, obs train.Observer) (*Result, error) {
	f.mu.Lock()
	if f.calls == nil {
		f.calls = map[string]int{}
	}
	f.calls[id]++
	block := f.Block
	f.Block = nil
	f.mu.Unlock()
	if f.CallsLog != "" {
		// O_APPEND writes this small are atomic, so processes can share
		// the log.
		lf, err := os.OpenFile(f.CallsLog, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(lf, "%s\n", id)
		lf.Close()
	}
	if f.Started != nil {
		f.Started <- id
	}
	// A checkpoint that is not yet final, as a killed run leaves it.
	if err := os.WriteFile(filepath.Join(runDir, "checkpoint.npz"), []byte("partial"), 0o644); err != nil {
		return nil, err
	}
	if block != nil {
		select {
		case <-block:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if f.Panic != nil && f.Panic.MatchString(id) {
		panic("fake panic in " + id)
	}
	epochs := min(spec.Epochs, 3)
	var recs []train.EpochRecord
	for e := 1; e <= epochs; e++ {
		const steps = 4
		obs.EpochStart(e, steps)
		for step := 1; step <= steps; step++ {
			if err := f.pause(ctx, f.Sleep/steps); err != nil {
				return nil, err
			}
			obs.Step(step, 1/float64(e*step))
		}
		rec := train.EpochRecord{Epoch: e, TrainLoss: 1 / float64(e), Seconds: f.Sleep.Seconds(), Valid: map[string]float64{"mrr": 0.1 * float64(e)}}
		if f.Diverge != nil && f.Diverge.MatchString(id) {
			rec.TrainLoss = math.NaN()
			obs.EpochEnd(rec)
			return &Result{Status: train.Diverged, Epochs: append(recs, rec), Notes: []string{"loss became NaN"}}, nil
		}
		recs = append(recs, rec)
		obs.EpochEnd(rec)
	}
	if f.Fail != nil && f.Fail.MatchString(id) {
		return nil, fmt.Errorf("fake failure for %s", id)
	}
	if err := atomicfile.WriteFile(filepath.Join(runDir, "checkpoint.npz"), []byte("final "+id), 0o644); err != nil {
		return nil, err
	}
	mrr := 0.3 + 0.01*float64(spec.Seed) + 0.001*float64(len(spec.Model))
	return &Result{Status: train.Finished, Epochs: recs, BestEpoch: epochs,
		Valid: map[string]float64{"mrr": mrr + 0.02, "hits@1": mrr / 2, "hits@3": mrr, "hits@10": mrr * 1.5, "ll": -10},
		Test:  map[string]float64{"mrr": mrr, "hits@1": mrr / 2, "hits@3": mrr, "hits@10": mrr * 1.5, "ll": -11, "ece": 0.05},
	}, nil
}

// pause waits d, or returns ctx's error when it is cancelled first.
func (f *Trainer) pause(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	select {
	case <-time.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
