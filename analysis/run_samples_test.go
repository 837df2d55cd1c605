package analysis

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gekc/kg"
	"gekc/query"
	"gekc/resultsdir"
	"gekc/train/ckpt"
)

// -analyze samples audits each GeKC run's samples (real training on
// Nations) under the parameters they were drawn from: a run sampled at its
// best validation LL is weighed with checkpoint-ll.npz, not with its
// selected parameters; an energy-based run has no row. A run that lost
// its checkpoint keeps its row, and one that lost only checkpoint-ll.npz
// is not audited again, each said on stderr.
func TestAnalyzeSamplesAudit(t *testing.T) {
	data := shippedData(t, "nations")
	ts := trainedSweep(t, `name = "audit"
[defaults]
dataset = "nations"
objective = "pll"
rank = 4
batch_size = 100
learning_rate = 0.05
epochs = 8
patience = 0
samples = 2000
[[sweep]]
model = "complex2"
sample_from = "ll"
[[sweep]]
model = ["cp2", "complex"]
`, data)
	ids := ts.ids()
	stdout, stderr := mustAnalyze(t, analysisJob{Kind: "samples", Samples: 2000, Out: ts.out, DataRoot: data, Runs: ts.g.Runs})
	path := filepath.Join(ts.out, auditTSVName)
	rows, err := readAuditTSV(path, filepath.Join(ts.out, runsDirName))
	must(t, err)
	if len(rows) != 2 {
		t.Fatalf("%d audit rows, want the two GeKC runs'\n%s", len(rows), stderr)
	}
	for _, row := range rows {
		dir := filepath.Join(ts.out, runsDirName, row.Run.ID)
		fr, err := resultsdir.LoadFinished(dir, data)
		must(t, err)
		if row.Run.Model == "complex2" {
			must(t, ckpt.Load(filepath.Join(dir, ckpt.CheckpointLLName), fr.Model))
			if !strings.HasPrefix(row.SampledAt, "best valid LL") {
				t.Errorf("complex2 sampled at %q", row.SampledAt)
			}
		}
		want, err := AuditSamples(mustQuerier(t, fr), fr.Data, mustSamples(t, dir, fr))
		must(t, err)
		if got := row.Audit.Splits[0].Mass; math.Abs(got-want.Splits[0].Mass) > 1e-7*got { // the table keeps 8 digits
			t.Errorf("%s: train mass %v, want %v (the sampled parameters')", row.Run.Model, got, want.Splits[0].Mass)
		}
		if got, w := row.Audit.Relations, want.Relations; got == nil || math.Abs(got.TV-w.TV) > 1e-5 || math.Abs(got.TestLL-w.TestLL) > 1e-6 {
			t.Errorf("%s: relations %+v, want %+v", row.Run.Model, got, w)
		}
		for _, sp := range row.Audit.Splits {
			if z := sp.Z(row.Audit.Samples); !(z > -4 && z < 4) {
				t.Errorf("%s %s: z = %v", row.Run.Model, sp.Split, z)
			}
		}
		if !strings.Contains(stdout, "`"+row.Run.ID+"`") {
			t.Errorf("the printed table has no row for %s", row.Run.ID)
		}
		if line := row.Run.ID + ": entropy "; !strings.Contains(stderr, line) || !strings.Contains(stderr, "to the training frequencies, test LL of R ") {
			t.Errorf("stderr has no audit line for %s with its relations:\n%s", row.Run.ID, stderr)
		}
	}
	// complex2 sampled at its best LL: weighed with the selected
	// parameters instead, its train mass differs.
	c2 := filepath.Join(ts.out, runsDirName, rows[0].Run.ID)
	if rows[0].Run.Model != "complex2" {
		c2 = filepath.Join(ts.out, runsDirName, rows[1].Run.ID)
	}
	fr, err := resultsdir.LoadFinished(c2, data)
	must(t, err)
	sel, err := AuditSamples(mustQuerier(t, fr), fr.Data, mustSamples(t, c2, fr))
	must(t, err)
	for _, row := range rows {
		if row.Run.Model == "complex2" && math.Abs(row.Audit.Splits[0].Mass-sel.Splits[0].Mass) < 1e-6 {
			t.Errorf("complex2's audit weighs its selected parameters, not its best-LL ones")
		}
	}

	before, err := os.ReadFile(path)
	must(t, err)
	must(t, os.Remove(filepath.Join(c2, ckpt.CheckpointLLName)))
	cp2 := filepath.Join(ts.out, runsDirName, ids[1])
	for _, id := range ids {
		if strings.HasPrefix(id, "cp2-") {
			cp2 = filepath.Join(ts.out, runsDirName, id)
		}
	}
	must(t, os.Remove(filepath.Join(cp2, ckpt.CheckpointName)))
	_, stderr, err = runAnalysis(analysisJob{Kind: "samples", Samples: 2000, Out: ts.out, DataRoot: data, Runs: ts.g.Runs})
	must(t, err)
	for _, want := range []string{
		filepath.Base(c2) + ": no " + ckpt.CheckpointLLName + ", the parameters its samples come from: not audited; its row is kept from " + auditTSVName,
		filepath.Base(cp2) + ": no " + ckpt.CheckpointName + ": its samples are neither drawn nor audited; its row is kept from " + auditTSVName,
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr does not say %q:\n%s", want, stderr)
		}
	}
	after, err := os.ReadFile(path)
	must(t, err)
	if string(after) != string(before) {
		t.Errorf("%s changed without anything to audit:\n%s\nwas\n%s", auditTSVName, after, before)
	}
}

func mustSamples(t *testing.T, dir string, fr *resultsdir.Finished) []kg.Triple {
	t.Helper()
	ts, err := resultsdir.ReadSamples(filepath.Join(dir, samplesName), fr.Data)
	must(t, err)
	return ts
}

func mustQuerier(t *testing.T, fr *resultsdir.Finished) *query.Querier {
	t.Helper()
	q, err := query.New(fr.Model, nil, 100)
	must(t, err)
	return q
}

// TestCommittedAuditTables: every committed sample-audit.md is what its
// sample-audit.tsv gives, and no row was dropped for want of its run's
// record, so no committed audit was edited by hand or lost its run.
func TestCommittedAuditTables(t *testing.T) {
	checkCommittedTables(t, auditTSVName, auditMDName, readAuditTSV, AuditTables)
}
