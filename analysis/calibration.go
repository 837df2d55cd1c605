package analysis

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"gekc/kg"
	"gekc/metrics"
	"gekc/models"
	"gekc/report"
	"gekc/train"
)

const (
	// CalibrationTSVName and CalibrationMarkdownName are the tables of
	// the calibration analysis, written next to results.tsv.
	CalibrationTSVName      = "calibration.tsv"
	CalibrationMarkdownName = "calibration.md"
	// CalibrationPlotName is a run's reliability diagrams, in its
	// directory; the Markdown table points to it.
	CalibrationPlotName = "calibration.png"
)

// CalibrationRow is one line of the calibration tables.
type CalibrationRow struct {
	Run Run
	Cal *metrics.Calibration
}

// Calibrate computes the ECE of m on the test triples of ds and one hard
// negative each, drawn as train.Calibrate does with seed, so that a run
// trained with "ece" in its metrics and its analysis agree. dom (nil for
// none) constrains the model; batch ≤ 0 means 1000 triples per batch;
// filter holds the known triples of ds and may be shared between runs.
func Calibrate(m *models.Model, dom *models.Domain, batch int, ds *kg.Dataset, filter *kg.Filter, seed uint64) (*metrics.Calibration, error) {
	if batch <= 0 {
		batch = 1000
	}
	ev, err := metrics.NewEvaluatorWithin(m, dom, batch, metrics.DefaultBufferLimit)
	if err != nil {
		return nil, err
	}
	return train.Calibrate(ev, ds, filter, seed)
}

// ReadCalibrationTSV reads the rows an earlier calibration wrote, in their
// order. lookup gives each row's Run from its ID; a row whose run is gone
// (ok false) is dropped, and lookup's error is returned as is. A missing
// file is no rows; a malformed one is an error naming its line.
func ReadCalibrationTSV(path string, lookup func(id string) (r Run, ok bool, err error)) ([]CalibrationRow, error) {
	lines, err := tableLines(path)
	if err != nil {
		return nil, err
	}
	var rows []CalibrationRow
	for i, line := range lines {
		f := strings.Split(line, "\t")
		bad := func(what string, err error) error {
			return fmt.Errorf("%s:%d: %s: %v", path, i+2, what, err)
		}
		if len(f) != 12 {
			return nil, bad("fields", fmt.Errorf("%d, want 12", len(f)))
		}
		var c metrics.Calibration
		floats := []struct {
			col int
			dst *float64
		}{{6, &c.Logistic.ECE}, {7, &c.MinMax.ECE}, {10, &c.TrainMin}, {11, &c.TrainMax}}
		for _, x := range floats {
			if *x.dst, err = strconv.ParseFloat(f[x.col], 64); err != nil {
				return nil, bad("column "+strconv.Itoa(x.col+1), err)
			}
		}
		if c.Positives, err = strconv.Atoi(f[8]); err != nil {
			return nil, bad("positives", err)
		}
		if c.Negatives, err = strconv.Atoi(f[9]); err != nil {
			return nil, bad("negatives", err)
		}
		if err := checkRunID(f[5]); err != nil {
			return nil, bad("run", err)
		}
		run, ok, err := lookup(f[5])
		if err != nil {
			return nil, err
		}
		if ok {
			rows = append(rows, CalibrationRow{Run: run, Cal: &c})
		}
	}
	return rows, nil
}

// CalibrationTables renders the rows as calibration.tsv (which
// ReadCalibrationTSV reads back) and calibration.md.
func CalibrationTables(rows []CalibrationRow) (tsv, md []byte, err error) {
	var t, m bytes.Buffer
	fmt.Fprintf(&t, "dataset\tmodel\tobjective\tconstraints\tseed\trun\tece_logistic\tece_minmax\tpositives\tnegatives\ttrain_min\ttrain_max\n")
	for _, r := range rows {
		c, s := r.Cal, r.Run
		fmt.Fprintf(&t, "%s\t%s\t%s\t%s\t%d\t%s\t%.6g\t%.6g\t%d\t%d\t%.6g\t%.6g\n", s.Dataset, s.Model, s.Objective,
			s.Constraints, s.Seed, s.ID, c.Logistic.ECE, c.MinMax.ECE, c.Positives, c.Negatives, c.TrainMin, c.TrainMax)
	}
	fmt.Fprintf(&m, "# Empirical calibration error on the test triples\n\n"+
		"Each test triple (s, r, o) is true; one hard negative (s, r, o′) per test triple is false, o′ drawn among the objects of r in training and unknown for (s, r) (test triples without such an o′ get none). "+
		"Probabilities are σ(log-score) (logistic) or the log-score min-max normalised by the training triples' range (min-max); "+
		"log-score is log φ for a GeKC and the score φ for an energy-based model. "+
		"ECE is the mean |mean probability − fraction true| over the non-empty of %d uniform bins. Lower is better. "+
		"Diagrams: runs/<id>/%s.\n\n", metrics.CalibrationBins, CalibrationPlotName)
	var cells [][]string
	for _, r := range rows {
		c, s := r.Cal, r.Run
		cells = append(cells, []string{s.Dataset, DisplayModel(s.Model, s.Constraints), s.Objective, fmt.Sprint(s.Rank), fmt.Sprint(s.Seed),
			fmt.Sprintf("%.4f", c.Logistic.ECE), fmt.Sprintf("%.4f", c.MinMax.ECE),
			fmt.Sprintf("%d / %d", c.Positives, c.Negatives), "`" + s.ID + "`"})
	}
	header := []string{"dataset", "model", "objective", "rank", "seed", "ECE logistic", "ECE min-max", "true / negatives", "run"}
	if err := report.MarkdownTable(&m, header, cells); err != nil {
		return nil, nil, err
	}
	return t.Bytes(), m.Bytes(), nil
}

// tableLines returns the data lines of a table an analysis wrote (its
// header dropped): none for a missing file.
func tableLines(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return strings.Split(strings.TrimRight(string(data), "\n"), "\n")[1:], nil
}

// checkRunID refuses an ID that cannot name a directory under runs/.
func checkRunID(id string) error {
	if id == "" || id == "." || id == ".." || strings.ContainsAny(id, `/\`) {
		return fmt.Errorf("%q is not a run ID", id)
	}
	return nil
}
