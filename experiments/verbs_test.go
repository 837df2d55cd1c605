package main

import (
	"context"
	"strings"
	"testing"

	"gekc/sweep/sweeptest"
)

// -h lists the verbs, a line each, and the old forms; VERB -h gives its
// flags; an unknown verb is a usage error with the closest one.
func TestVerbsHelp(t *testing.T) {
	code, _, stderr := runInProcess(t, context.Background(), newFake(), "-h")
	want := []string{"verbs:", "Old forms"}
	for _, v := range verbs {
		want = append(want, "  "+v.name+" ")
	}
	if err := containsAll(stderr, want...); code != exitOK || err != nil {
		t.Errorf("-h: exit %d, %v:\n%s", code, err, stderr)
	}
	for _, c := range []struct {
		verb string
		flag string
	}{{"sweep", "-dry-run"}, {"analyze", "-features"}, {"tables", "-reference"}, {"scaling", "-scaling-rank"}, {"query", "-target"}, {"synth", "-to"}} {
		code, _, stderr := runInProcess(t, context.Background(), newFake(), c.verb, "-h")
		if code != exitOK || !strings.Contains(stderr, c.flag) {
			t.Errorf("%s -h: exit %d, no %s:\n%s", c.verb, code, c.flag, stderr)
		}
	}
	code, _, stderr = runInProcess(t, context.Background(), newFake(), "swep", "-grid", "x")
	if code != exitUsage || !strings.Contains(stderr, `unknown verb "swep"`) || !strings.Contains(stderr, "did you mean sweep") {
		t.Errorf("swep: exit %d:\n%s", code, stderr)
	}
	code, _, stderr = runInProcess(t, context.Background(), newFake(), "analyze", "-grid", "x")
	if code != exitUsage || !strings.Contains(stderr, "analyze needs a KIND") {
		t.Errorf("analyze without a kind: exit %d:\n%s", code, stderr)
	}
}

// Each verb does what its old form does: the same exit status and output.
func TestVerbsMatchOldForms(t *testing.T) {
	fx := newSweepFixture(t, sweeptest.ToyGrid)
	if code, _, stderr := runInProcess(t, context.Background(), newFake(), append([]string{"sweep"}, fx.args("-only", "0-1")...)...); code != exitOK {
		t.Fatalf("sweep verb: exit %d: %s", code, stderr)
	}
	for _, c := range []struct {
		verb, old []string
	}{
		{append([]string{"analyze", "plots"}, fx.args()...), fx.args("-analyze", "plots")},
		{append([]string{"analyze", "ktd"}, fx.args()...), fx.args("-analyze", "ktd")},
		{append([]string{"tables"}, fx.args()...), fx.args("-analyze", "tables")},
		{append([]string{"sweep"}, fx.args("-dry-run")...), fx.args("-dry-run")},
		{[]string{"scaling", "-grid", "x"}, []string{"-scaling", "-grid", "x"}},
	} {
		vc, vout, verr := runInProcess(t, context.Background(), newFake(), c.verb...)
		oc, oout, oerr := runInProcess(t, context.Background(), newFake(), c.old...)
		if vc != oc || vout != oout || verr != oerr {
			t.Errorf("%v: exit %d, stdout %q, stderr %q\nold form %v: exit %d, stdout %q, stderr %q", c.verb, vc, vout, verr, c.old, oc, oout, oerr)
		}
	}
}

// -out is the results directory in every verb: synth writes its data set
// to -to, and an old-style synth -out DATASET says so.
func TestSynthOutIsTheResultsDirectory(t *testing.T) {
	dir := t.TempDir()
	code, _, stderr := runInProcess(t, context.Background(), newFake(), "synth", "-planted", "complex2", "-entities", "6", "-relations", "2",
		"-rank", "2", "-out", dir+"/data/x", "-train", "5", "-valid", "1", "-test", "1")
	if code != exitUsage || !strings.Contains(stderr, "-to is required") || !strings.Contains(stderr, "-out is the results directory") {
		t.Errorf("synth with -out and no -to: exit %d:\n%s", code, stderr)
	}
}

// diag ll-by-seen prints a finished run's test LL split by seen entities;
// a name it does not know is a usage error.
func TestDiagLLBySeen(t *testing.T) {
	dir := t.TempDir()
	run := fakeFinishedRun(t, dir, "cp2", 3)
	code, stdout, stderr := runInProcess(t, context.Background(), newFake(), "diag", "ll-by-seen", "-run", run, "-data", "../data")
	if err := containsAll(stdout, "test LL", "over 661 triples", "table subject: mean row norm", "log Z"); code != exitOK || err != nil {
		t.Errorf("exit %d, %v:\n%s%s", code, err, stdout, stderr)
	}
	code, _, stderr = runInProcess(t, context.Background(), newFake(), "diag", "nothing", "-run", run)
	if code != exitUsage || !strings.Contains(stderr, `diag "nothing": want ll-by-seen`) {
		t.Errorf("unknown diagnostic: exit %d:\n%s", code, stderr)
	}
}

// diag refit-relations and uniform-components run on finished runs, their
// ψ from another run given by ID or directory.
func TestDiagRefitAndUniformComponents(t *testing.T) {
	dir := t.TempDir()
	sq := fakeFinishedRun(t, dir, "complex2", 3)
	mix := fakeFinishedRun(t, dir, "cp+", 3)
	psi := fakeFinishedRun(t, dir, "complex", 3)
	code, stdout, stderr := runInProcess(t, context.Background(), newFake(), "diag", "refit-relations", "-run", sq, "-data", "../data",
		"-pairs", "20", "-features", psi, "-samples", "300")
	if err := containsAll(stdout, "mean p(r | s, o) over 20 training pairs", "as trained   p(R) TV", "refit twice", "KTD"); code != exitOK || err != nil {
		t.Errorf("refit-relations: exit %d, %v:\n%s%s", code, err, stdout, stderr)
	}
	code, stdout, stderr = runInProcess(t, context.Background(), newFake(), "diag", "uniform-components", "-run", mix, "-data", "../data",
		"-features", psi, "-samples", "300")
	if err := containsAll(stdout, "component perplexity", "uniform (the paper's code): KTD"); code != exitOK || err != nil {
		t.Errorf("uniform-components: exit %d, %v:\n%s%s", code, err, stdout, stderr)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"refit-relations", "-run", mix}, "not a squared GeKC"},
		{[]string{"uniform-components", "-run", mix}, "-features is required"},
	} {
		code, _, stderr := runInProcess(t, context.Background(), newFake(), append(append([]string{"diag"}, c.args...), "-data", "../data")...)
		if code == exitOK || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, want an error with %q:\n%s", c.args, code, c.want, stderr)
		}
	}
}
