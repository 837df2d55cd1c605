package sweep

import (
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"gekc/internal/jsonfloat"
	"gekc/report"
	"gekc/resultsdir"
	"gekc/train"
)

func TestResultsTSVColumnsAndRoundTrip(t *testing.T) {
	rec := &resultsdir.Record{
		ID: "cp-pll-x", ConfigID: "cp-pll", Status: train.Finished, Spec: exampleSpec(),
		Epochs: []train.EpochRecord{{Epoch: 0}, {Epoch: 1}, {Epoch: 2}, {Epoch: 3}, {Epoch: 4}, {Epoch: 5}, {Epoch: 6}, {Epoch: 7}}, BestEpoch: 4,
		Valid:       map[string]jsonfloat.Float{"mrr": 0.5, "ll": -3},
		Test:        map[string]jsonfloat.Float{"mrr": 0.25, "hits@10": 0.75, "hits@100": 0.9, "sem@1": 1, "ece": 0.01},
		WallSeconds: 12.34, SecondsPerEpoch: 1.5, PeakRSSBytes: 3 << 20,
		FinishedAt: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC),
	}
	table := &report.Table{}
	table.Upsert(resultsdir.Row(rec))
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
		b, err := jsonfloat.Float(x).MarshalJSON()
		must(t, err)
		var back jsonfloat.Float
		must(t, back.UnmarshalJSON(b))
		if float64(back) != x {
			t.Errorf("%v -> %s -> %v", x, b, back)
		}
	}
	b, _ := jsonfloat.Float(math.NaN()).MarshalJSON()
	var back jsonfloat.Float
	must(t, back.UnmarshalJSON(b))
	if !math.IsNaN(float64(back)) {
		t.Errorf("NaN -> %s -> %v", b, back)
	}
}

// A distilled run records epoch 0, the validation of the converted model:
// it is not a trained epoch, in results.tsv's epochs nor in
// seconds_per_epoch.
func TestEpochZeroIsNotATrainedEpoch(t *testing.T) {
	s := &Sweep{jobs: 1}
	rec := &resultsdir.Record{ID: "x", StartedAt: time.Now().UTC()}
	s.completeRecord(rec, &Outcome{Status: train.Finished, BestEpoch: 0, Epochs: []train.EpochRecord{
		{Epoch: 0, Seconds: 0, Valid: map[string]float64{"mrr": 0.5}},
		{Epoch: 1, Seconds: 3}, {Epoch: 2, Seconds: 5},
	}}, nil)
	if rec.SecondsPerEpoch != 4 {
		t.Errorf("seconds_per_epoch %v, want 4", rec.SecondsPerEpoch)
	}
	row := resultsdir.Row(rec)
	if row["epochs"] != "2" || row["best_epoch"] != "0" || row["seconds_per_epoch"] != "4.00" {
		t.Errorf("row: epochs %q, best_epoch %q, seconds_per_epoch %q; want 2, 0, 4.00", row["epochs"], row["best_epoch"], row["seconds_per_epoch"])
	}
}
