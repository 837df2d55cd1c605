package sweep

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"gekc/grid"
	"gekc/resultsdir"
	"gekc/sweep/sweeptest"
)

// A sweep of a grid other than the one whose copy is in Out makes it the
// copy and keeps the previous one as grid.<time>.toml: the runs of that
// grid are still in runs/, and it is the only record of what made them.
func TestGridCopyKeepsPreviousGrid(t *testing.T) {
	ts := newToySweep(t)
	fake := newFake()
	sweepFirst := func(g *grid.Grid, want Tally) { // of g's first run
		t.Helper()
		s := New(g, g.Runs[:1], Options{Out: ts.out, DataRoot: ts.data, Run: fake.run, Quiet: true})
		must(t, s.Prepare())
		if tally := s.Run(context.Background()); tally != want {
			t.Fatalf("%+v, want %+v", tally, want)
		}
	}
	sweepFirst(ts.g, Tally{Finished: 1})
	changed := sweeptest.ToyGrid + "\n# an edit\n"
	g, err := grid.ParseGrid("toy.toml", []byte(changed), nil)
	must(t, err)
	sweepFirst(g, Tally{AlreadyDone: 1, NoCheckpoint: 1}) // the fake writes none

	now, _ := os.ReadFile(filepath.Join(ts.out, resultsdir.GridCopyName))
	if string(now) != changed {
		t.Error("grid.toml is not the current grid")
	}
	old, _ := filepath.Glob(filepath.Join(ts.out, "grid.*.toml"))
	if len(old) != 1 {
		t.Fatalf("previous grid not kept: %v", old)
	}
	if data, _ := os.ReadFile(old[0]); string(data) != sweeptest.ToyGrid {
		t.Error("kept grid differs from the previous one")
	}
}
