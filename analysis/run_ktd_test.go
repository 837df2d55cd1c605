package analysis

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gekc/grid"
	"gekc/internal/jsonfloat"
	"gekc/resultsdir"
	"gekc/sweep/sweeptest"
	"gekc/train/ckpt"
)

// Real training on Nations, then -analyze ktd: a table of the baselines
// and every GeKC, which later analyses update rather than replace. A run
// outside the selection (-only), or whose checkpoint is gone (as on a new
// machine), keeps its row when ψ and the sizes are the same; an analysis
// that would drop rows of another setting, or of a table that did not
// record one, is refused; the row of a run that is gone is dropped, and
// said so.
func TestKTDEndToEnd(t *testing.T) {
	data := shippedData(t, "nations")
	ts := trainedSweep(t, `name = "ktd"
[defaults]
dataset = "nations"
rank = 4
batch_size = 400
learning_rate = 0.01
epochs = 2

[[sweep]]
model = ["complex", "cp2", "cp+"]
objective = "pll"
`, data)
	ids := ts.ids() // complex (ψ), cp2, cp+
	// ktd is the analysis with ψ from ids[0] of samples samples per run,
	// of all runs, or of the run 2 alone (-only 2).
	ktd := func(samples int, only2 bool) analysisJob {
		runs := ts.g.Runs
		if only2 {
			runs = []grid.Run{runs[2]}
		}
		return analysisJob{Kind: "ktd", Features: ids[0], Samples: samples, Out: ts.out, DataRoot: data, Runs: runs}
	}
	tsvPath := filepath.Join(ts.out, KTDTSVName)
	readRows := func() []string {
		t.Helper()
		b, err := os.ReadFile(tsvPath)
		must(t, err)
		return strings.Split(strings.TrimSpace(string(b)), "\n")
	}

	stdout, _ := mustAnalyze(t, ktd(300, false))
	all := readRows()
	// A header, two baselines and the two GeKCs (the energy-based ψ run is none).
	if len(all) != 5 || !strings.HasPrefix(all[1], "nations\ttraining set\t") || !strings.HasPrefix(all[2], "nations\tuniform\t") ||
		!strings.Contains(all[3], ids[1]) || !strings.Contains(all[4], ids[2]) {
		t.Fatalf("%s:\n%s", KTDTSVName, strings.Join(all, "\n"))
	}
	psi, err := resultsdir.LoadFinished(filepath.Join(ts.out, runsDirName, ids[0]), data)
	must(t, err)
	digest, err := paramsDigest(psi.Model)
	must(t, err)
	if len(digest) != 12 {
		t.Fatalf("ψ's digest %q", digest)
	}
	for _, line := range all[1:] {
		if !strings.HasSuffix(line, "\t"+ids[0]+"\t"+digest+"\t201\t300") { // Nations' 201 test triples per draw
			t.Errorf("row without its setting: %q", line)
		}
	}
	// undigested is a table as written before ψ's digest was recorded.
	undigested := func(lines []string) string {
		var out []string
		for _, line := range lines {
			// features_digest, and NNMFAug's count, recorded after it
			out = append(out, strings.Join(slices.Delete(slices.Delete(strings.Split(line, "\t"), 12, 13), 8, 10), "\t"))
		}
		return strings.Join(out, "\n") + "\n"
	}
	for i, id := range ids[1:] {
		rec, err := readRecord(filepath.Join(ts.out, runsDirName, id, metricsName))
		must(t, err)
		if want := fmt.Sprintf("\t%s\tbest valid MRR, epoch %d\t", id, rec.BestEpoch); !strings.Contains(all[3+i], want) {
			t.Errorf("row %q does not say its samples come from epoch %d's parameters", all[3+i], rec.BestEpoch)
		}
	}
	// Each row's test log-likelihood: uniform's −log(|E|²|R|) (Nations: 14
	// entities, 55 relations), a run's that of the parameters sampled, none
	// for the training set.
	parsed, set, err := ReadKTDTSV(tsvPath)
	must(t, err)
	if r := parsed[0]; r.HasLL {
		t.Errorf("the training set has a test LL: %+v", r)
	}
	if r := parsed[1]; !r.HasLL || math.Abs(r.LL+2*math.Log(14)+math.Log(55)) > 1e-5 {
		t.Errorf("uniform's test LL %+v, want %.6g", r, -2*math.Log(14)-math.Log(55))
	}
	for _, r := range parsed[2:] {
		rec, err := readRecord(filepath.Join(ts.out, runsDirName, r.Run, metricsName))
		must(t, err)
		if want := float64(rec.Test["ll"]); !r.HasLL || math.Abs(r.LL-want) > 1e-5*math.Abs(want) {
			t.Errorf("%s: test LL %v (%v), want its record's %v", r.Run, r.LL, r.HasLL, want)
		}
	}
	md, err := os.ReadFile(filepath.Join(ts.out, KTDMarkdownName))
	must(t, err)
	if stdout != string(md) {
		t.Errorf("stdout is not %s:\n%s", KTDMarkdownName, stdout)
	}

	// A table from before the test LL was kept (and the sampled
	// parameters, and ψ's digest) gets the first two from the run records
	// when the tables are written again (-analyze tables), and is then
	// what the analysis wrote but for the digest.
	var older []string
	for _, line := range all {
		f := strings.Split(line, "\t")
		if f[1] != "model" {
			f[4] = "" // sampled
		}
		// features_digest, then test_ll with NNMFAug's count after it
		older = append(older, strings.Join(slices.Delete(slices.Delete(f, 12, 13), 7, 10), "\t"))
	}
	must(t, os.WriteFile(tsvPath, []byte(strings.Join(older, "\n")+"\n"), 0o644))
	noDigest := set
	noDigest.Digest = ""
	if rows, oldSet, err := ReadKTDTSV(tsvPath); err != nil || oldSet != noDigest || rows[1].HasLL || rows[2].Sampled != "" {
		t.Fatalf("the older table reads as %+v, %+v, %v", rows, oldSet, err)
	}
	if _, stderr := mustAnalyze(t, analysisJob{Kind: "tables", Title: "t", Out: ts.out}); !strings.Contains(stderr, "rows filled in from the run records (which parameters were sampled, or their test log-likelihood): 3") {
		t.Errorf("-analyze tables does not say it filled 3 rows:\n%s", stderr)
	}
	want := strings.Split(strings.ReplaceAll(strings.Join(all, "\n"), "\t"+digest+"\t", "\t\t"), "\n")
	if got := readRows(); !slices.Equal(got, want) {
		t.Errorf("filled from the records:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	wantMD := strings.Replace(string(md), " (parameters "+digest+")", "", 1)
	if filled, err := os.ReadFile(filepath.Join(ts.out, KTDMarkdownName)); err != nil || string(filled) != wantMD {
		t.Errorf("%s filled from the records:\n%s\nwant\n%s (%v)", KTDMarkdownName, filled, wantMD, err)
	}
	// So does a KTD analysis of one run: the row it keeps gets its LL, and
	// since the table's baselines are those of ψ now, the rows are taken as
	// of this ψ and the table gets its digest.
	must(t, os.WriteFile(tsvPath, []byte(strings.Join(older, "\n")+"\n"), 0o644))
	_, stderr := mustAnalyze(t, ktd(300, true))
	if got := readRows(); !slices.Equal(got, all) {
		t.Errorf("the rows kept by an analysis of run 2:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(all, "\n"))
	}
	if !strings.Contains(stderr, "ktd.tsv recorded no digest of ψ's parameters; its baselines are those of "+ids[0]+" now, so its rows are taken as of this ψ ("+digest+")") {
		t.Errorf("stderr does not say the undigested table was adopted:\n%s", stderr)
	}

	// A run whose checkpoint is gone but whose samples were published
	// (gzipped beside its record) is measured on them: the same row to the
	// digit, with no table to keep it from.
	run2 := filepath.Join(ts.out, runsDirName, ids[2])
	plain, err := os.ReadFile(filepath.Join(run2, samplesName))
	must(t, err)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, err = zw.Write(plain)
	must(t, err)
	must(t, zw.Close())
	must(t, os.WriteFile(filepath.Join(run2, samplesName+".gz"), gz.Bytes(), 0o644))
	away := t.TempDir()
	for _, f := range []string{ckpt.CheckpointName, samplesName} {
		must(t, os.Rename(filepath.Join(run2, f), filepath.Join(away, f)))
	}
	must(t, os.Remove(tsvPath))
	_, stderr = mustAnalyze(t, ktd(300, false))
	if got := readRows(); !slices.Equal(got, all) {
		t.Errorf("measured on published samples:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(all, "\n"))
	}
	if !strings.Contains(stderr, ids[2]+": no checkpoint; measured on its stored samples") {
		t.Errorf("stderr does not say the stored samples were used:\n%s", stderr)
	}
	for _, f := range []string{ckpt.CheckpointName, samplesName} {
		must(t, os.Rename(filepath.Join(away, f), filepath.Join(run2, f)))
	}
	must(t, os.Remove(filepath.Join(run2, samplesName+".gz")))

	// One run alone: the table is the same to the digit, since each run's
	// draws have their own seed and the baselines theirs.
	_, stderr = mustAnalyze(t, ktd(300, true))
	if got := readRows(); !slices.Equal(got, all) {
		t.Errorf("the run 2 alone gave:\n%s\nwant the table of the analysis of all runs:\n%s", strings.Join(got, "\n"), strings.Join(all, "\n"))
	}
	if !strings.Contains(stderr, "kept the KTD of 1 runs") || strings.Contains(stderr, "recorded no digest") {
		t.Errorf("stderr does not say a row was kept, of the same ψ:\n%s", stderr)
	}

	// Without its checkpoint (and samples), a run with a row keeps it.
	for _, f := range []string{ckpt.CheckpointName, samplesName} {
		must(t, os.Remove(filepath.Join(ts.out, runsDirName, ids[1], f)))
	}
	_, stderr = mustAnalyze(t, ktd(300, false))
	if got := readRows(); !slices.Equal(got, all) {
		t.Errorf("without %s's checkpoint the table became:\n%s", ids[1], strings.Join(got, "\n"))
	}
	if !strings.Contains(stderr, ids[1]+": no checkpoint; its row is kept") {
		t.Errorf("stderr does not say %s's row was kept:\n%s", ids[1], stderr)
	}
	// So does it from a table of before digests whose baselines are this
	// ψ's (every committed table, on a fresh clone without checkpoints).
	must(t, os.WriteFile(tsvPath, []byte(undigested(all)), 0o644))
	_, stderr = mustAnalyze(t, ktd(300, false))
	if got := readRows(); !slices.Equal(got, all) {
		t.Errorf("from an undigested table, without %s's checkpoint the table became:\n%s", ids[1], strings.Join(got, "\n"))
	}
	if !strings.Contains(stderr, ids[1]+": no checkpoint; its row is kept") || !strings.Contains(stderr, "recorded no digest") {
		t.Errorf("stderr does not say %s's row was kept from the undigested table:\n%s", ids[1], stderr)
	}

	// Without a row to keep either, the run gets none, and the others
	// theirs.
	must(t, os.WriteFile(tsvPath, []byte(strings.Join(slices.Delete(slices.Clone(all), 3, 4), "\n")+"\n"), 0o644))
	_, stderr = mustAnalyze(t, ktd(300, false))
	if got := readRows(); !slices.Equal(got, slices.Delete(slices.Clone(all), 3, 4)) {
		t.Errorf("without %s's checkpoint, samples or row the table became:\n%s", ids[1], strings.Join(got, "\n"))
	}
	if !strings.Contains(stderr, ids[1]+": no row: no checkpoint, no stored samples and no earlier row") {
		t.Errorf("stderr does not say %s got no row:\n%s", ids[1], stderr)
	}
	must(t, os.WriteFile(tsvPath, []byte(strings.Join(all, "\n")+"\n"), 0o644))

	// Another sample size is another setting: the analysis refuses to drop
	// the row it cannot compute again, before sampling anything (only the
	// baselines are drawn), and leaves the table as it was.
	refused := func(what string, samples int) {
		t.Helper()
		before := readRows()
		_, stderr, err := runAnalysis(ktd(samples, true))
		if err == nil || !strings.Contains(err.Error(), what) {
			t.Errorf("%d samples: %v\nwant an error containing %q", samples, err, what)
		}
		if strings.Contains(stderr, ": KTD ") || err != nil && strings.Contains(err.Error(), ": KTD ") {
			t.Errorf("%d samples: computed a KTD before refusing:\n%s%v", samples, stderr, err)
		}
		if got := readRows(); !slices.Equal(got, before) {
			t.Errorf("%d samples: changed the table:\n%s", samples, strings.Join(got, "\n"))
		}
	}
	refused(`holds the KTD of 1 runs not analysed now (`+ids[1]+`) computed with ψ "`+ids[0]+`" (parameters `+digest+`), 201 triples per draw and 300 samples, not this analysis's ψ "`+ids[0]+`" (parameters `+digest+`), 201 and 250: analyse them too, write this analysis's table beside it (-ktd-table, e.g. ktd-`+ids[0]+`)`, 250)

	// ψ trained again under its run ID (here: one parameter changed in its
	// checkpoint) is another ψ, and so is that of a table from before
	// digests whose baselines moved.
	psiCkpt := filepath.Join(ts.out, runsDirName, ids[0], ckpt.CheckpointName)
	saved, err := os.ReadFile(psiCkpt)
	must(t, err)
	e := psi.Model.Param("entity").Data().([]float32)
	e[0] += 0.25
	must(t, ckpt.Write(psiCkpt, psi.Model))
	changed, err := paramsDigest(psi.Model)
	must(t, err)
	refused(`computed with ψ "`+ids[0]+`" (parameters `+digest+`), 201 triples per draw and 300 samples, not this analysis's ψ "`+ids[0]+`" (parameters `+changed+`), 201 and 300`, 300)
	must(t, os.WriteFile(psiCkpt, saved, 0o644))
	moved := strings.Replace(undigested(all), "\tuniform\t\t\t\t", "\tuniform\t\t\t\t9", 1)
	must(t, os.WriteFile(tsvPath, []byte(moved), 0o644))
	refused(`computed with ψ "`+ids[0]+`", 201 triples per draw and 300 samples (no digest: ψ's baselines then differ from those drawn now, so ψ or the code measuring it changed)`, 300)
	must(t, os.WriteFile(tsvPath, []byte(strings.Join(all, "\n")+"\n"), 0o644))

	// The table of the other setting goes beside, under its own name
	// (-ktd-table), and the first stays as it was.
	before := readRows()
	beside := ktd(250, true) // run 1's checkpoint is gone by now
	beside.KTDTable = "ktd-250"
	mustAnalyze(t, beside)
	if got := readRows(); !slices.Equal(got, before) {
		t.Errorf("a table beside changed %s:\n%s", KTDTSVName, strings.Join(got, "\n"))
	}
	b250, err := os.ReadFile(filepath.Join(ts.out, "ktd-250.tsv"))
	must(t, err)
	if rows := strings.Split(strings.TrimSpace(string(b250)), "\n"); len(rows) != 4 || !strings.Contains(rows[3], ids[2]) || !strings.HasSuffix(rows[3], "\t"+ids[0]+"\t"+digest+"\t201\t250") {
		t.Errorf("ktd-250.tsv:\n%s", b250)
	}
	if _, err := os.Stat(filepath.Join(ts.out, "ktd-250.md")); err != nil {
		t.Error(err)
	}
	for _, name := range []string{"../ktd", "ktd.tsv", "x.md"} {
		bad := ktd(300, false)
		bad.KTDTable = name
		if _, _, err := runAnalysis(bad); err == nil || !strings.Contains(err.Error(), "-ktd-table") {
			t.Errorf("-ktd-table %q: %v", name, err)
		}
	}

	// So does a table from before the setting was recorded.
	old := "dataset\tmodel\tobjective\trun\tktd_mean\tktd_std\tdraws\nnations\tcp2\tpll\t" + ids[1] + "\t0.1\t0.01\t100\n"
	must(t, os.WriteFile(tsvPath, []byte(old), 0o644))
	refused("a ψ and sizes the table does not record", 300)

	// A row of a run that is gone is dropped, and said so.
	must(t, os.WriteFile(tsvPath, []byte(strings.Join(all, "\n")+"\n"), 0o644))
	must(t, os.Rename(filepath.Join(ts.out, runsDirName, ids[1]), filepath.Join(t.TempDir(), "moved-away")))
	_, stderr = mustAnalyze(t, ktd(300, true))
	if got := readRows(); len(got) != 4 || strings.Contains(strings.Join(got, "\n"), ids[1]) {
		t.Errorf("the row of a run that is gone was kept:\n%s", strings.Join(got, "\n"))
	}
	if !strings.Contains(stderr, "dropped the KTD of 1 runs from ktd.tsv: they are no longer finished runs") {
		t.Errorf("stderr does not say the row was dropped:\n%s", stderr)
	}

	// A broken table is an error naming its line, before any work.
	must(t, os.WriteFile(tsvPath, []byte(all[0]+"\n"+all[1]+"\nx\ty\n"), 0o644))
	if _, _, err := runAnalysis(ktd(300, false)); err == nil || !strings.Contains(err.Error(), KTDTSVName+":3:") {
		t.Errorf("a broken %s: %v", KTDTSVName, err)
	}
	sweeptest.NoTempFiles(t, ts.out)
}

// -nnmfaug adds NNMFAug's row after the other baselines and says its test
// log-likelihood; an analysis without it keeps that row. A KTD reference
// puts its values beside the rows.
func TestKTDNNMFAug(t *testing.T) {
	data := shippedData(t, "nations")
	ts := psiAndGeKC(t, data)
	ids := ts.ids()
	a := analysisJob{Kind: "ktd", Features: ids[0], Samples: 300, Out: ts.out, DataRoot: data, Runs: ts.g.Runs, NNMFAug: true}
	_, stderr := mustAnalyze(t, a)
	b, err := os.ReadFile(filepath.Join(ts.out, KTDTSVName))
	must(t, err)
	rows := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(rows) != 5 || !strings.HasPrefix(rows[3], "nations\tNNMFAug\t\t\t\t") || !strings.Contains(rows[4], ids[1]) {
		t.Fatalf("%s:\n%s", KTDTSVName, strings.Join(rows, "\n"))
	}
	if !strings.Contains(stderr, "NNMFAug (") || !strings.Contains(stderr, "as the paper's code computes it") {
		t.Errorf("stderr does not report NNMFAug:\n%s", stderr)
	}
	// The count of test triples across its clusters is kept in ktd.tsv and
	// said in ktd.md's note, as stderr says it.
	var across, tests int
	if _, err := fmt.Sscanf(stderr[strings.Index(stderr, "but ")+4:], "%d of the %d test triples", &across, &tests); err != nil || tests != 201 {
		t.Fatalf("stderr's count (%v, %d tests):\n%s", err, tests, stderr)
	}
	if f := strings.Split(rows[3], "\t"); f[8] != strconv.Itoa(across) || f[9] != strconv.Itoa(tests) {
		t.Errorf("NNMFAug's row keeps %s of %s test triples across clusters, stderr says %d of %d", f[8], f[9], across, tests)
	}
	note := fmt.Sprintf("and %d of the %d test triples of nations lie across its clusters.", across, tests)
	if md, err := os.ReadFile(filepath.Join(ts.out, KTDMarkdownName)); err != nil || !strings.Contains(string(md), note) {
		t.Errorf("ktd.md without %q (%v):\n%s", note, err, md)
	}
	// With a reference of Nations' KTDs, ktd.md sets them beside the rows;
	// a malformed one is an error naming its line.
	refPath := filepath.Join(t.TempDir(), KTDReferenceName)
	must(t, os.WriteFile(refPath, []byte("dataset\tmodel\tobjective\tktd\tktd_sd\nnations\tNNMFAug\t-\t0.4321\t0.0123\n"), 0o644))
	a.KTDReference = refPath
	a.NNMFAug = false
	mustAnalyze(t, a)
	if md, err := os.ReadFile(filepath.Join(ts.out, KTDMarkdownName)); err != nil || !strings.Contains(string(md), "| 0.432 ± 0.012 |") {
		t.Errorf("ktd.md without the reference's value (%v):\n%s", err, md)
	}
	must(t, os.WriteFile(refPath, []byte("dataset\tmodel\tobjective\tktd\tktd_sd\nnations\tNNMFAug\tpll\t0.4\t0.01\n"), 0o644))
	if _, _, err := runAnalysis(a); err == nil || !strings.Contains(err.Error(), refPath+":2:") {
		t.Errorf("a malformed reference: %v", err)
	}
	a.KTDReference = ""
	b, err = os.ReadFile(filepath.Join(ts.out, KTDTSVName))
	must(t, err)
	if again := strings.Split(strings.TrimSpace(string(b)), "\n"); again[3] != rows[3] || len(again) != len(rows) {
		t.Errorf("without -nnmfaug the NNMFAug row is not kept:\n%s", strings.Join(again, "\n"))
	}
}

// A KTD row gets the LL of its record only where it names the parameters
// the record's run samples; uniform's LL comes from a record's sizes, else
// from the data set under DataRoot, else is unknown.
func TestKTDFillFromRecords(t *testing.T) {
	rec := &resultsdir.Record{ID: "cp2-s0", BestEpoch: 3, Spec: grid.RunSpec{Dataset: "nations"},
		Test: map[string]jsonfloat.Float{"ll": -5.5, "ll_at_best_ll": -5.25}}
	rec.Spec.Eval.Select = "mrr"
	r := KTDRow{Dataset: "nations", Model: "cp2", Run: "cp2-s0"}
	if !fillKTDRow(&r, rec) || r.Sampled != "best valid MRR, epoch 3" || !r.HasLL || r.LL != -5.5 {
		t.Errorf("filled %+v", r)
	}
	other := KTDRow{Dataset: "nations", Model: "cp2", Run: "cp2-s0", Sampled: "best valid LL, epoch 1"}
	if fillKTDRow(&other, rec) || other.HasLL {
		t.Errorf("a row naming other parameters got the record's LL: %+v", other)
	}
	rec.Test["ll"] = jsonfloat.Float(math.Inf(1)) // an underflowing Z
	if inf := (KTDRow{Run: "cp2-s0"}); fillKTDRow(&inf, rec) && inf.HasLL {
		t.Errorf("+Inf taken for a test LL: %+v", inf)
	}

	data := shippedData(t, "nations")
	a := &Options{DataRoot: data}
	sized := &resultsdir.Record{Spec: grid.RunSpec{Dataset: "umls"}, Data: &resultsdir.Data{Entities: 135, Relations: 46}}
	uniform := a.uniformLLs([]*resultsdir.Record{rec, sized})
	for _, tc := range []struct {
		dataset string
		want    float64
		ok      bool
	}{
		{"umls", UniformLL(135, 46), true},   // from the record
		{"nations", UniformLL(14, 55), true}, // from the data set
		{"no-such-data", 0, false},
	} {
		if got, ok := uniform(tc.dataset); ok != tc.ok || math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: %v, %v; want %v, %v", tc.dataset, got, ok, tc.want, tc.ok)
		}
	}
}

// psiAndGeKC trains, for one epoch on Nations under data, an energy-based
// ComplEx (ids()[0], to give ψ) and a CP² by PLL (ids()[1]): the two runs
// the ψ analyses (ktd, tsne) need.
func psiAndGeKC(t *testing.T, data string) toySweep {
	t.Helper()
	return trainedSweep(t, `name = "psi-and-gekc"
[defaults]
dataset = "nations"
rank = 4
batch_size = 400
learning_rate = 0.01
epochs = 1

[[sweep]]
model = ["complex", "cp2"]
objective = "pll"
`, data)
}
