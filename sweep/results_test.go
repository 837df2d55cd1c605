package sweep

import (
	"context"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"gekc/analysis"
	"gekc/report"
	"gekc/train"
	"gekc/train/ckpt"
)

func TestResultsTSVColumnsAndRoundTrip(t *testing.T) {
	rec := &Record{
		ID: "cp-pll-x", ConfigID: "cp-pll", Status: train.Finished, Spec: exampleSpec(),
		Epochs: []train.EpochRecord{{Epoch: 0}, {Epoch: 1}, {Epoch: 2}, {Epoch: 3}, {Epoch: 4}, {Epoch: 5}, {Epoch: 6}, {Epoch: 7}}, BestEpoch: 4,
		Valid:       map[string]jsonFloat{"mrr": 0.5, "ll": -3},
		Test:        map[string]jsonFloat{"mrr": 0.25, "hits@10": 0.75, "hits@100": 0.9, "sem@1": 1, "ece": 0.01},
		WallSeconds: 12.34, SecondsPerEpoch: 1.5, PeakRSSBytes: 3 << 20,
		FinishedAt: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC),
	}
	table := &report.Table{}
	table.Upsert(rowFromRecord(rec))
	table.Upsert(report.Row{"id": "odd\tid", "status": "failed", "custom": "kept"})
	data := table.TSV()
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	header := strings.Split(lines[0], "\t")
	wantOrder := []string{"id", "config_id", "dataset", "model", "objective", "constraints", "rank", "batch_size", "learning_rate", "seed",
		"status", "epochs", "best_epoch", "select", "settings",
		"valid_mrr", "valid_hits@1", "valid_hits@3", "valid_hits@10", "valid_ll",
		"test_mrr", "test_hits@1", "test_hits@3", "test_hits@10", "test_hits@100", "test_ll", "test_ece", "test_sem@1",
		"wall_seconds", "seconds_per_epoch", "peak_rss_mb", "sgemm_gflops", "finished_at", "custom"}
	if !reflect.DeepEqual(header, wantOrder) {
		t.Errorf("header\n got %q\nwant %q", header, wantOrder)
	}
	for i, l := range lines {
		if n := len(strings.Split(l, "\t")); n != len(header) {
			t.Errorf("line %d has %d fields, header %d", i+1, n, len(header))
		}
	}
	back, err := report.ParseTSV("results.tsv", data)
	must(t, err)
	r := back.Rows[0]
	for col, want := range map[string]string{"test_mrr": "0.25", "valid_ll": "-3", "epochs": "7", "best_epoch": "4",
		"peak_rss_mb": "3.0", "wall_seconds": "12.3", "finished_at": "2025-01-02T03:04:05Z", "test_hits@1": "", "model": "complex2"} {
		if r[col] != want {
			t.Errorf("%s = %q, want %q", col, r[col], want)
		}
	}
	if back.Rows[1]["id"] != "odd id" || back.Rows[1]["custom"] != "kept" {
		t.Errorf("second row %v", back.Rows[1])
	}
}

func TestJSONFloatKeepsNonFinite(t *testing.T) {
	for _, x := range []float64{0, -1.5, 1e-300, math.Inf(1), math.Inf(-1)} {
		b, err := jsonFloat(x).MarshalJSON()
		must(t, err)
		var back jsonFloat
		must(t, back.UnmarshalJSON(b))
		if float64(back) != x {
			t.Errorf("%v -> %s -> %v", x, b, back)
		}
	}
	b, _ := jsonFloat(math.NaN()).MarshalJSON()
	var back jsonFloat
	must(t, back.UnmarshalJSON(b))
	if !math.IsNaN(float64(back)) {
		t.Errorf("NaN -> %s -> %v", b, back)
	}
}

func TestParseCPUInfo(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC\nflags\t\t: fpu\n\nprocessor\t: 1\nmodel name\t: AMD EPYC\n", "AMD EPYC × 2"},
		{"processor : 0\nmodel name : Intel(R) Xeon(R) CPU @ 2.20GHz\n", "Intel(R) Xeon(R) CPU @ 2.20GHz × 2"},
		{"processor\t: 0\nCPU implementer\t: 0x41\n", ""}, // arm64 names no model
		{"", ""},
	} {
		if got := parseCPUInfo(strings.NewReader(tt.in), 2); got != tt.want {
			t.Errorf("parseCPUInfo(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// A run on a synthetic data set says so in its results.tsv row, which
// keeps it out of the comparison with a published table.
func TestRowMarksSyntheticData(t *testing.T) {
	rec := &Record{ID: "x", Status: train.Finished, Spec: exampleSpec(), Data: &dataJSON{Synthetic: true}}
	if got := rowFromRecord(rec)["synthetic"]; got != "yes" {
		t.Errorf("synthetic = %q, want yes", got)
	}
	rec.Data.Synthetic = false
	if got, ok := rowFromRecord(rec)["synthetic"]; ok {
		t.Errorf("a real data set's row has synthetic = %q", got)
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
		rec := &Record{ID: spec.ID(), ConfigID: spec.ConfigID(), Status: train.Finished, Spec: spec,
			Test: map[string]jsonFloat{"mrr": jsonFloat(0.3 + 0.01*float64(i))}, Valid: map[string]jsonFloat{"mrr": 0.3},
			FinishedAt: time.Date(2026, 1, 1, i, 0, 0, 0, time.UTC)}
		dir := filepath.Join(out, runsDirName, rec.ID)
		must(t, os.MkdirAll(dir, 0o755))
		must(t, WriteRecord(filepath.Join(dir, metricsName), rec))
	}
	// A results.tsv that knows one run only.
	must(t, os.WriteFile(filepath.Join(out, resultsTSVName), []byte("id\tstatus\nother\tfinished\n"), 0o644))
	a := &Analysis{Kind: "tables", Title: "t", Out: out, Stdout: io.Discard, Stderr: io.Discard}
	must(t, a.Run(context.Background()))
	tab, err := report.ReadTSV(filepath.Join(out, resultsTSVName))
	must(t, err)
	if len(tab.Rows) != 2 || tab.Rows[0]["seed"] != "1" || tab.Rows[1]["seed"] != "0" {
		t.Errorf("rows %v, want the two records, seed 1 (ended first) then seed 0", tab.Rows)
	}
	md, err := os.ReadFile(filepath.Join(out, ResultsMDName))
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
		rec := &Record{ID: spec.ID(), ConfigID: spec.ConfigID(), Status: train.Finished, Spec: spec, BestEpoch: 7, LLEpoch: &ll,
			Test: map[string]jsonFloat{"mrr": 0.3}, Valid: map[string]jsonFloat{"mrr": 0.3}}
		dir := filepath.Join(out, runsDirName, rec.ID)
		must(t, os.MkdirAll(dir, 0o755))
		must(t, WriteRecord(filepath.Join(dir, metricsName), rec))
		ids = append(ids, rec.ID)
	}
	old := "dataset\tmodel\tobjective\trun\tktd_mean\tktd_std\tdraws\tfeatures\tdraw_size\tsamples\n" +
		"umls\ttraining set\t\t\t0.01\t0.002\t100\tpsi\t661\t25000\n" +
		"umls\tcp2\tpll\t" + ids[0] + "\t0.2\t0.01\t100\tpsi\t661\t25000\n" +
		"umls\tcp2\tpll\t" + ids[1] + "\t0.1\t0.01\t100\tpsi\t661\t25000\n" +
		"umls\tcp2\tpll\tgone-run\t0.3\t0.01\t100\tpsi\t661\t25000\n"
	path := filepath.Join(out, "ktd-d1000.tsv")
	must(t, os.WriteFile(path, []byte(old), 0o644))
	a := &Analysis{Kind: "tables", Title: "t", Out: out, Stdout: io.Discard, Stderr: io.Discard}
	must(t, a.Run(context.Background()))
	rows, set, err := analysis.ReadKTDTSV(path)
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

// A run trained by several processes reports the rate it trained at: its
// segments' Sgemm rates weighted by their wall times, and none when one of
// them did not measure it.
func TestRowSgemmOfSegments(t *testing.T) {
	for _, c := range []struct {
		name     string
		own      float64
		segments []ckpt.Segment
		want     string
	}{
		{"one process", 185.5, nil, "185.5"},
		{"none measured", 0, nil, ""},
		{"two hosts", 345.6, []ckpt.Segment{{SgemmGFLOPS: 185.5, WallSeconds: 60}, {SgemmGFLOPS: 345.6, WallSeconds: 30}}, "238.9"},
		{"first unknown", 345.6, []ckpt.Segment{{WallSeconds: 600}, {SgemmGFLOPS: 345.6, WallSeconds: 30}}, ""},
	} {
		rec := &Record{ID: "r", SgemmGFLOPS: jsonFloat(c.own), Segments: c.segments}
		if got := rowFromRecord(rec)["sgemm_gflops"]; got != c.want {
			t.Errorf("%s: sgemm_gflops %q, want %q", c.name, got, c.want)
		}
	}
}
