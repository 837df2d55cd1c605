package sweep

import (
	"fmt"
	"path/filepath"

	"gekc/analysis"
	"gekc/grid"
	"gekc/internal/atomicfile"
	"gekc/metrics"
	"gekc/report"
	"gekc/train"
)

// Per-run figures, PNG, written next to metrics.json:
//
//	curves.png       training loss and validation metrics by epoch, for
//	                 every finished or diverged run
//	calibration.png  reliability diagrams under the logistic and the min-max
//	                 mapping (paper, appendix "Calibration Diagrams"), for
//	                 runs whose test metrics include the ECE
//
// Both can be drawn again from finished runs with -analyze plots and
// -analyze calibration. Package report draws them.

const (
	curvesName          = "curves.png" // training curves of a run
	calibrationPlotName = analysis.CalibrationPlotName
)

// writeCurves draws the training curves of a run into dir/curves.png.
func writeCurves(dir string, spec grid.RunSpec, epochs []train.EpochRecord, bestEpoch int) error {
	es := make([]train.EpochRecord, len(epochs))
	for i, e := range epochs {
		es[i] = train.EpochRecord(e)
	}
	png, err := report.Curves(grid.DescribeRun(spec), es, bestEpoch)
	if err != nil {
		return fmt.Errorf("drawing %s: %w", filepath.Join(dir, curvesName), err)
	}
	return atomicfile.WriteFile(filepath.Join(dir, curvesName), png, 0o644)
}

// writeCalibrationPlot draws the reliability diagrams of a run into
// dir/calibration.png.
func writeCalibrationPlot(dir string, spec grid.RunSpec, c *metrics.Calibration) error {
	png, err := report.Calibration(grid.DescribeRun(spec), c)
	if err != nil {
		return fmt.Errorf("drawing %s: %w", filepath.Join(dir, calibrationPlotName), err)
	}
	return atomicfile.WriteFile(filepath.Join(dir, calibrationPlotName), png, 0o644)
}
