package sweep

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gekc/grid"
	"gekc/internal/sweeptest"
	"gekc/report"
)

// runAnalysis runs a with its output going to buffers, returned as text.
func runAnalysis(a Analysis) (stdout, stderr string, err error) {
	var out, errOut bytes.Buffer
	a.Stdout, a.Stderr = &out, &errOut
	err = a.Run(context.Background())
	return out.String(), errOut.String(), err
}

// mustAnalyze is runAnalysis that fails the test on an error.
func mustAnalyze(t *testing.T, a Analysis) (stdout, stderr string) {
	t.Helper()
	stdout, stderr, err := runAnalysis(a)
	if err != nil {
		t.Fatalf("-analyze %s of %d runs: %v\n%s", a.Kind, len(a.Runs), err, stderr)
	}
	return stdout, stderr
}

// trainedSweep trains every run of the grid src for real, on the data
// sets under data, as the command does by default (the grid's samples,
// -state-every 5m), and fails the test unless every run finishes.
func trainedSweep(t *testing.T, src, data string) toySweep {
	t.Helper()
	g, err := grid.ParseGrid("grid.toml", []byte(src), nil)
	must(t, err)
	ts := toySweep{g: g, out: filepath.Join(t.TempDir(), "out"), data: data}
	s := New(g, g.Runs, Options{Out: ts.out, DataRoot: data, Run: Train, Samples: -1, StateEvery: 5 * time.Minute, Quiet: true})
	must(t, s.Prepare())
	if tally := s.Run(context.Background()); tally.Finished != len(g.Runs) {
		t.Fatalf("%+v; want all %d runs finished", tally, len(g.Runs))
	}
	return ts
}

// readPNG decodes the file at path and checks that it is a plausible
// figure: sane dimensions and some pixels in the run's colour (the curves
// were drawn, not only the axes).
func readPNG(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	must(t, err)
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if size := img.Bounds().Size(); size.X < 300 || size.Y < 200 || size.X > 5000 || size.Y > 5000 {
		t.Errorf("%s: %dx%d pixels", path, size.X, size.Y)
	}
	if n := countNear(img, report.RunColor.R, report.RunColor.G, report.RunColor.B); n < 5 {
		t.Errorf("%s: %d pixels in the curves' colour; nothing drawn?", path, n)
	}
}

// countNear counts pixels within a small distance of an opaque colour.
func countNear(img image.Image, r, g, b uint8) int {
	n := 0
	bd := img.Bounds()
	for y := bd.Min.Y; y < bd.Max.Y; y++ {
		for x := bd.Min.X; x < bd.Max.X; x++ {
			pr, pg, pb, _ := img.At(x, y).RGBA()
			d := math.Abs(float64(pr>>8)-float64(r)) + math.Abs(float64(pg>>8)-float64(g)) + math.Abs(float64(pb>>8)-float64(b))
			if d < 30 {
				n++
			}
		}
	}
	return n
}

// -analyze plots draws curves.png of finished and diverged runs from
// metrics.json alone (the fake trainer draws none, and the toy data set
// has no files at all), and leaves failed runs and runs never started
// alone; an unknown kind is an error listing the kinds.
func TestAnalyzePlots(t *testing.T) {
	ts := newToySweep(t)
	ids := ts.ids()
	diverged, failed := ids[1], ids[2]
	fake := newFake()
	fake.Diverge = sweeptest.IDs(diverged)
	fake.Fail = sweeptest.IDs(failed)
	s := New(ts.g, ts.g.Runs[:4], Options{Out: ts.out, DataRoot: ts.data, Run: fake.run, Quiet: true})
	must(t, s.Prepare())
	if tally := s.Run(context.Background()); tally.Finished != 2 || tally.Diverged != 1 || tally.Failed != 1 {
		t.Fatalf("%+v; want 2 finished, 1 diverged, 1 failed", tally)
	}
	_, stderr := mustAnalyze(t, Analysis{Kind: "plots", Out: ts.out, DataRoot: ts.data, Runs: ts.g.Runs})
	if !strings.Contains(stderr, "wrote "+curvesName+" of 3 runs") {
		t.Errorf("stderr: %s", stderr)
	}
	for i, id := range ids {
		path := filepath.Join(ts.out, runsDirName, id, curvesName)
		want := i <= 3 && id != failed
		if fileExists(path) != want {
			t.Errorf("%s: %s exists %v, want %v", id, curvesName, fileExists(path), want)
			continue
		}
		if want {
			readPNG(t, path)
		}
	}
	sweeptest.NoTempFiles(t, ts.out)
	if _, _, err := runAnalysis(Analysis{Kind: "nonsense", Out: ts.out, DataRoot: ts.data, Runs: ts.g.Runs}); err == nil ||
		!strings.Contains(err.Error(), "plots, paper or tables") {
		t.Errorf("-analyze nonsense: %v", err)
	}
}
