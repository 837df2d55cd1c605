package analysis

import (
	"path/filepath"
	"testing"

	"os"

	"context"
	"gekc/internal/jsonfloat"
	"gekc/report"
	"gekc/resultsdir"
	"gekc/sweep"
	"gekc/sweep/sweeptest"
	"gekc/train"
	"io"
	"slices"
	"strings"
	"time"
)

import ()

// -analyze paper compares a sweep's record with the paper's tables. It
// reads results.tsv alone (no data set, no checkpoint): on a copy of the
// committed FB15k-237 d = 1000 record it reproduces the committed
// paper.md, and a missing reference or an empty sweep are clear errors.
func TestAnalyzePaper(t *testing.T) {
	src := filepath.Join("..", "results", "fb15k237-d1000")
	out := t.TempDir()
	data, err := os.ReadFile(filepath.Join(src, resultsTSVName))
	must(t, err)
	must(t, os.WriteFile(filepath.Join(out, resultsTSVName), data, 0o644))
	want, err := os.ReadFile(filepath.Join(src, resultsdir.PaperMDName))
	must(t, err)
	a := analysisJob{Kind: "paper", Reference: paperReference, Out: out, DataRoot: filepath.Join(out, "no-data")}
	stdout, _ := mustAnalyze(t, a)
	if stdout != string(want) {
		t.Errorf("stdout is not the committed paper.md:\n%s", stdout)
	}
	got, err := os.ReadFile(filepath.Join(out, resultsdir.PaperMDName))
	must(t, err)
	if string(got) != string(want) {
		t.Errorf("paper.md differs from the committed one:\n%s", got)
	}
	sweeptest.NoTempFiles(t, out)

	missing := filepath.Join(out, "nope.tsv")
	a.Reference = missing
	if _, _, err := runAnalysis(a); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("reference %s: %v", missing, err)
	}
	a.Reference, a.Out = paperReference, t.TempDir()
	if _, _, err := runAnalysis(a); err == nil || !strings.Contains(err.Error(), "no run has ended yet") {
		t.Errorf("-analyze paper on an empty sweep: %v", err)
	}
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
	s := sweep.New(ts.g, ts.g.Runs[:4], sweep.Options{Out: ts.out, DataRoot: ts.data, Run: fake.run, Quiet: true})
	must(t, s.Prepare())
	if tally := s.Run(context.Background()); tally.Finished != 2 || tally.Diverged != 1 || tally.Failed != 1 {
		t.Fatalf("%+v; want 2 finished, 1 diverged, 1 failed", tally)
	}
	_, stderr := mustAnalyze(t, analysisJob{Kind: "plots", Out: ts.out, DataRoot: ts.data, Runs: ts.g.Runs})
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
	if _, _, err := runAnalysis(analysisJob{Kind: "nonsense", Out: ts.out, DataRoot: ts.data, Runs: ts.g.Runs}); err == nil ||
		!strings.Contains(err.Error(), "plots, paper or tables") {
		t.Errorf("-analyze nonsense: %v", err)
	}
}

// -analyze tables writes results.tsv and results.md again from every run
// record in the directory, whatever results.tsv said before (a sweep
// started afresh elsewhere knows only its own runs), in the order the runs
// ended.
func TestAnalyzeTablesFromRecords(t *testing.T) {
	out := t.TempDir()
	for i, seed := range []int{1, 0} {
		spec := exampleSpec()
		spec.Seed = seed
		rec := &resultsdir.Record{ID: spec.ID(), ConfigID: spec.ConfigID(), Status: train.Finished, Spec: spec,
			Test: map[string]jsonfloat.Float{"mrr": jsonfloat.Float(0.3 + 0.01*float64(i))}, Valid: map[string]jsonfloat.Float{"mrr": 0.3},
			FinishedAt: time.Date(2026, 1, 1, i, 0, 0, 0, time.UTC)}
		dir := filepath.Join(out, runsDirName, rec.ID)
		must(t, os.MkdirAll(dir, 0o755))
		must(t, resultsdir.WriteRecord(filepath.Join(dir, metricsName), rec))
	}
	// A results.tsv that knows one run only.
	must(t, os.WriteFile(filepath.Join(out, resultsTSVName), []byte("id\tstatus\nother\tfinished\n"), 0o644))
	a := &analysisJob{Kind: "tables", Title: "t", Out: out, Stdout: io.Discard, Stderr: io.Discard}
	must(t, Analyze(context.Background(), a.Kind, a.options()))
	tab, err := report.ReadTSV(filepath.Join(out, resultsTSVName))
	must(t, err)
	if len(tab.Rows) != 2 || tab.Rows[0]["seed"] != "1" || tab.Rows[1]["seed"] != "0" {
		t.Errorf("rows %v, want the two records, seed 1 (ended first) then seed 0", tab.Rows)
	}
	md, err := os.ReadFile(filepath.Join(out, resultsdir.ResultsMDName))
	must(t, err)
	if !strings.Contains(string(md), "# Results: t") || !strings.Contains(string(md), "2 runs in 1 configurations") {
		t.Errorf("results.md:\n%s", md)
	}
}

// -analyze tables also says, in a KTD table written before tables did,
// which parameters each run's samples came from, from the run's record:
// the selected epoch's, or those of the best validation log-likelihood
// for a run with sample_from = "ll". A run without a record keeps "".
func TestAnalyzeTablesFillsKTDSampled(t *testing.T) {
	out := t.TempDir()
	ll := 3
	var ids []string
	for i, from := range []string{"", "ll"} {
		spec := exampleSpec()
		spec.Seed, spec.SampleFrom = i, from
		rec := &resultsdir.Record{ID: spec.ID(), ConfigID: spec.ConfigID(), Status: train.Finished, Spec: spec, BestEpoch: 7, LLEpoch: &ll,
			Test: map[string]jsonfloat.Float{"mrr": 0.3}, Valid: map[string]jsonfloat.Float{"mrr": 0.3}}
		dir := filepath.Join(out, runsDirName, rec.ID)
		must(t, os.MkdirAll(dir, 0o755))
		must(t, resultsdir.WriteRecord(filepath.Join(dir, metricsName), rec))
		ids = append(ids, rec.ID)
	}
	old := "dataset\tmodel\tobjective\trun\tktd_mean\tktd_std\tdraws\tfeatures\tdraw_size\tsamples\n" +
		"umls\ttraining set\t\t\t0.01\t0.002\t100\tpsi\t661\t25000\n" +
		"umls\tcp2\tpll\t" + ids[0] + "\t0.2\t0.01\t100\tpsi\t661\t25000\n" +
		"umls\tcp2\tpll\t" + ids[1] + "\t0.1\t0.01\t100\tpsi\t661\t25000\n" +
		"umls\tcp2\tpll\tgone-run\t0.3\t0.01\t100\tpsi\t661\t25000\n"
	path := filepath.Join(out, "ktd-d1000.tsv")
	must(t, os.WriteFile(path, []byte(old), 0o644))
	a := &analysisJob{Kind: "tables", Title: "t", Out: out, Stdout: io.Discard, Stderr: io.Discard}
	must(t, Analyze(context.Background(), a.Kind, a.options()))
	rows, set, err := ReadKTDTSV(path)
	must(t, err)
	var got []string
	for _, r := range rows {
		got = append(got, r.Sampled)
	}
	if want := []string{"", "best valid MRR, epoch 7", "best valid LL, epoch 3", ""}; !slices.Equal(got, want) || set.Features != "psi" {
		t.Errorf("sampled %q (setting %+v), want %q", got, set, want)
	}
	md, err := os.ReadFile(filepath.Join(out, "ktd-d1000.md"))
	must(t, err)
	if !strings.Contains(string(md), "| best valid LL, epoch 3 ") {
		t.Errorf("ktd-d1000.md:\n%s", md)
	}
}

// paperReference is the paper's table, the command's default reference.
var paperReference = filepath.Join("..", "results", "paper-reference.tsv")

// A sweep whose data set the reference covers writes paper.md with
// results.md after every run; one whose data set it does not cover, or
// only at another d, writes none, and -analyze paper says why.
func TestSweepWritesPaperMD(t *testing.T) {
	sweepWith := func(ref *report.Reference) toySweep {
		t.Helper()
		ts := newToySweep(t)
		s := sweep.New(ts.g, ts.g.Runs[:1], sweep.Options{Out: ts.out, DataRoot: ts.data, Run: newFake().run, Quiet: true, Reference: ref})
		must(t, s.Prepare())
		if tally := s.Run(context.Background()); tally.Finished != 1 {
			t.Fatalf("%+v", tally)
		}
		return ts
	}
	readRef := func(path, text string) *report.Reference {
		t.Helper()
		if text != "" {
			must(t, os.WriteFile(path, []byte(text), 0o644))
		}
		ref, err := report.ReadReference(path)
		must(t, err)
		return ref
	}
	dir := t.TempDir()

	ts := sweepWith(readRef(filepath.Join(dir, "ref.tsv"), "dataset\tmodel\tobjective\tmrr\ntoy\tcp2\tpll\t0.5\n"))
	md, err := os.ReadFile(filepath.Join(ts.out, resultsdir.PaperMDName))
	must(t, err)
	if !strings.Contains(string(md), "## toy") || !strings.Contains(string(md), "| CP²") {
		t.Errorf("paper.md:\n%s", md)
	}

	if ts := sweepWith(readRef(paperReference, "")); fileExists(filepath.Join(ts.out, resultsdir.PaperMDName)) {
		t.Error("paper.md written for a data set the paper's reference does not cover")
	}

	// Values at another d cover nothing: no paper.md, and -analyze paper
	// says why.
	ref1000 := filepath.Join(dir, "ref1000.tsv")
	ts = sweepWith(readRef(ref1000, "dataset\tmodel\tobjective\trank\tmrr\ntoy\tcp2\tpll\t1000\t0.5\n"))
	if fileExists(filepath.Join(ts.out, resultsdir.PaperMDName)) {
		t.Error("paper.md written for runs at d = 4 against values at d = 1000")
	}
	_, _, err = runAnalysis(analysisJob{Kind: "paper", Reference: ref1000, Out: ts.out, DataRoot: ts.data, Runs: ts.g.Runs})
	if err == nil || !strings.Contains(err.Error(), "has no values for the datasets at the embedding sizes") {
		t.Errorf("-analyze paper at another d: %v", err)
	}
}
