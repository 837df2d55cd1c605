package main

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

	"gekc/scaling"
)

// The scaling tests run real studies on tiny graphs: each point is the test
// binary re-executed (helperEnv makes it the command, see TestMain), and
// measures real training steps.

// tinyScalingArgs is a study of 12 points that takes a second or two.
func tinyScalingArgs(out string, extra ...string) []string {
	return append([]string{"-scaling", "-out", out,
		"-scaling-batches", "8,16", "-scaling-all-entities", "200",
		"-scaling-entities", "300,400", "-scaling-batch", "8",
		"-scaling-relations", "7", "-scaling-rank", "4", "-scaling-warm", "1", "-scaling-steps", "2",
		"-scaling-max-mem", "0"}, extra...)
}

// runScalingCLI runs the command in this process; its children are this
// test binary acting as the command.
func runScalingCLI(t *testing.T, args ...string) (code int, stderr string) {
	t.Helper()
	t.Setenv(helperEnv, "cli")
	var so, se bytes.Buffer
	code = runCLI(context.Background(), args, cliEnv{stdout: &so, stderr: &se, getenv: os.Getenv, dir: t.TempDir()})
	return code, se.String()
}

func readScalingRows(t *testing.T, out string) []scaling.Row {
	t.Helper()
	rows, err := scaling.ReadTSV(filepath.Join(out, scaling.TSVName))
	must(t, err)
	return rows
}

func TestScalingStudy(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	out := filepath.Join(t.TempDir(), "scaling")
	code, stderr := runScalingCLI(t, tinyScalingArgs(out)...)
	if code != exitOK {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	rows := readScalingRows(t, out)
	var want []scaling.Point
	for _, b := range []int{8, 16} {
		for _, m := range []string{"complex", "complex+", "complex2"} {
			want = append(want, scaling.Point{Study: scaling.StudyBatch, Model: m, Entities: 200, Relations: 7, Rank: 4, Batch: b})
		}
	}
	for _, e := range []int{300, 400} {
		for _, m := range []string{"complex", "complex+", "complex2"} {
			want = append(want, scaling.Point{Study: scaling.StudyEntities, Model: m, Entities: e, Relations: 7, Rank: 4, Batch: 8})
		}
	}
	var got []scaling.Point
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

	data, err := os.ReadFile(filepath.Join(out, scaling.PNGName))
	must(t, err)
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("scaling.png: %v", err)
	}
	if b := img.Bounds(); b.Dx() < 800 || b.Dx() > 4000 || b.Dy() < 500 || b.Dy() > 3000 {
		t.Errorf("scaling.png is %v", b)
	}
	md, err := os.ReadFile(filepath.Join(out, scaling.MarkdownName))
	must(t, err)
	if err := containsAll(string(md), "## By batch size, |E| = 200", "## By number of entities, batch 8",
		"| batch |", "| entities |", "complex+", "complex2", "| 16 ", "| 400 ", " ms, "); err != nil {
		t.Errorf("scaling.md: %v\n%s", err, md)
	}
	assertNoTempFiles(t, out)
}

func TestScalingResume(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	out := filepath.Join(t.TempDir(), "scaling")
	args := tinyScalingArgs(out, "-scaling-models", "complex2", "-scaling-batches", "8,16,24", "-scaling-max-mem", "4GiB")
	if code, stderr := runScalingCLI(t, args...); code != exitOK {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	rows := readScalingRows(t, out)
	if len(rows) != 5 {
		t.Fatalf("%d rows, want 5", len(rows))
	}
	// Doctor the table: a finished point with a sentinel time, points out
	// of memory under a larger and a smaller cap than now, a timeout, a
	// point lost, and a row of a study with other flags.
	rows[0].StepMS = 12345
	rows[1].Status, rows[1].StepMS, rows[1].MaxMemMB = scaling.StatusOOM, math.NaN(), 8192
	rows[2].Status, rows[2].StepMS, rows[2].MaxMemMB = scaling.StatusOOM, math.NaN(), 100
	rows[3].Status, rows[3].StepMS = scaling.StatusTimeout, math.NaN()
	lost := rows[4]
	other := lost.Point
	other.Rank = 99
	rows[4] = scaling.Row{Point: other, Status: scaling.StatusError + ": boom", StepMS: math.NaN(), PeakRSSMB: math.NaN()}
	must(t, WriteFileAtomic(filepath.Join(out, scaling.TSVName), scaling.EncodeTSV(rows), 0o644))

	code, stderr := runScalingCLI(t, args...)
	if code != exitOK {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	if n := strings.Count(stderr, ": measuring"); n != 3 {
		t.Errorf("%d points measured, want 3 (the oom under a smaller cap, the timeout, the lost one):\n%s", n, stderr)
	}
	again := readScalingRows(t, out)
	if len(again) != 6 {
		t.Fatalf("%d rows, want 6", len(again))
	}
	if again[0].StepMS != 12345 {
		t.Errorf("finished point measured again: %v", again[0])
	}
	if again[1].Status != scaling.StatusOOM || again[1].MaxMemMB != 8192 {
		t.Errorf("point out of memory under a larger cap measured again: %v", again[1])
	}
	for _, r := range []scaling.Row{again[2], again[3], again[5]} {
		if !r.OK() || r.MaxMemMB != 4096 {
			t.Errorf("point not measured: %v", r)
		}
	}
	if again[5].Point != lost.Point {
		t.Errorf("last row is %v, want the lost point %v", again[5].Point, lost.Point)
	}
	if again[4].Status != scaling.StatusError+": boom" {
		t.Errorf("the row of another study was changed: %v", again[4])
	}
	md, err := os.ReadFile(filepath.Join(out, scaling.MarkdownName))
	must(t, err)
	if strings.Contains(string(md), "boom") || !strings.Contains(string(md), "**OOM**") {
		t.Errorf("scaling.md shows a point that is not planned, or not the planned one out of memory:\n%s", md)
	}
}

// TestScalingFailures checks that points that fail are recorded and the
// study goes on: out of memory (the watchdog stops them) and a time limit.
// A child that dies of something else is package scaling's
// TestStudyChildFailure.
func TestScalingFailures(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	t.Run("oom", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "scaling")
		// 300,000 entities make complex2's tables 240 MB before training
		// starts; 300 entities fit in a few tens of MB.
		code, stderr := runScalingCLI(t, "-scaling", "-out", out, "-scaling-models", "complex2,complex",
			"-scaling-batches=", "-scaling-entities", "300,300000", "-scaling-batch", "8",
			"-scaling-relations", "7", "-scaling-warm", "0", "-scaling-steps", "1", "-scaling-max-mem", "150MiB")
		if code != exitOK {
			t.Fatalf("exit %d, want 0 (out of memory is a result):\n%s", code, stderr)
		}
		var status []string
		for _, r := range readScalingRows(t, out) {
			status = append(status, fmt.Sprintf("%d %s %s", r.Entities, r.Model, r.Status))
			if r.Status == scaling.StatusOOM && !(r.PeakRSSMB >= 150) {
				t.Errorf("%v out of memory at a peak of %g MB, under the cap", r.Point, r.PeakRSSMB)
			}
		}
		want := []string{"300 complex2 ok", "300 complex ok", "300000 complex2 oom", "300000 complex oom"}
		if !slices.Equal(status, want) {
			t.Errorf("got %q, want %q\n%s", status, want, stderr)
		}
		md, err := os.ReadFile(filepath.Join(out, scaling.MarkdownName))
		must(t, err)
		if !strings.Contains(string(md), "**OOM**") {
			t.Errorf("scaling.md does not show the failure:\n%s", md)
		}
		data, err := os.ReadFile(filepath.Join(out, scaling.PNGName))
		must(t, err)
		if _, err := png.Decode(bytes.NewReader(data)); err != nil {
			t.Errorf("scaling.png: %v", err)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "scaling")
		// Thousands of steps take seconds; the limit is a fraction of one.
		code, stderr := runScalingCLI(t, "-scaling", "-out", out, "-scaling-models", "complex2",
			"-scaling-batches=", "-scaling-entities", "300", "-scaling-batch", "8", "-scaling-relations", "7",
			"-scaling-steps", "100000", "-scaling-timeout", "300ms", "-scaling-max-mem", "0")
		if code != exitRunsFailed {
			t.Errorf("exit %d, want %d:\n%s", code, exitRunsFailed, stderr)
		}
		rows := readScalingRows(t, out)
		if len(rows) != 1 || rows[0].Status != scaling.StatusTimeout {
			t.Errorf("rows %v, want one timeout", rows)
		}
	})
}

func TestScalingFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-scaling", "-grid", "grids/umls.toml"}, "-grid cannot be used with -scaling"},
		{[]string{"-scaling", "-scaling-models", "complex,nosuch"}, `unknown model "nosuch"`},
		{[]string{"-scaling", "-scaling-batches", "100,0"}, `-scaling-batches: "0" is not a positive integer`},
		{[]string{"-scaling", "-scaling-entities", "1e6"}, `-scaling-entities: "1e6" is not a positive integer`},
		{[]string{"-scaling", "-scaling-batches=", "-scaling-entities="}, "nothing to measure"},
		{[]string{"-scaling", "-scaling-steps", "0"}, "-scaling-steps 0"},
		{[]string{"-scaling", "-scaling-max-mem", "20"}, `"20" has no unit`},
		{[]string{"-scaling", "-scaling-max-mem", "lots"}, `"lots" is not an amount of memory`},
	} {
		var so, se bytes.Buffer
		code := runCLI(context.Background(), c.args, cliEnv{stdout: &so, stderr: &se, getenv: func(string) string { return "" }, dir: t.TempDir()})
		if code != exitUsage || !strings.Contains(se.String(), c.want) {
			t.Errorf("%q: exit %d, %q; want exit %d and %q", c.args, code, se.String(), exitUsage, c.want)
		}
	}
}
