package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gekc/scaling"
)

// -scaling on the command line (the study's rows, tables, resuming and
// failures are package scaling's tests): the flags and their defaults make
// the points, each measured by the command re-executed as a child (this
// test binary, see TestMain); exit 0 when every point is measured,
// exitRunsFailed when one is not.
func TestScalingStudy(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	out := filepath.Join(t.TempDir(), "scaling")
	flags := []string{"-scaling", "-out", out, "-scaling-all-entities", "200", "-scaling-batch", "8",
		"-scaling-relations", "7", "-scaling-rank", "4", "-scaling-warm", "0", "-scaling-steps", "1", "-scaling-max-mem", "4GiB"}
	if code, stderr := runScalingCLI(t, slices.Concat(flags, []string{"-scaling-batches", "8", "-scaling-entities", "300"})...); code != exitOK {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	rows, err := scaling.ReadTSV(filepath.Join(out, scaling.TSVName))
	must(t, err)
	var want, got []scaling.Point
	for _, p := range []scaling.Point{{Study: scaling.StudyBatch, Entities: 200}, {Study: scaling.StudyEntities, Entities: 300}} {
		for _, m := range []string{"complex", "complex+", "complex2"} { // the default models
			p.Model, p.Relations, p.Rank, p.Batch = m, 7, 4, 8
			want = append(want, p)
		}
	}
	for _, r := range rows {
		got = append(got, r.Point)
		if !r.OK() || r.MaxMemMB != 4096 {
			t.Errorf("row %v: status %q, cap %g MB", r.Point, r.Status, r.MaxMemMB)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("points:\n got %v\nwant %v", got, want)
	}

	// A limit no child can meet: the one new point fails, timed out or
	// not started; the study's log is on stderr.
	code, stderr := runScalingCLI(t, slices.Concat(flags, []string{"-scaling-models", "complex2", "-scaling-batches", "16", "-scaling-entities=",
		"-scaling-steps", "100000", "-scaling-timeout", "1ms"})...)
	if err := containsAll(stderr, "scaling [1/1] batch complex2", ": measuring", "1 points timed out or failed"); code != exitRunsFailed || err != nil {
		t.Errorf("exit %d, want %d; stderr: %v:\n%s", code, exitRunsFailed, err, stderr)
	}
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
