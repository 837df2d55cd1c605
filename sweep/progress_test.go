package sweep

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"gekc/internal/jsonfloat"
	"gekc/resultsdir"
	"gekc/train"
)

func TestPlainProgressLines(t *testing.T) {
	var buf bytes.Buffer
	p := newProgressObserver(&lockedWriter{w: &buf}, "[2/9] cp-pll-x", 30, false, true)
	p.interval = 0 // a line for every step
	p.EpochStart(4, 10)
	p.Step(5, 0.25)
	p.EpochEnd(train.EpochRecord{Epoch: 4, TrainLoss: 0.2, Seconds: 1.5, EvalSeconds: 0.25, Valid: map[string]float64{"mrr": 0.5, "hits@10": 0.75}})
	p.Log("checkpoint written")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	want := []string{
		"[2/9] cp-pll-x epoch 4/30: step 5/10, loss 0.25, epoch ETA",
		"[2/9] cp-pll-x epoch 4/30: loss 0.2, 1.5s, valid (0.2s) mrr 0.5, hits@10 0.75",
		"[2/9] cp-pll-x checkpoint written",
	}
	if len(lines) != len(want) {
		t.Fatalf("lines:\n%s", buf.String())
	}
	for i := range want {
		if !strings.HasPrefix(lines[i], want[i]) {
			t.Errorf("line %d = %q, want prefix %q", i, lines[i], want[i])
		}
	}

	// With the default interval, steps are quiet between lines.
	buf.Reset()
	p = newProgressObserver(&lockedWriter{w: &buf}, "x", 1, false, true)
	p.EpochStart(1, 1000)
	for i := 1; i <= 1000; i++ {
		p.Step(i, 1)
	}
	if buf.Len() != 0 {
		t.Errorf("step lines within the interval: %q", buf.String())
	}
}

// A run resumed mid-epoch reports its ETA from the steps this process
// took, not from all the epoch's finished steps over this process's time.
func TestPlainProgressETAAfterResume(t *testing.T) {
	for _, tc := range []struct {
		name        string
		first, next int // the epoch's first reported step, then the step 10 s later
		wantSeconds float64
	}{
		// This process took steps 1..11 (or 219..229), 11 steps, in 10 s.
		{"fresh epoch", 1, 11, 534 * 10.0 / 11},
		{"resumed after step 218", 219, 229, 316 * 10.0 / 11},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			p := newProgressObserver(&lockedWriter{w: &buf}, "x", 200, false, false)
			p.interval = 0
			p.EpochStart(1, 545)
			p.Step(tc.first, 1)
			p.epochStart = time.Now().Add(-10 * time.Second)
			buf.Reset()
			p.Step(tc.next, 1)
			_, etaText, ok := strings.Cut(strings.TrimSpace(buf.String()), "epoch ETA ")
			if !ok {
				t.Fatalf("no ETA in %q", buf.String())
			}
			eta, err := time.ParseDuration(etaText)
			if err != nil {
				t.Fatalf("ETA %q: %v", etaText, err)
			}
			if got := eta.Seconds(); math.Abs(got-tc.wantSeconds) > 2 {
				t.Errorf("ETA %v, want about %.0fs", eta, tc.wantSeconds)
			}
		})
	}
}

func TestProgressBarMode(t *testing.T) {
	var buf bytes.Buffer
	p := newProgressObserver(&lockedWriter{w: &buf}, "run", 2, true, true)
	p.EpochStart(1, 3)
	for i := 1; i <= 3; i++ {
		p.Step(i, 0.5)
	}
	p.EpochEnd(train.EpochRecord{Epoch: 1, TrainLoss: 0.5, Seconds: 0.1})
	if !strings.Contains(buf.String(), "run epoch 1/2: loss 0.5") {
		t.Errorf("verbose: no epoch line after the bar:\n%q", buf.String())
	}

	// Not verbose, the bar is all: no epoch lines, and the bar of the next
	// epoch shows the last validation.
	buf.Reset()
	p = newProgressObserver(&lockedWriter{w: &buf}, "run", 2, true, false)
	p.EpochStart(1, 3)
	p.Step(3, 0.5)
	p.EpochEnd(train.EpochRecord{Epoch: 1, TrainLoss: 0.5, Seconds: 0.1, Valid: map[string]float64{"mrr": 0.25, "hits@1": 0.125}})
	if strings.Contains(buf.String(), "run epoch 1/2: loss") {
		t.Errorf("epoch line in bar mode without -v:\n%q", buf.String())
	}
	buf.Reset()
	p.EpochStart(2, 3)
	if !strings.Contains(buf.String(), "valid mrr 0.25") {
		t.Errorf("the bar does not show the last validation:\n%q", buf.String())
	}
}

// TestConciseProgressLines checks the plain mode without -v: at most one
// line per interval, whatever the number of epochs.
func TestConciseProgressLines(t *testing.T) {
	var buf bytes.Buffer
	p := newProgressObserver(&lockedWriter{w: &buf}, "run", 500, false, false)
	for e := 1; e <= 500; e++ {
		p.EpochStart(e, 11)
		for i := 1; i <= 11; i++ {
			p.Step(i, 1)
		}
		p.EpochEnd(train.EpochRecord{Epoch: e, TrainLoss: 1, Valid: map[string]float64{"mrr": 0.5}})
	}
	if buf.Len() != 0 {
		t.Errorf("lines within the interval:\n%s", buf.String())
	}
	p.interval = 0
	p.EpochStart(501, 11)
	p.EpochEnd(train.EpochRecord{Epoch: 501, TrainLoss: 1})
	if got, want := strings.TrimSpace(buf.String()), "run epoch 501/500: loss 1, 0.0s, valid mrr 0.5"; got != want {
		t.Errorf("line after the interval = %q, want %q", got, want)
	}
}

func TestSummaryLine(t *testing.T) {
	rec := &resultsdir.Record{Status: train.Finished, Valid: map[string]jsonfloat.Float{"mrr": 0.5}, Test: map[string]jsonfloat.Float{"mrr": 0.25, "ll": -12.5}, WallSeconds: 75}
	if got, want := summaryLine("[1/2] id", rec), "[1/2] id finished  valid MRR 0.5000  test MRR 0.2500  test LL -12.500  1m15s"; got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	rec = &resultsdir.Record{Status: train.Failed, Error: "boom\nstack", WallSeconds: jsonfloat.Float(math.Round(0.4))}
	if got := summaryLine("id", rec); got != "id failed  0s  error: boom" {
		t.Errorf("got %q", got)
	}
}
