package sweep

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWritePlotsNameTheirFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "missing")
	err := writeCurves(dir, DefaultRunSpec(), []EpochRecord{{Epoch: 1, TrainLoss: 1}}, 1)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, curvesName)) {
		t.Errorf("writing into a missing directory: %v", err)
	}
	err = writeCurves(t.TempDir(), DefaultRunSpec(), nil, 0)
	if err == nil || !strings.Contains(err.Error(), curvesName) {
		t.Errorf("no epochs: %v", err)
	}
}

func FuzzReadCalibrationTSV(f *testing.F) {
	header := "dataset\tmodel\tobjective\tconstraints\tseed\trun\tece_logistic\tece_minmax\tpositives\tnegatives\ttrain_min\ttrain_max\n"
	f.Add([]byte(header + "umls\tcp\tpll\tnone\t0\tcp-pll-x\t0.28\t0.11\t661\t517\t-3.5\t2\n"))
	f.Add([]byte(header + "umls\tcp\tpll\tnone\t0\t../x\t0.28\t0.11\t661\t517\t-3.5\t2\n"))
	f.Add([]byte(header + "a\tb\n"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, b []byte) {
		dir := t.TempDir()
		path := filepath.Join(dir, calTSVName)
		must(t, os.WriteFile(path, b, 0o644))
		rows, err := readCalibrationTSV(path, filepath.Join(dir, runsDirName))
		if err == nil && len(rows) != 0 {
			t.Fatalf("%d rows without any run's metrics.json", len(rows))
		}
	})
}
