package sweep

import (
	"strconv"
	"strings"
	"time"

	"gekc/report"
	"gekc/train"
)

// results.tsv has one row per run, in the order runs ended. It is the
// source of results.md. Metric columns are valid_<metric> and
// test_<metric> for every metric any run reported, so the header grows when
// a run reports something new; each update rewrites the whole file
// atomically under <out>/results.lock, which is what makes concurrent
// writers safe and a crash harmless. The table and its rendering are
// package report; this file turns a run's record into its row.

// trainedEpochs counts the epochs that trained; a distilled run also
// records epoch 0, the validation of the model as converted.
func trainedEpochs(es []train.EpochRecord) int {
	n := 0
	for _, e := range es {
		if e.Epoch > 0 {
			n++
		}
	}
	return n
}

func formatMetric(x float64) string { return strconv.FormatFloat(x, 'g', 6, 64) }

// trainingSgemm is the matrix-product rate a run trained at: that of its
// process, or for a run trained in several (Record.Segments) their rates
// weighted by their wall times, the one rate that would have done the
// same products in the same time where products take the time. It is 0,
// unknown, when a process that trained the run did not measure it: the
// rate of the others would misstate the run's.
func trainingSgemm(rec *Record) float64 {
	if len(rec.Segments) == 0 {
		return float64(rec.SgemmGFLOPS)
	}
	var sum, wall float64
	for _, seg := range rec.Segments {
		if seg.SgemmGFLOPS <= 0 {
			return 0
		}
		sum += seg.SgemmGFLOPS * seg.WallSeconds
		wall += seg.WallSeconds
	}
	if wall <= 0 {
		return 0
	}
	return sum / wall
}

// rowFromRecord is the results.tsv row of a run.
func rowFromRecord(rec *Record) report.Row {
	s := rec.Spec
	row := report.Row{
		"id": rec.ID, "config_id": rec.ConfigID, "dataset": s.Dataset, "model": s.Model,
		"objective": s.Objective, "constraints": s.Constraints, "rank": strconv.Itoa(s.Rank),
		"batch_size": strconv.Itoa(s.BatchSize), "learning_rate": strconv.FormatFloat(s.LearningRate, 'g', -1, 64),
		"seed": strconv.Itoa(s.Seed), "status": string(rec.Status), "epochs": strconv.Itoa(trainedEpochs(rec.Epochs)),
		"best_epoch": strconv.Itoa(rec.BestEpoch), "select": s.Eval.Select,
		"wall_seconds":      strconv.FormatFloat(float64(rec.WallSeconds), 'f', 1, 64),
		"seconds_per_epoch": strconv.FormatFloat(float64(rec.SecondsPerEpoch), 'f', 2, 64),
		"finished_at":       rec.FinishedAt.UTC().Format(time.RFC3339),
	}
	if settings := s.Settings(); len(settings) > 0 {
		row["settings"] = strings.Join(settings, report.SettingsSeparator)
	}
	if rec.Data != nil && rec.Data.Synthetic {
		row["synthetic"] = "yes" // report.CompareMarkdown leaves it out
	}
	if rate := trainingSgemm(rec); rate > 0 {
		row["sgemm_gflops"] = strconv.FormatFloat(rate, 'f', 1, 64)
	}
	if rec.PeakRSSBytes > 0 {
		row["peak_rss_mb"] = strconv.FormatFloat(float64(rec.PeakRSSBytes)/(1<<20), 'f', 1, 64)
	}
	if rec.Rung != nil {
		row["rung"] = rec.Rung.String()
	}
	for k, v := range rec.Valid {
		row["valid_"+k] = formatMetric(float64(v))
	}
	for k, v := range rec.Test {
		row["test_"+k] = formatMetric(float64(v))
	}
	return row
}
