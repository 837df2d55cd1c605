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

func readScalingRows(t *testing.T, out string) []scalingRow {
	t.Helper()
	rows, err := readScalingTSV(filepath.Join(out, scalingTSVName))
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
	var want []scalingPoint
	for _, b := range []int{8, 16} {
		for _, m := range []string{"complex", "complex+", "complex2"} {
			want = append(want, scalingPoint{scalingStudyBatch, m, 200, 7, 4, b})
		}
	}
	for _, e := range []int{300, 400} {
		for _, m := range []string{"complex", "complex+", "complex2"} {
			want = append(want, scalingPoint{scalingStudyEntities, m, e, 7, 4, 8})
		}
	}
	var got []scalingPoint
	for _, r := range rows {
		got = append(got, r.scalingPoint)
		if !r.ok() || !(r.StepMS > 0) || !(r.PeakRSSMB > 1) || r.Procs < 1 || r.MaxMemMB != 0 {
			t.Errorf("row %v: status %q, %g ms, %g MB, GOMAXPROCS %d, cap %g", r.scalingPoint, r.Status, r.StepMS, r.PeakRSSMB, r.Procs, r.MaxMemMB)
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

	data, err := os.ReadFile(filepath.Join(out, scalingPNGName))
	must(t, err)
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("scaling.png: %v", err)
	}
	if b := img.Bounds(); b.Dx() < 800 || b.Dx() > 4000 || b.Dy() < 500 || b.Dy() > 3000 {
		t.Errorf("scaling.png is %v", b)
	}
	md, err := os.ReadFile(filepath.Join(out, scalingMDName))
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
	rows[1].Status, rows[1].StepMS, rows[1].MaxMemMB = scalingStatusOOM, math.NaN(), 8192
	rows[2].Status, rows[2].StepMS, rows[2].MaxMemMB = scalingStatusOOM, math.NaN(), 100
	rows[3].Status, rows[3].StepMS = scalingStatusTimeout, math.NaN()
	lost := rows[4]
	other := lost.scalingPoint
	other.Rank = 99
	rows[4] = scalingRow{scalingPoint: other, Status: scalingStatusError + ": boom", StepMS: math.NaN(), PeakRSSMB: math.NaN()}
	must(t, WriteFileAtomic(filepath.Join(out, scalingTSVName), encodeScalingTSV(rows), 0o644))

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
	if again[1].Status != scalingStatusOOM || again[1].MaxMemMB != 8192 {
		t.Errorf("point out of memory under a larger cap measured again: %v", again[1])
	}
	for _, r := range []scalingRow{again[2], again[3], again[5]} {
		if !r.ok() || r.MaxMemMB != 4096 {
			t.Errorf("point not measured: %v", r)
		}
	}
	if again[5].scalingPoint != lost.scalingPoint {
		t.Errorf("last row is %v, want the lost point %v", again[5].scalingPoint, lost.scalingPoint)
	}
	if again[4].Status != scalingStatusError+": boom" {
		t.Errorf("the row of another study was changed: %v", again[4])
	}
	md, err := os.ReadFile(filepath.Join(out, scalingMDName))
	must(t, err)
	if strings.Contains(string(md), "boom") || !strings.Contains(string(md), "**OOM**") {
		t.Errorf("scaling.md shows a point that is not planned, or not the planned one out of memory:\n%s", md)
	}
}

// TestScalingFailures checks that points that fail are recorded and the
// study goes on: out of memory (the watchdog stops them), a time limit, and
// a child that dies of something else (injected by a wrapper script).
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
			if r.Status == scalingStatusOOM && !(r.PeakRSSMB >= 150) {
				t.Errorf("%v out of memory at a peak of %g MB, under the cap", r.scalingPoint, r.PeakRSSMB)
			}
		}
		want := []string{"300 complex2 ok", "300 complex ok", "300000 complex2 oom", "300000 complex oom"}
		if !slices.Equal(status, want) {
			t.Errorf("got %q, want %q\n%s", status, want, stderr)
		}
		md, err := os.ReadFile(filepath.Join(out, scalingMDName))
		must(t, err)
		if !strings.Contains(string(md), "**OOM**") {
			t.Errorf("scaling.md does not show the failure:\n%s", md)
		}
		data, err := os.ReadFile(filepath.Join(out, scalingPNGName))
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
		if len(rows) != 1 || rows[0].Status != scalingStatusTimeout {
			t.Errorf("rows %v, want one timeout", rows)
		}
	})
	t.Run("error", func(t *testing.T) {
		dir := t.TempDir()
		out := filepath.Join(dir, "scaling")
		// The wrapper fails the points of batch 16 and runs the rest.
		script := filepath.Join(dir, "child.sh")
		must(t, os.WriteFile(script, []byte(fmt.Sprintf(`#!/bin/sh
case "$%s" in
*'"batch":16'*) echo "injected failure: disk on fire" >&2; echo "second line" >&2; exit 3 ;;
esac
exec %q
`, scalingChildEnv, os.Args[0])), 0o755))
		o := &scalingOptions{models: "complex,complex2", batches: "8,16,24", allEntities: 200, batch: 8,
			relations: 7, rank: 4, warm: 0, steps: 1}
		plan, err := o.plan()
		must(t, err)
		var log bytes.Buffer
		s := &scalingStudy{opts: o, plan: plan, out: out, exe: script,
			environ: append(os.Environ(), helperEnv+"=cli"), stderr: &log}
		failed, err := s.run(context.Background())
		must(t, err)
		if failed != 2 {
			t.Errorf("%d failed points, want 2", failed)
		}
		var status []string
		for _, r := range readScalingRows(t, out) {
			status = append(status, fmt.Sprintf("%d %s %s", r.Batch, r.Model, r.Status))
		}
		want := []string{"8 complex ok", "8 complex2 ok",
			"16 complex error: injected failure: disk on fire", "16 complex2 error: injected failure: disk on fire",
			"24 complex ok", "24 complex2 ok"}
		if !slices.Equal(status, want) {
			t.Errorf("got %q,\nwant %q\n%s", status, want, log.String())
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

func TestByteSize(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		str  string
	}{
		{"20GiB", 20 << 30, "20GiB"},
		{"512MiB", 512 << 20, "512MiB"},
		{"1.5GiB", 3 << 29, "1536MiB"},
		{"3GB", 3e9, "3000000000B"},
		{"0", 0, "0B"},
		{"4194304", 4 << 20, "4MiB"},
	} {
		var b byteSize
		if err := b.Set(c.in); err != nil || int64(b) != c.want || b.String() != c.str {
			t.Errorf("%q: %d %q %v, want %d %q", c.in, int64(b), b.String(), err, c.want, c.str)
		}
	}
	for _, bad := range []string{"", "GiB", "-1GiB", "1e30TiB", "3 apples", "12"} {
		var b byteSize
		if err := b.Set(bad); err == nil {
			t.Errorf("%q accepted as %d", bad, int64(b))
		}
	}
}

func TestParseScalingTSV(t *testing.T) {
	rows := []scalingRow{
		{scalingPoint{scalingStudyBatch, "complex", 100, 5, 4, 10}, 1.5, 30, scalingStatusOK, 0, "", 2},
		{scalingPoint{scalingStudyEntities, "complex+", 200, 5, 4, 10}, math.NaN(), 2100, scalingStatusOOM, 2048, "skylakex", 4},
		{scalingPoint{scalingStudyEntities, "complex2", 200, 5, 4, 10}, math.NaN(), math.NaN(), "error: a\ttab", 0, "", 1},
	}
	got, err := parseScalingTSV("s.tsv", encodeScalingTSV(rows))
	must(t, err)
	rows[2].Status = "error: a tab" // tabs would break the columns
	if len(got) != len(rows) {
		t.Fatalf("%d rows back, want %d", len(got), len(rows))
	}
	for i := range rows {
		a, b := fmt.Sprintf("%+v", got[i]), fmt.Sprintf("%+v", rows[i])
		if a != b {
			t.Errorf("row %d:\n got %s\nwant %s", i, a, b)
		}
	}
	for _, c := range []struct{ tsv, want string }{
		{"study\tmodel\n", "no entities column"},
		{strings.Join(scalingColumns, "\t") + "\nbatch\tcomplex\tx\t5\t4\t10\t1\t30\tok\t0\t\t2\n", `s.tsv:2: bad entities "x"`},
		{strings.Join(scalingColumns, "\t") + "\nbatch\tcomplex\t100\t5\t4\t10\t\t30\tok\t0\t\t2\n", `s.tsv:2: bad step_ms ""`},
		{strings.Join(scalingColumns, "\t") + "\nother\tcomplex\t100\t5\t4\t10\t1\t30\tok\t0\t\t2\n", `s.tsv:2: bad study "other"`},
	} {
		if _, err := parseScalingTSV("s.tsv", []byte(c.tsv)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.tsv, err, c.want)
		}
	}
}

func TestClassifyChildFailure(t *testing.T) {
	for _, c := range []struct {
		timedOut bool
		stderr   string
		want     string
	}{
		{true, "fatal error: out of memory", scalingStatusTimeout},
		{false, "runtime: out of memory: cannot allocate 4194304-byte block (3 in use)\nfatal error: out of memory\n", scalingStatusOOM},
		{false, "\n  panic: boom\n\ngoroutine 1 [running]:\n", "error: panic: boom"},
		{false, "", "error: exit status 3"},
	} {
		if got := classifyChildFailure(c.timedOut, nil, c.stderr, fmt.Errorf("exit status 3")); got != c.want {
			t.Errorf("%q (timed out %v): %q, want %q", c.stderr, c.timedOut, got, c.want)
		}
	}
}

func TestLogTicks125(t *testing.T) {
	var labels []string
	for _, tk := range (logTicks125{}).Ticks(0.003, 0.6) {
		labels = append(labels, tk.Label)
	}
	if want := []string{"0.005", "0.01", "0.02", "0.05", "0.1", "0.2", "0.5"}; !slices.Equal(labels, want) {
		t.Errorf("ticks %q, want %q", labels, want)
	}
	// Within one decade, every digit.
	labels = labels[:0]
	for _, tk := range (logTicks125{}).Ticks(0.21, 0.45) {
		labels = append(labels, tk.Label)
	}
	if want := []string{"0.3", "0.4"}; !slices.Equal(labels, want) {
		t.Errorf("ticks %q, want %q", labels, want)
	}
}
