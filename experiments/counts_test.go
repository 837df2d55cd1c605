package main

import (
	"context"
	"regexp"
	"strings"
	"testing"
)

// The command's closing line counts runs as the runner tallies them (the
// runner's counts, results.md and n per configuration are
// sweep.TestRunCountsLeaveOutFailedRuns): failed runs apart from finished
// ones, a diverged run final but not finished, and resumed, the runs done
// before counted as already done.
func TestRunCountsLeaveOutFailedRuns(t *testing.T) {
	fx := newSweepFixture(t, toyGrid)
	ids := fx.runIDs(t)
	diverged, failed, panicked := ids[3], ids[5], ids[7]
	fake := newFake()
	fake.diverge = regexp.MustCompile("^" + regexp.QuoteMeta(diverged) + "$")
	fake.fail = regexp.MustCompile("^(" + regexp.QuoteMeta(failed) + "|" + regexp.QuoteMeta(panicked) + ")$")
	code, _, stderr := runInProcess(t, context.Background(), fake, fx.args()...)
	if code != exitRunsFailed {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if want := "sweep toy: 9 finished, 1 diverged, 2 failed now; 0 were already done; 0 being trained elsewhere; 0 interrupted."; !strings.Contains(stderr, want) {
		t.Errorf("closing line: want %q in\n%s", want, stderr)
	}
	fake.fail, fake.diverge = nil, nil
	code, _, stderr = runInProcess(t, context.Background(), fake, fx.args()...)
	if code != exitOK {
		t.Fatalf("resumed: exit %d: %s", code, stderr)
	}
	if want := "sweep toy: 2 finished, 0 diverged, 0 failed now; 10 were already done;"; !strings.Contains(stderr, want) {
		t.Errorf("resumed closing line: want %q in\n%s", want, stderr)
	}
}
