package resultsdir

import (
	"path/filepath"
	"testing"

	"gekc/grid"
	"gekc/train"
	"strings"
)

func TestWritePlotsNameTheirFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "missing")
	err := WriteCurves(dir, grid.DefaultRunSpec(), []train.EpochRecord{{Epoch: 1, TrainLoss: 1}}, 1)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, CurvesName)) {
		t.Errorf("writing into a missing directory: %v", err)
	}
	err = WriteCurves(t.TempDir(), grid.DefaultRunSpec(), nil, 0)
	if err == nil || !strings.Contains(err.Error(), CurvesName) {
		t.Errorf("no epochs: %v", err)
	}
}
