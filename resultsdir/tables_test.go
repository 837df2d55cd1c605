package resultsdir

import (
	"gekc/train"
	"gekc/train/ckpt"
	"testing"
)

// A run on a synthetic data set says so in its results.tsv row, which
// keeps it out of the comparison with a published table.
func TestRowMarksSyntheticData(t *testing.T) {
	rec := &Record{ID: "x", Status: train.Finished, Spec: exampleSpec(), Data: &Data{Synthetic: true}}
	if got := Row(rec)["synthetic"]; got != "yes" {
		t.Errorf("synthetic = %q, want yes", got)
	}
	rec.Data.Synthetic = false
	if got, ok := Row(rec)["synthetic"]; ok {
		t.Errorf("a real data set's row has synthetic = %q", got)
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
		if got := Row(rec)["sgemm_gflops"]; got != c.want {
			t.Errorf("%s: sgemm_gflops %q, want %q", c.name, got, c.want)
		}
	}
}
