package analysis

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"gekc/kg"
	"gekc/resultsdir"
	"gekc/train"
	"gekc/train/ckpt"
)

// calibration computes the ECE of every selected finished run (energy-based
// ones too) from its checkpoint, with the negatives the run drew if it had
// "ece" in its metrics (train.Calibrate seeded by the run), so that both
// agree: runs/<id>/calibration.png, calibration.tsv and calibration.md.
//
// The tables are updated, not replaced: rows of runs outside the selection
// (-only), and of selected runs whose checkpoint is absent (checkpoints are
// not committed, so a fresh clone has only those it trained), are kept from
// the existing calibration.tsv.
type calibration struct {
	o       *Options
	rows    []CalibrationRow      // the table as read at the start, for Skip
	fresh   []CalibrationRow      // the rows computed now
	filters map[string]*kg.Filter // by dataset: runs share few of them
}

var calibrationTable = runTable[CalibrationRow]{tsv: CalibrationTSVName, md: CalibrationMarkdownName,
	read: ReadCalibrationTSV, render: CalibrationTables, run: func(r CalibrationRow) string { return r.Run.ID }}

func newCalibration(o *Options) (Analysis, error) {
	rows, err := calibrationTable.readIn(o)
	return &calibration{o: o, rows: rows, filters: map[string]*kg.Filter{}}, err
}

func (a *calibration) Skip(r *Selected) (bool, error) {
	if r.Err != nil {
		return false, fmt.Errorf("%s: %w", r.ID, r.Err)
	}
	if r.Record == nil || r.Record.Status != train.Finished {
		return true, nil
	}
	hasRow := slices.ContainsFunc(a.rows, func(row CalibrationRow) bool { return row.Run.ID == r.ID })
	if _, err := os.Stat(filepath.Join(r.Dir, ckpt.CheckpointName)); errors.Is(err, fs.ErrNotExist) && hasRow {
		fmt.Fprintf(a.o.Stderr, "%s: no checkpoint; its row is kept from %s\n", r.ID, CalibrationTSVName)
		return true, nil
	}
	if r.Spec.Eval.TestOn != "" {
		// Its test metrics are another data set's; calibrating it on
		// its own would disagree with its metrics.json.
		fmt.Fprintf(a.o.Stderr, "%s: tested on %s (eval.test_on): not calibrated here\n", r.ID, r.Spec.Eval.TestOn)
		return true, nil
	}
	return false, nil
}

func (a *calibration) Compute(_ context.Context, r *Selected) error {
	fr, err := r.Open()
	if err != nil {
		return fmt.Errorf("%s: %w", r.ID, err)
	}
	dom, err := fr.Constraint()
	if err != nil {
		return err
	}
	ds := fr.Data
	filter := a.filters[fr.Spec.Dataset]
	if filter == nil {
		filter = kg.NewFilter(ds.Train, ds.Valid, ds.Test)
		a.filters[fr.Spec.Dataset] = filter
	}
	c, err := Calibrate(fr.Model, dom, fr.Spec.Eval.BatchSize, ds, filter, uint64(fr.Spec.Seed))
	if err == nil {
		err = resultsdir.WriteCalibrationPlot(r.Dir, fr.Spec, c)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", r.ID, err)
	}
	fmt.Fprintf(a.o.Stderr, "%s: ECE %.4f (logistic), %.4f (min-max)\n", r.ID, c.Logistic.ECE, c.MinMax.ECE)
	a.fresh = append(a.fresh, CalibrationRow{Run: runOf(fr.ID, fr.Spec), Cal: c})
	return nil
}

func (a *calibration) Tables(err error) (func() error, error) {
	if err != nil {
		return nil, err
	}
	if len(a.fresh) == 0 {
		return nil, fmt.Errorf("no finished run with a checkpoint in %s to calibrate", a.o.Out)
	}
	return calibrationTable.rewrite(a.o, a.fresh), nil
}
