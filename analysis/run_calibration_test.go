package analysis

import (
	"compress/gzip"
	"context"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gekc/graph"
	"gekc/grid"
	"gekc/kg"
	"gekc/resultsdir"
	"gekc/sweep"
	"gekc/sweep/sweeptest"
	"gekc/train"
	"gekc/train/ckpt"
)

// Real training on Nations: runs with "ece" get both ECEs and both figures;
// -analyze calibration reproduces the ECEs from the checkpoints (the same
// seeded negatives), also for a run trained without "ece", and -analyze
// plots draws the curves again.
func gunzipLines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	must(t, err)
	defer f.Close()
	z, err := gzip.NewReader(f)
	must(t, err)
	b, err := io.ReadAll(z)
	must(t, err)
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

func TestCalibrationEndToEnd(t *testing.T) {
	data := shippedData(t, "nations")
	ts := trainedSweep(t, `name = "cal"
[defaults]
dataset = "nations"
rank = 4
batch_size = 400
learning_rate = 0.01
epochs = 2
eval = { metrics = ["mrr", "hits", "ll", "ece"] }

[[sweep]]
model = ["cp", "cp2"]
objective = "pll"

[[sweep]]
model = "complex+"
objective = "mle"
learning_rate = 0.05
eval = { metrics = ["mrr", "hits", "ll"] }
`, data)
	ids := ts.ids()
	analysis := func(kind string, runs ...int) analysisJob {
		a := analysisJob{Kind: kind, Out: ts.out, DataRoot: data, Runs: ts.g.Runs}
		if runs != nil {
			a.Runs = nil
			for _, i := range runs {
				a.Runs = append(a.Runs, ts.g.Runs[i])
			}
		}
		return a
	}
	// Beside each checkpoint, its rows' names: row i is entity (relation) i.
	ds, err := resultsdir.LoadDataset(filepath.Join(data, "nations"))
	must(t, err)
	for name, v := range map[string]*kg.Vocab{ckpt.EntitiesName: ds.Entities, ckpt.RelationsName: ds.Relations} {
		lines := gunzipLines(t, filepath.Join(ts.out, runsDirName, ids[0], name))
		if len(lines) != v.Len() {
			t.Fatalf("%s: %d lines for %d names", name, len(lines), v.Len())
		}
		for i, l := range lines {
			if want := strconv.Itoa(i) + "\t" + v.Name(int32(i)); l != want {
				t.Fatalf("%s line %d: %q, want %q", name, i+1, l, want)
			}
		}
	}
	withECE := map[string]bool{ids[0]: true, ids[1]: true, ids[2]: false}
	recorded := map[string][2]float64{}
	for id, ece := range withECE {
		dir := filepath.Join(ts.out, runsDirName, id)
		rec, err := readRecord(filepath.Join(dir, metricsName))
		must(t, err)
		if rec.Status != train.Finished {
			t.Fatalf("%s: %s %s", id, rec.Status, rec.Error)
		}
		if rec.CPU == "" && fileExists("/proc/cpuinfo") {
			t.Errorf("%s: no cpu in %s", id, metricsName)
		}
		if !(rec.SgemmGFLOPS > 0) {
			t.Errorf("%s: no host Sgemm rate in %s", id, metricsName)
		}
		if rec.BLASThreads != graph.BLASThreads() || rec.BLASThreads < 1 {
			t.Errorf("%s: blas_threads %d in %s, the process has %d", id, rec.BLASThreads, metricsName, graph.BLASThreads())
		}
		l, hasL := rec.Test["ece_logistic"]
		m, hasM := rec.Test["ece_minmax"]
		if hasL != ece || hasM != ece || fileExists(filepath.Join(dir, resultsdir.CalibrationPlotName)) != ece {
			t.Fatalf("%s: ece metrics %v/%v and %s %v, want all %v", id, hasL, hasM, resultsdir.CalibrationPlotName,
				fileExists(filepath.Join(dir, resultsdir.CalibrationPlotName)), ece)
		}
		readPNG(t, filepath.Join(dir, curvesName))
		if ece {
			readPNG(t, filepath.Join(dir, resultsdir.CalibrationPlotName))
			if !(l >= 0 && l <= 1 && m >= 0 && m <= 1) {
				t.Errorf("%s: ECE %v, %v", id, l, m)
			}
			recorded[id] = [2]float64{float64(l), float64(m)}
		}
		for _, e := range rec.Epochs {
			if _, ok := e.Valid["ece_logistic"]; ok {
				t.Errorf("%s: validation computed the ECE", id)
			}
		}
		for _, name := range []string{curvesName, resultsdir.CalibrationPlotName} {
			os.Remove(filepath.Join(dir, name))
		}
	}

	mustAnalyze(t, analysis("plots"))
	for id := range withECE {
		dir := filepath.Join(ts.out, runsDirName, id)
		readPNG(t, filepath.Join(dir, curvesName))
		if fileExists(filepath.Join(dir, resultsdir.CalibrationPlotName)) {
			t.Errorf("%s: -analyze plots drew %s", id, resultsdir.CalibrationPlotName)
		}
	}

	stdout, _ := mustAnalyze(t, analysis("calibration"))
	tsv, err := os.ReadFile(filepath.Join(ts.out, calTSVName))
	must(t, err)
	lines := strings.Split(strings.TrimSpace(string(tsv)), "\n")
	if len(lines) != 1+len(ids) {
		t.Fatalf("%s has %d lines, want a header and %d rows:\n%s", calTSVName, len(lines), len(ids), tsv)
	}
	header := strings.Split(lines[0], "\t")
	col := func(name string) int {
		i := slices.Index(header, name)
		if i < 0 {
			t.Fatalf("%s: no column %s", calTSVName, name)
		}
		return i
	}
	for _, line := range lines[1:] {
		f := strings.Split(line, "\t")
		id := f[col("run")]
		if _, ok := withECE[id]; !ok {
			t.Errorf("%s: unexpected run %s", calTSVName, id)
			continue
		}
		readPNG(t, filepath.Join(ts.out, runsDirName, id, resultsdir.CalibrationPlotName))
		var got [2]float64
		for i, c := range []string{"ece_logistic", "ece_minmax"} {
			got[i], err = strconv.ParseFloat(f[col(c)], 64)
			must(t, err)
		}
		if want, ok := recorded[id]; ok {
			for i := range got {
				if math.Abs(got[i]-want[i]) > 1e-5*max(1, want[i]) {
					t.Errorf("%s: post-hoc ECE %v, the run recorded %v", id, got, want)
				}
			}
		} else if !(got[0] >= 0 && got[0] <= 1 && got[1] >= 0 && got[1] <= 1) {
			t.Errorf("%s: ECE %v", id, got)
		}
		if pos, _ := strconv.Atoi(f[col("positives")]); pos != 201 { // Nations' test split
			t.Errorf("%s: %d positives", id, pos)
		}
	}
	md, err := os.ReadFile(filepath.Join(ts.out, calMarkdownName))
	must(t, err)
	if err := containsAll(string(md), append([]string{"| ECE logistic", "ECE min-max"}, ids...)...); err != nil {
		t.Errorf("%s: %v\n%s", calMarkdownName, err, md)
	}
	if stdout != string(md) {
		t.Errorf("stdout is not %s:\n%s", calMarkdownName, stdout)
	}

	// The tables are updated, not replaced: a run outside the selection
	// (-only), or one whose checkpoint is absent (as on a fresh clone),
	// keeps its row.
	readRows := func() []string {
		data, err := os.ReadFile(filepath.Join(ts.out, calTSVName))
		must(t, err)
		return strings.Split(strings.TrimSpace(string(data)), "\n")
	}
	must(t, os.Remove(filepath.Join(ts.out, runsDirName, ids[0], ckpt.CheckpointName)))
	mustAnalyze(t, analysis("calibration", 2))
	if got := readRows(); !slices.Equal(got, lines) {
		t.Errorf("the run 2 alone changed the table:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(lines, "\n"))
	}
	_, stderr := mustAnalyze(t, analysis("calibration"))
	if got := readRows(); !slices.Equal(got, lines) {
		t.Errorf("without %s's checkpoint the table became:\n%s\nwant\n%s", ids[0], strings.Join(got, "\n"), strings.Join(lines, "\n"))
	}
	if !strings.Contains(stderr, ids[0]+": no checkpoint; its row is kept") {
		t.Errorf("stderr does not say %s's row was kept:\n%s", ids[0], stderr)
	}
	md2, err := os.ReadFile(filepath.Join(ts.out, calMarkdownName))
	must(t, err)
	if string(md2) != string(md) {
		t.Errorf("%s changed:\n%s\nwant\n%s", calMarkdownName, md2, md)
	}

	// A run with neither a checkpoint nor a row cannot be kept; a broken
	// table is an error naming its line.
	must(t, os.WriteFile(filepath.Join(ts.out, calTSVName), []byte(lines[0]+"\n"+lines[2]+"\n"), 0o644))
	if _, _, err := runAnalysis(analysis("calibration")); err == nil || !strings.Contains(err.Error(), ckpt.CheckpointName) {
		t.Errorf("a run with neither checkpoint nor row: %v", err)
	}
	must(t, os.WriteFile(filepath.Join(ts.out, calTSVName), []byte(lines[0]+"\n"+lines[1]+"\nx\ty\n"), 0o644))
	if _, _, err := runAnalysis(analysis("calibration", 1)); err == nil || !strings.Contains(err.Error(), calTSVName+":3:") {
		t.Errorf("a broken %s: %v", calTSVName, err)
	}

	// A truncated checkpoint costs its run, not the analysis: the others'
	// rows are written, the run is named with the remedy, and the error
	// says the tables are incomplete.
	must(t, os.WriteFile(filepath.Join(ts.out, calTSVName), []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	must(t, os.Truncate(filepath.Join(ts.out, runsDirName, ids[1], ckpt.CheckpointName), 100))
	_, stderr, err = runAnalysis(analysis("calibration"))
	if !errors.Is(err, ErrSkipped) {
		t.Errorf("a truncated checkpoint: %v, want ErrSkipped", err)
	}
	if !strings.Contains(stderr, "skipped: run "+ids[1]) || !strings.Contains(stderr, "train the run again") {
		t.Errorf("stderr does not name %s and the remedy:\n%s", ids[1], stderr)
	}
	if got := readRows(); len(got) != len(lines) {
		t.Errorf("with %s broken the table has %d lines, want %d:\n%s", ids[1], len(got), len(lines), strings.Join(got, "\n"))
	}
	// The sweep started again counts it done, and says its checkpoint is
	// unreadable, without training it again.
	var stderr2 strings.Builder
	s := sweep.New(ts.g, ts.g.Runs, sweep.Options{Out: ts.out, DataRoot: data, Run: sweep.Train, Quiet: true, Stderr: &stderr2})
	must(t, s.Prepare())
	// (ids[0]'s checkpoint was removed above, ids[1]'s truncated.)
	if tally := s.Run(context.Background()); tally != (sweep.Tally{AlreadyDone: len(ids), NoCheckpoint: 2}) {
		t.Errorf("the sweep again: %+v, want all %d done, 2 without a readable checkpoint", tally, len(ids))
	}
	if !strings.Contains(stderr2.String(), "finished before, but") || !strings.Contains(stderr2.String(), ids[1]) {
		t.Errorf("the sweep does not name %s's broken checkpoint:\n%s", ids[1], stderr2.String())
	}
	sweeptest.NoTempFiles(t, ts.out)
}

// Two analyses of one results directory at once, on disjoint runs, keep
// both their rows: each reads the table again under the results lock
// before writing it. (Both read it before either wrote; they used to write
// the copies they had read, the later dropping the earlier's rows.)
func TestConcurrentAnalysesKeepEachOthersRows(t *testing.T) {
	data := shippedData(t, "nations")
	ts := trainedSweep(t, `name = "two"
[defaults]
dataset = "nations"
model = "cp2"
objective = "mle"
rank = 4
batch_size = 400
learning_rate = 0.01
epochs = 1
seed = [0, 1]
`, data)
	for _, kind := range []struct {
		name string
		new  func(*Options) (Analysis, error)
		tsv  string
	}{{"calibration", newCalibration, CalibrationTSVName}, {"samples", newSamples, AuditTSVName}} {
		t.Run(kind.name, func(t *testing.T) {
			var as []Analysis
			var opts []*Options
			for _, r := range ts.g.Runs {
				o := &Options{Out: ts.out, DataRoot: data, Runs: []grid.Run{r}, Samples: 50, Stderr: io.Discard, Stdout: io.Discard}
				a, err := kind.new(o)
				must(t, err)
				as, opts = append(as, a), append(opts, o)
			}
			for i, a := range as {
				var skipped []error
				must(t, each(context.Background(), opts[i], a, &skipped))
			}
			for _, a := range as {
				write, err := a.Tables(nil)
				must(t, err)
				must(t, resultsdir.WithLock(ts.out, write))
			}
			b, err := os.ReadFile(filepath.Join(ts.out, kind.tsv))
			must(t, err)
			for _, r := range ts.g.Runs {
				if !strings.Contains(string(b), r.ID) {
					t.Errorf("%s has no row of %s:\n%s", kind.tsv, r.ID, b)
				}
			}
		})
	}
}
