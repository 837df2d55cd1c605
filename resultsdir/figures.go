package resultsdir

import (
	"fmt"
	"path/filepath"

	"gekc/grid"
	"gekc/internal/atomicfile"
	"gekc/metrics"
	"gekc/report"
	"gekc/train"
)

// Per-run figures, PNG, drawn by package report, written next to
// metrics.json.
const (
	// CurvesName holds the training loss and validation metrics by epoch,
	// of every finished or diverged run.
	CurvesName = "curves.png"
	// CalibrationPlotName holds the reliability diagrams under the
	// logistic and the min-max mapping (paper, appendix "Calibration
	// Diagrams"), of runs whose test metrics include the ECE.
	CalibrationPlotName = "calibration.png"
)

// WriteCurves draws the training curves of a run into dir/curves.png.
func WriteCurves(dir string, spec grid.RunSpec, epochs []train.EpochRecord, bestEpoch int) error {
	png, err := report.Curves(grid.DescribeRun(spec), epochs, bestEpoch)
	if err != nil {
		return fmt.Errorf("drawing %s: %w", filepath.Join(dir, CurvesName), err)
	}
	return atomicfile.WriteFile(filepath.Join(dir, CurvesName), png, 0o644)
}

// WriteCalibrationPlot draws the reliability diagrams of a run into
// dir/calibration.png.
func WriteCalibrationPlot(dir string, spec grid.RunSpec, c *metrics.Calibration) error {
	png, err := report.Calibration(grid.DescribeRun(spec), c)
	if err != nil {
		return fmt.Errorf("drawing %s: %w", filepath.Join(dir, CalibrationPlotName), err)
	}
	return atomicfile.WriteFile(filepath.Join(dir, CalibrationPlotName), png, 0o644)
}
