package main

import (
	"context"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gekc/sweep/sweeptest"
	"gekc/train"
	"gekc/train/ckpt"

	"gorgonia.org/tensor"
)

// -adopt-state on the command line (resuming and adopting a state are
// sweep's resume and adopt tests, with real training): a refused adoption
// is a usage error before anything is trained, and an accepted one is said
// on stderr before the run trains.
func TestAdoptStateFlag(t *testing.T) {
	fx := newSweepFixture(t, sweeptest.ToyBase+`
[[sweep]]
patience = 2
epochs = 4

[[sweep]]
patience = 10
epochs = 7

[[sweep]]
patience = 10
epochs = 7
learning_rate = 0.02
`)
	ids := fx.runIDs(t)
	// Run 0's state after epoch 2, written by hand: the fake trains nothing.
	src := filepath.Join(fx.dir, ckpt.StateName)
	tiny := map[string]*tensor.Dense{"entity": tensor.New(tensor.WithShape(1, 1), tensor.WithBacking([]float32{1}))}
	must(t, ckpt.WriteState(src, ids[0], &train.State{Epoch: 2, BestEpoch: -1, Best: math.Inf(-1), Params: tiny, BestParams: tiny}, time.Second, nil))

	fake := newFake()
	for _, c := range []struct {
		only       string
		code       int
		want       string
		trainedNow int
	}{
		{"2", exitUsage, "learning_rate (0.02, not 0.01)", 0},
		{"1-2", exitUsage, "needs -only to select one run", 0},
		{"1", exitOK, ids[1] + ": continued the resume state of run " + ids[0] + " after epoch 2", 1},
		{"1", exitUsage, "finished already", 0},
	} {
		before := fake.TotalCalls()
		code, _, stderr := runInProcess(t, context.Background(), fake, fx.args("-only", c.only, "-adopt-state", src)...)
		if code != c.code || !strings.Contains(stderr, c.want) || fake.TotalCalls()-before != c.trainedNow {
			t.Errorf("-only %s -adopt-state: exit %d, %d runs trained; want %d, %d and %q: %s",
				c.only, code, fake.TotalCalls()-before, c.code, c.trainedNow, c.want, stderr)
		}
	}
}
