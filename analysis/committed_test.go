package analysis

import (
	"os"
	"path/filepath"
	"testing"
)

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

// TestCommittedCalibrationTables: every committed calibration.md is what
// its calibration.tsv gives, and no row was dropped for want of its run's
// record, so no committed ECE was edited by hand or lost its run.
func TestCommittedCalibrationTables(t *testing.T) {
	checkCommittedTables(t, calTSVName, calMarkdownName, readCalibrationTSV, CalibrationTables)
}

// checkCommittedTables checks every committed results/*/<tsvName>: read
// back against its runs' records and written again, it gives itself and
// the <mdName> beside it.
func checkCommittedTables[R any](t *testing.T, tsvName, mdName string,
	read func(path, runsDir string) ([]R, error), tables func([]R) (tsv, md []byte, err error)) {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("..", "results", "*", tsvName))
	must(t, err)
	if len(paths) == 0 {
		t.Fatal("no committed " + tsvName)
	}
	for _, p := range paths {
		dir := filepath.Dir(p)
		rows, err := read(p, filepath.Join(dir, runsDirName))
		must(t, err)
		tsv, md, err := tables(rows)
		must(t, err)
		committedTSV, err := os.ReadFile(p)
		must(t, err)
		if string(tsv) != string(committedTSV) {
			t.Errorf("%s: rows were dropped or do not write back as they are (a run without its metrics.json?)", p)
		}
		committedMD, err := os.ReadFile(filepath.Join(dir, mdName))
		must(t, err)
		if string(md) != string(committedMD) {
			t.Errorf("%s/%s differs from what its %s gives", dir, mdName, tsvName)
		}
	}
}
