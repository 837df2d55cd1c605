package scaling

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestMain makes the test binary, run with $GEKC_SCALING_POINT, a child of
// the studies the tests run, as a command using the package would be.
func TestMain(m *testing.M) {
	if spec := os.Getenv(ChildEnv); spec != "" {
		if err := RunChild(spec, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func readRows(t *testing.T, out string) []Row {
	t.Helper()
	rows, err := ReadTSV(filepath.Join(out, TSVName))
	must(t, err)
	return rows
}

// TestStudyChildFailure checks that a point whose child dies of something
// else than memory or time (injected by a wrapper script) is recorded with
// the first line the child printed, and that the study goes on.
func TestStudyChildFailure(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "scaling")
	// The wrapper fails the points of batch 16 and runs the rest.
	script := filepath.Join(dir, "child.sh")
	must(t, os.WriteFile(script, []byte(fmt.Sprintf(`#!/bin/sh
case "$%s" in
*'"batch":16'*) echo "injected failure: disk on fire" >&2; echo "second line" >&2; exit 3 ;;
esac
exec %q
`, ChildEnv, os.Args[0])), 0o755))
	o := Options{Models: []string{"complex", "complex2"}, Batches: []int{8, 16, 24}, AllEntities: 200, Batch: 8,
		Relations: 7, Rank: 4, Warm: 0, Steps: 1}
	var log bytes.Buffer
	s := &Study{Options: o, Out: out, Exe: script, Env: os.Environ(), Log: &log}
	failed, err := s.Run(context.Background())
	must(t, err)
	if failed != 2 {
		t.Errorf("%d failed points, want 2", failed)
	}
	var status []string
	for _, r := range readRows(t, out) {
		status = append(status, fmt.Sprintf("%d %s %s", r.Batch, r.Model, r.Status))
	}
	want := []string{"8 complex ok", "8 complex2 ok",
		"16 complex error: injected failure: disk on fire", "16 complex2 error: injected failure: disk on fire",
		"24 complex ok", "24 complex2 ok"}
	if !slices.Equal(status, want) {
		t.Errorf("got %q,\nwant %q\n%s", status, want, log.String())
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
		var b ByteSize
		if err := b.Set(c.in); err != nil || int64(b) != c.want || b.String() != c.str {
			t.Errorf("%q: %d %q %v, want %d %q", c.in, int64(b), b.String(), err, c.want, c.str)
		}
	}
	for _, bad := range []string{"", "GiB", "-1GiB", "1e30TiB", "3 apples", "12"} {
		var b ByteSize
		if err := b.Set(bad); err == nil {
			t.Errorf("%q accepted as %d", bad, int64(b))
		}
	}
}

func TestParseTSV(t *testing.T) {
	rows := []Row{
		{Point{StudyBatch, "complex", 100, 5, 4, 10}, 1.5, 30, StatusOK, 0, "", 2},
		{Point{StudyEntities, "complex+", 200, 5, 4, 10}, math.NaN(), 2100, StatusOOM, 2048, "skylakex", 4},
		{Point{StudyEntities, "complex2", 200, 5, 4, 10}, math.NaN(), math.NaN(), "error: a\ttab", 0, "", 1},
	}
	got, err := ParseTSV("s.tsv", EncodeTSV(rows))
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
		{strings.Join(columns, "\t") + "\nbatch\tcomplex\tx\t5\t4\t10\t1\t30\tok\t0\t\t2\n", `s.tsv:2: bad entities "x"`},
		{strings.Join(columns, "\t") + "\nbatch\tcomplex\t100\t5\t4\t10\t\t30\tok\t0\t\t2\n", `s.tsv:2: bad step_ms ""`},
		{strings.Join(columns, "\t") + "\nother\tcomplex\t100\t5\t4\t10\t1\t30\tok\t0\t\t2\n", `s.tsv:2: bad study "other"`},
	} {
		if _, err := ParseTSV("s.tsv", []byte(c.tsv)); err == nil || !strings.Contains(err.Error(), c.want) {
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
		{true, "fatal error: out of memory", StatusTimeout},
		{false, "runtime: out of memory: cannot allocate 4194304-byte block (3 in use)\nfatal error: out of memory\n", StatusOOM},
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

func TestPlanErrors(t *testing.T) {
	for _, c := range []struct {
		edit   func(*Options)
		option string // "" for ErrNoPoints
		want   string
	}{
		{func(o *Options) { o.Models = nil }, "Models", "Models: no model given"},
		{func(o *Options) { o.Models = []string{"complex", "nosuch"} }, "Models", `unknown model "nosuch"`},
		{func(o *Options) { o.Batches = []int{100, -1} }, "Batches", "Batches -1: want positive sizes"},
		{func(o *Options) { o.Rank = 0 }, "Rank", "Rank 0: want a positive number"},
		{func(o *Options) { o.Warm = -1 }, "Warm", "Warm -1: want 0 or more"},
		{func(o *Options) { o.Timeout = -1 }, "Timeout", "Timeout -1ns: want 0 (none) or more"},
		{func(o *Options) { o.Batches, o.Entities = nil, nil }, "", "nothing to measure"},
	} {
		o := DefaultOptions()
		c.edit(&o)
		_, err := o.Plan()
		var oe *OptionError
		switch {
		case err == nil || !strings.Contains(err.Error(), c.want):
			t.Errorf("%s: %v, want %q", c.want, err, c.want)
		case c.option == "" && !errors.Is(err, ErrNoPoints):
			t.Errorf("%s: %v is not ErrNoPoints", c.want, err)
		case c.option != "" && (!errors.As(err, &oe) || oe.Option != c.option):
			t.Errorf("%s: %#v, want an OptionError on %s", c.want, err, c.option)
		}
	}
}

// Plan orders and deduplicates sizes and models without changing the
// caller's slices.
func TestPlanOrder(t *testing.T) {
	o := Options{Models: []string{"complex2", "complex", "complex2"}, Batches: []int{20, 10, 20}, Entities: []int{7},
		AllEntities: 30, Batch: 5, Relations: 2, Rank: 3, Steps: 1}
	plan, err := o.Plan()
	must(t, err)
	var got []string
	for _, p := range plan {
		got = append(got, p.String())
	}
	want := []string{
		"batch complex2 |E|=30 |R|=2 d=3 B=10", "batch complex |E|=30 |R|=2 d=3 B=10",
		"batch complex2 |E|=30 |R|=2 d=3 B=20", "batch complex |E|=30 |R|=2 d=3 B=20",
		"entities complex2 |E|=7 |R|=2 d=3 B=5", "entities complex |E|=7 |R|=2 d=3 B=5",
	}
	if !slices.Equal(got, want) {
		t.Errorf("plan\n got %q\nwant %q", got, want)
	}
	if !slices.Equal(o.Batches, []int{20, 10, 20}) {
		t.Errorf("Plan changed Options.Batches to %v", o.Batches)
	}
}
