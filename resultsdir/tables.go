package resultsdir

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"gekc/internal/atomicfile"
	"gekc/report"
	"gekc/train"
)

// results.tsv has one row per run, in the order runs ended. It is the
// source of results.md. Metric columns are valid_<metric> and
// test_<metric> for every metric any run reported, so the header grows when
// a run reports something new; each update rewrites the whole file
// atomically under <out>/results.lock, which is what makes concurrent
// writers safe and a crash harmless. The table and its rendering are
// package report; this file turns a run's record into its row and writes
// the tables.

// TrainedEpochs counts the epochs that trained; a distilled run also
// records epoch 0, the validation of the model as converted.
func TrainedEpochs(es []train.EpochRecord) int {
	n := 0
	for _, e := range es {
		if e.Epoch > 0 {
			n++
		}
	}
	return n
}

// FormatMetric is a metric's value as the tables write it.
func FormatMetric(x float64) string { return strconv.FormatFloat(x, 'g', 6, 64) }

// TrainingSgemm is the matrix-product rate a run trained at: that of its
// process, or for a run trained in several (Record.Segments) their rates
// weighted by their wall times, the one rate that would have done the
// same products in the same time where products take the time. It is 0,
// unknown, when a process that trained the run did not measure it: the
// rate of the others would misstate the run's.
func (rec *Record) TrainingSgemm() float64 {
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

// Row is the results.tsv row of a run.
func Row(rec *Record) report.Row {
	s := rec.Spec
	row := report.Row{
		"id": rec.ID, "config_id": rec.ConfigID, "dataset": s.Dataset, "model": s.Model,
		"objective": s.Objective, "constraints": s.Constraints, "rank": strconv.Itoa(s.Rank),
		"batch_size": strconv.Itoa(s.BatchSize), "learning_rate": strconv.FormatFloat(s.LearningRate, 'g', -1, 64),
		"seed": strconv.Itoa(s.Seed), "status": string(rec.Status), "epochs": strconv.Itoa(TrainedEpochs(rec.Epochs)),
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
	if rate := rec.TrainingSgemm(); rate > 0 {
		row["sgemm_gflops"] = strconv.FormatFloat(rate, 'f', 1, 64)
	}
	if rec.PeakRSSBytes > 0 {
		row["peak_rss_mb"] = strconv.FormatFloat(float64(rec.PeakRSSBytes)/(1<<20), 'f', 1, 64)
	}
	if rec.Rung != nil {
		row["rung"] = rec.Rung.String()
	}
	for k, v := range rec.Valid {
		row["valid_"+k] = FormatMetric(float64(v))
	}
	for k, v := range rec.Test {
		row["test_"+k] = FormatMetric(float64(v))
	}
	return row
}

// WriteReport writes results.md of table into out, and paper.md when ref
// (nil: none) has values for its dataset and d: what every rewrite of
// results.tsv is followed by. The caller holds the results lock.
func WriteReport(out, title string, ref *report.Reference, table *report.Table) error {
	md, err := report.Markdown(title, table)
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(filepath.Join(out, ResultsMDName), md, 0o644); err != nil {
		return err
	}
	if ref == nil || !ref.Covers(table) {
		return nil
	}
	cmp, err := report.CompareMarkdown(table, ref, report.DefaultTolerance)
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(filepath.Join(out, PaperMDName), cmp, 0o644)
}

// Records reads the record of every run in out/runs, in the order the runs
// ended.
func Records(out string) ([]*Record, error) {
	paths, err := filepath.Glob(filepath.Join(out, RunsDirName, "*", MetricsName))
	if err != nil {
		return nil, err
	}
	var recs []*Record
	for _, path := range paths {
		rec, err := ReadRecordFile(path)
		if err != nil {
			return nil, err
		}
		if rec != nil {
			recs = append(recs, rec)
		}
	}
	slices.SortStableFunc(recs, func(x, y *Record) int { return x.FinishedAt.Compare(y.FinishedAt) })
	return recs, nil
}
