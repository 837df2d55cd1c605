package scaling

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"gekc/internal/atomicfile"
)

// These tests run real studies on tiny graphs: each point is the test
// binary re-executed as a child (see TestMain), and measures real training
// steps.

// tinyStudy is a study of 12 points that takes a second or two, into out.
func tinyStudy(out string) *Study {
	o := DefaultOptions()
	o.Batches, o.AllEntities, o.Entities, o.Batch = []int{8, 16}, 200, []int{300, 400}, 8
	o.Relations, o.Rank, o.Warm, o.Steps, o.MaxMem = 7, 4, 1, 2, 0
	return &Study{Options: o, Out: out, Exe: os.Args[0], Env: os.Environ(), Log: new(bytes.Buffer)}
}

// run runs s and fails the test on an error or unless want points failed.
func run(t *testing.T, s *Study, want int) {
	t.Helper()
	failed, err := s.Run(context.Background())
	if err != nil || failed != want {
		t.Fatalf("%d points failed, error %v; want %d failed:\n%s", failed, err, want, s.Log)
	}
}

func TestStudy(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	out := filepath.Join(t.TempDir(), "scaling")
	run(t, tinyStudy(out), 0)
	rows := readRows(t, out)
	var want []Point
	for _, b := range []int{8, 16} {
		for _, m := range []string{"complex", "complex+", "complex2"} {
			want = append(want, Point{Study: StudyBatch, Model: m, Entities: 200, Relations: 7, Rank: 4, Batch: b})
		}
	}
	for _, e := range []int{300, 400} {
		for _, m := range []string{"complex", "complex+", "complex2"} {
			want = append(want, Point{Study: StudyEntities, Model: m, Entities: e, Relations: 7, Rank: 4, Batch: 8})
		}
	}
	var got []Point
	for _, r := range rows {
		got = append(got, r.Point)
		if !r.OK() || !(r.StepMS > 0) || !(r.PeakRSSMB > 1) || r.Procs < 1 || r.MaxMemMB != 0 {
			t.Errorf("row %v: status %q, %g ms, %g MB, GOMAXPROCS %d, cap %g", r.Point, r.Status, r.StepMS, r.PeakRSSMB, r.Procs, r.MaxMemMB)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("points:\n got %v\nwant %v", got, want)
	}
	// Each point had a process of its own: the children's peaks differ,
	// where one process's high-water mark would only grow.
	peaks := map[float64]bool{}
	for _, r := range rows {
		peaks[r.PeakRSSMB] = true
	}
	if len(peaks) < 2 {
		t.Errorf("every point has the same peak RSS: %v", peaks)
	}

	data, err := os.ReadFile(filepath.Join(out, PNGName))
	must(t, err)
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("scaling.png: %v", err)
	}
	if b := img.Bounds(); b.Dx() < 800 || b.Dx() > 4000 || b.Dy() < 500 || b.Dy() > 3000 {
		t.Errorf("scaling.png is %v", b)
	}
	md, err := os.ReadFile(filepath.Join(out, MarkdownName))
	must(t, err)
	for _, want := range []string{"## By batch size, |E| = 200", "## By number of entities, batch 8",
		"| batch |", "| entities |", "complex+", "complex2", "| 16 ", "| 400 ", " ms, "} {
		if !strings.Contains(string(md), want) {
			t.Errorf("scaling.md lacks %q:\n%s", want, md)
		}
	}
	filepath.WalkDir(out, func(path string, d os.DirEntry, err error) error {
		if err == nil && atomicfile.IsTemp(d.Name()) {
			t.Errorf("temporary file left behind: %s", path)
		}
		return nil
	})
}

// A study started again measures only the points that are not done: not
// a finished one, nor one out of memory under a cap at least as large as
// now; but one out of memory under a smaller cap, a timeout and a point
// lost. Rows of studies with other options stay, unshown.
func TestStudyResume(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	s := tinyStudy(filepath.Join(t.TempDir(), "scaling"))
	s.Options.Models, s.Options.Batches, s.Options.MaxMem = []string{"complex2"}, []int{8, 16, 24}, 4<<30
	run(t, s, 0)
	rows := readRows(t, s.Out)
	if len(rows) != 5 {
		t.Fatalf("%d rows, want 5", len(rows))
	}
	// Doctor the table: a finished point with a sentinel time, points out
	// of memory under a larger and a smaller cap than now, a timeout, a
	// point lost, and a row of a study with other flags.
	rows[0].StepMS = 12345
	rows[1].Status, rows[1].StepMS, rows[1].MaxMemMB = StatusOOM, math.NaN(), 8192
	rows[2].Status, rows[2].StepMS, rows[2].MaxMemMB = StatusOOM, math.NaN(), 100
	rows[3].Status, rows[3].StepMS = StatusTimeout, math.NaN()
	lost := rows[4]
	other := lost.Point
	other.Rank = 99
	rows[4] = Row{Point: other, Status: StatusError + ": boom", StepMS: math.NaN(), PeakRSSMB: math.NaN()}
	must(t, atomicfile.WriteFile(filepath.Join(s.Out, TSVName), EncodeTSV(rows), 0o644))

	s.Log = new(bytes.Buffer)
	run(t, s, 0)
	if n := strings.Count(fmt.Sprint(s.Log), ": measuring"); n != 3 {
		t.Errorf("%d points measured, want 3 (the oom under a smaller cap, the timeout, the lost one):\n%s", n, s.Log)
	}
	again := readRows(t, s.Out)
	if len(again) != 6 {
		t.Fatalf("%d rows, want 6", len(again))
	}
	if again[0].StepMS != 12345 {
		t.Errorf("finished point measured again: %v", again[0])
	}
	if again[1].Status != StatusOOM || again[1].MaxMemMB != 8192 {
		t.Errorf("point out of memory under a larger cap measured again: %v", again[1])
	}
	for _, r := range []Row{again[2], again[3], again[5]} {
		if !r.OK() || r.MaxMemMB != 4096 {
			t.Errorf("point not measured: %v", r)
		}
	}
	if again[5].Point != lost.Point {
		t.Errorf("last row is %v, want the lost point %v", again[5].Point, lost.Point)
	}
	if again[4].Status != StatusError+": boom" {
		t.Errorf("the row of another study was changed: %v", again[4])
	}
	md, err := os.ReadFile(filepath.Join(s.Out, MarkdownName))
	must(t, err)
	if strings.Contains(string(md), "boom") || !strings.Contains(string(md), "**OOM**") {
		t.Errorf("scaling.md shows a point that is not planned, or not the planned one out of memory:\n%s", md)
	}
}

// Points that fail are recorded and the study goes on: out of memory (the
// watchdog stops them), a result that is no failure, and a time limit,
// which is. A child that dies of something else is TestStudyChildFailure.
func TestStudyFailures(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	t.Run("oom", func(t *testing.T) {
		// 300,000 entities make complex2's tables 240 MB before training
		// starts; 300 entities fit in a few tens of MB.
		s := tinyStudy(filepath.Join(t.TempDir(), "scaling"))
		o := DefaultOptions()
		o.Models, o.Batches, o.Entities, o.Batch = []string{"complex2", "complex"}, nil, []int{300, 300000}, 8
		o.Relations, o.Warm, o.Steps, o.MaxMem = 7, 0, 1, 150<<20
		s.Options = o
		run(t, s, 0)
		var status []string
		for _, r := range readRows(t, s.Out) {
			status = append(status, fmt.Sprintf("%d %s %s", r.Entities, r.Model, r.Status))
			if r.Status == StatusOOM && !(r.PeakRSSMB >= 150) {
				t.Errorf("%v out of memory at a peak of %g MB, under the cap", r.Point, r.PeakRSSMB)
			}
		}
		want := []string{"300 complex2 ok", "300 complex ok", "300000 complex2 oom", "300000 complex oom"}
		if !slices.Equal(status, want) {
			t.Errorf("got %q, want %q\n%s", status, want, s.Log)
		}
		md, err := os.ReadFile(filepath.Join(s.Out, MarkdownName))
		must(t, err)
		if !strings.Contains(string(md), "**OOM**") {
			t.Errorf("scaling.md does not show the failure:\n%s", md)
		}
		data, err := os.ReadFile(filepath.Join(s.Out, PNGName))
		must(t, err)
		if _, err := png.Decode(bytes.NewReader(data)); err != nil {
			t.Errorf("scaling.png: %v", err)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		// Thousands of steps take seconds; the limit is a fraction of one.
		s := tinyStudy(filepath.Join(t.TempDir(), "scaling"))
		o := DefaultOptions()
		o.Models, o.Batches, o.Entities, o.Batch, o.Relations = []string{"complex2"}, nil, []int{300}, 8, 7
		o.Steps, o.Timeout, o.MaxMem = 100000, 300*time.Millisecond, 0
		s.Options = o
		run(t, s, 1)
		if rows := readRows(t, s.Out); len(rows) != 1 || rows[0].Status != StatusTimeout {
			t.Errorf("rows %v, want one timeout", rows)
		}
	})
}
