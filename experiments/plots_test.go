package main

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gekc/report"
	"gekc/train/ckpt"
)

// decodePNG decodes data and checks that it is a plausible figure: sane
// dimensions and some pixels in the run's colour (the curves were drawn,
// not only the axes). It returns the image's size.
func decodePNG(t *testing.T, what string, data []byte) image.Point {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	size := img.Bounds().Size()
	if size.X < 300 || size.Y < 200 || size.X > 5000 || size.Y > 5000 {
		t.Errorf("%s: %dx%d pixels", what, size.X, size.Y)
	}
	if n := countNear(img, report.RunColor.R, report.RunColor.G, report.RunColor.B); n < 5 {
		t.Errorf("%s: %d pixels in the curves' colour; nothing drawn?", what, n)
	}
	return size
}

// countNear counts pixels within a small distance of an opaque colour.
func countNear(img image.Image, r, g, b uint8) int {
	n := 0
	bd := img.Bounds()
	for y := bd.Min.Y; y < bd.Max.Y; y++ {
		for x := bd.Min.X; x < bd.Max.X; x++ {
			pr, pg, pb, _ := img.At(x, y).RGBA()
			d := math.Abs(float64(pr>>8)-float64(r)) + math.Abs(float64(pg>>8)-float64(g)) + math.Abs(float64(pb>>8)-float64(b))
			if d < 30 {
				n++
			}
		}
	}
	return n
}

func readPNG(t *testing.T, path string) image.Point {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return decodePNG(t, path, data)
}

// -analyze plots draws curves.png of finished and diverged runs from
// metrics.json alone (the toy dataset has no files at all), and leaves
// failed runs alone.
func TestAnalyzePlots(t *testing.T) {
	fx := newSweepFixture(t, toyGrid)
	ids := fx.runIDs(t)
	diverged, failed := ids[1], ids[2]
	fake := newFake()
	fake.diverge = regexp.MustCompile("^" + regexp.QuoteMeta(diverged) + "$")
	fake.fail = regexp.MustCompile("^" + regexp.QuoteMeta(failed) + "$")
	if code, _, stderr := runInProcess(t, context.Background(), fake, fx.args("-only", "0-3")...); code != exitRunsFailed {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	code, _, stderr := runInProcess(t, context.Background(), fake, fx.args("-analyze", "plots")...)
	if code != exitOK {
		t.Fatalf("-analyze plots: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "wrote "+curvesName+" of 3 runs") {
		t.Errorf("stderr: %s", stderr)
	}
	for i, id := range ids {
		path := filepath.Join(fx.out, runsDirName, id, curvesName)
		want := i <= 3 && id != failed
		if fileExists(path) != want {
			t.Errorf("%s: %s exists %v, want %v", id, curvesName, fileExists(path), want)
			continue
		}
		if want {
			readPNG(t, path)
		}
	}
	assertNoTempFiles(t, fx.out)
	if code, _, stderr := runInProcess(t, context.Background(), fake, fx.args("-analyze", "nonsense")...); code == exitOK ||
		!strings.Contains(stderr, "plots, paper or tables") {
		t.Errorf("-analyze nonsense: exit %d: %s", code, stderr)
	}
}

// Real training on Nations: runs with "ece" get both ECEs and both figures;
// -analyze calibration reproduces the ECEs from the checkpoints (the same
// seeded negatives), also for a run trained without "ece", and -analyze
// plots draws the curves again.
func TestCalibrationEndToEnd(t *testing.T) {
	data := shippedData(t, "nations")
	grid := `name = "cal"
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
`
	fx := newSweepFixture(t, grid)
	args := []string{"-grid", fx.grid, "-data", data, "-out", fx.out}
	cli := func(extra ...string) (stdout, stderr string) {
		t.Helper()
		return trainCLI(t, args, extra...)
	}
	cli()
	ids := fx.runIDs(t)
	withECE := map[string]bool{ids[0]: true, ids[1]: true, ids[2]: false}
	recorded := map[string][2]float64{}
	for id, ece := range withECE {
		dir := filepath.Join(fx.out, runsDirName, id)
		rec, err := readRecord(filepath.Join(dir, metricsName))
		must(t, err)
		if rec.Status != StatusFinished {
			t.Fatalf("%s: %s %s", id, rec.Status, rec.Error)
		}
		if rec.CPU == "" && fileExists("/proc/cpuinfo") {
			t.Errorf("%s: no cpu in %s", id, metricsName)
		}
		if !(rec.SgemmGFLOPS > 0) {
			t.Errorf("%s: no host Sgemm rate in %s", id, metricsName)
		}
		l, hasL := rec.Test["ece_logistic"]
		m, hasM := rec.Test["ece_minmax"]
		if hasL != ece || hasM != ece || fileExists(filepath.Join(dir, calibrationPlotName)) != ece {
			t.Fatalf("%s: ece metrics %v/%v and %s %v, want all %v", id, hasL, hasM, calibrationPlotName,
				fileExists(filepath.Join(dir, calibrationPlotName)), ece)
		}
		readPNG(t, filepath.Join(dir, curvesName))
		if ece {
			readPNG(t, filepath.Join(dir, calibrationPlotName))
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
		for _, name := range []string{curvesName, calibrationPlotName} {
			os.Remove(filepath.Join(dir, name))
		}
	}

	cli("-analyze", "plots")
	for id := range withECE {
		dir := filepath.Join(fx.out, runsDirName, id)
		readPNG(t, filepath.Join(dir, curvesName))
		if fileExists(filepath.Join(dir, calibrationPlotName)) {
			t.Errorf("%s: -analyze plots drew %s", id, calibrationPlotName)
		}
	}

	stdout, _ := cli("-analyze", "calibration")
	tsv, err := os.ReadFile(filepath.Join(fx.out, calTSVName))
	must(t, err)
	lines := strings.Split(strings.TrimSpace(string(tsv)), "\n")
	if len(lines) != 1+len(ids) {
		t.Fatalf("%s has %d lines, want a header and %d rows:\n%s", calTSVName, len(lines), len(ids), tsv)
	}
	header := strings.Split(lines[0], "\t")
	col := func(name string) int {
		for i, h := range header {
			if h == name {
				return i
			}
		}
		t.Fatalf("%s: no column %s", calTSVName, name)
		return -1
	}
	for _, line := range lines[1:] {
		f := strings.Split(line, "\t")
		id := f[col("run")]
		if _, ok := withECE[id]; !ok {
			t.Errorf("%s: unexpected run %s", calTSVName, id)
			continue
		}
		readPNG(t, filepath.Join(fx.out, runsDirName, id, calibrationPlotName))
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
	md, err := os.ReadFile(filepath.Join(fx.out, calMarkdownName))
	must(t, err)
	if err := containsAll(string(md), append([]string{"| ECE logistic", "ECE min-max"}, ids...)...); err != nil {
		t.Errorf("%s: %v\n%s", calMarkdownName, err, md)
	}
	if stdout != string(md) {
		t.Errorf("stdout is not %s:\n%s", calMarkdownName, stdout)
	}

	// The tables are updated, not replaced: a run outside -only, or one
	// whose checkpoint is absent (as on a fresh clone), keeps its row.
	readRows := func() []string {
		data, err := os.ReadFile(filepath.Join(fx.out, calTSVName))
		must(t, err)
		return strings.Split(strings.TrimSpace(string(data)), "\n")
	}
	must(t, os.Remove(filepath.Join(fx.out, runsDirName, ids[0], ckpt.CheckpointName)))
	cli("-analyze", "calibration", "-only", "2")
	if got := readRows(); !slices.Equal(got, lines) {
		t.Errorf("-only 2 changed the table:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(lines, "\n"))
	}
	_, stderr := cli("-analyze", "calibration")
	if got := readRows(); !slices.Equal(got, lines) {
		t.Errorf("without %s's checkpoint the table became:\n%s\nwant\n%s", ids[0], strings.Join(got, "\n"), strings.Join(lines, "\n"))
	}
	if !strings.Contains(stderr, ids[0]+": no checkpoint; its row is kept") {
		t.Errorf("stderr does not say %s's row was kept:\n%s", ids[0], stderr)
	}
	md2, err := os.ReadFile(filepath.Join(fx.out, calMarkdownName))
	must(t, err)
	if string(md2) != string(md) {
		t.Errorf("%s changed:\n%s\nwant\n%s", calMarkdownName, md2, md)
	}

	// A run with neither a checkpoint nor a row cannot be kept; a broken
	// table is an error naming its line.
	must(t, os.WriteFile(filepath.Join(fx.out, calTSVName), []byte(lines[0]+"\n"+lines[2]+"\n"), 0o644))
	var errOut bytes.Buffer
	code := runCLI(context.Background(), append(args, "-analyze", "calibration"), cliEnv{stdout: io.Discard, stderr: &errOut,
		getenv: func(string) string { return "" }, run: trainRun, quiet: true})
	if code == exitOK || !strings.Contains(errOut.String(), ckpt.CheckpointName) {
		t.Errorf("a run with neither checkpoint nor row: exit %d: %s", code, errOut.String())
	}
	must(t, os.WriteFile(filepath.Join(fx.out, calTSVName), []byte(lines[0]+"\n"+lines[1]+"\nx\ty\n"), 0o644))
	errOut.Reset()
	code = runCLI(context.Background(), append(args, "-analyze", "calibration", "-only", "1"), cliEnv{stdout: io.Discard, stderr: &errOut,
		getenv: func(string) string { return "" }, run: trainRun, quiet: true})
	if code == exitOK || !strings.Contains(errOut.String(), calTSVName+":3:") {
		t.Errorf("a broken %s: exit %d: %s", calTSVName, code, errOut.String())
	}
	assertNoTempFiles(t, fx.out)
}

// -analyze paper compares a sweep's record with the paper's tables. It
// reads results.tsv alone (no dataset, no checkpoint): on a copy of the
// committed FB15k-237 d = 1000 record it reproduces the committed
// paper.md, and a missing reference or an empty sweep are clear errors.
func TestAnalyzePaper(t *testing.T) {
	src := filepath.Join("..", "results", "fb15k237-d1000")
	out := t.TempDir()
	for _, f := range []string{"grid.toml", resultsTSVName} {
		data, err := os.ReadFile(filepath.Join(src, f))
		must(t, err)
		must(t, os.WriteFile(filepath.Join(out, f), data, 0o644))
	}
	want, err := os.ReadFile(filepath.Join(src, "paper.md"))
	must(t, err)
	args := []string{"-grid", filepath.Join(out, "grid.toml"), "-out", out, "-data", filepath.Join(out, "no-data"), "-analyze", "paper"}
	code, stdout, stderr := runInProcess(t, context.Background(), newFake(), args...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if stdout != string(want) {
		t.Errorf("stdout is not the committed paper.md:\n%s", stdout)
	}
	got, err := os.ReadFile(filepath.Join(out, "paper.md"))
	must(t, err)
	if string(got) != string(want) {
		t.Errorf("paper.md differs from the committed one:\n%s", got)
	}
	assertNoTempFiles(t, out)

	missing := filepath.Join(out, "nope.tsv")
	code, _, stderr = runInProcess(t, context.Background(), newFake(), append(args, "-reference", missing)...)
	if code == exitOK || !strings.Contains(stderr, missing) {
		t.Errorf("-reference %s: exit %d: %s", missing, code, stderr)
	}
	empty := t.TempDir()
	must(t, os.WriteFile(filepath.Join(empty, "grid.toml"), []byte(toyGrid), 0o644))
	code, _, stderr = runInProcess(t, context.Background(), newFake(),
		"-grid", filepath.Join(empty, "grid.toml"), "-out", empty, "-analyze", "paper")
	if code == exitOK || !strings.Contains(stderr, "no run has ended yet") {
		t.Errorf("-analyze paper on an empty sweep: exit %d: %s", code, stderr)
	}
}

// A sweep whose dataset the reference covers writes paper.md with
// results.md after every run; one whose dataset it does not cover writes
// none; a bad -reference stops the sweep before any training.
func TestSweepWritesPaperMD(t *testing.T) {
	fx := newSweepFixture(t, toyGrid)
	ref := filepath.Join(fx.dir, "ref.tsv")
	must(t, os.WriteFile(ref, []byte("dataset\tmodel\tobjective\tmrr\ntoy\tcp2\tpll\t0.5\n"), 0o644))
	if code, _, stderr := runInProcess(t, context.Background(), newFake(), fx.args("-only", "0", "-reference", ref)...); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	md, err := os.ReadFile(filepath.Join(fx.out, "paper.md"))
	must(t, err)
	if !strings.Contains(string(md), "## toy") || !strings.Contains(string(md), "| CP²") {
		t.Errorf("paper.md:\n%s", md)
	}

	other := newSweepFixture(t, toyGrid)
	if code, _, stderr := runInProcess(t, context.Background(), newFake(), other.args("-only", "0")...); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if fileExists(filepath.Join(other.out, "paper.md")) {
		t.Error("paper.md written for a dataset the paper's reference does not cover")
	}

	// Values at another d cover nothing: no paper.md, and -analyze paper
	// says why.
	other2 := newSweepFixture(t, toyGrid)
	ref1000 := filepath.Join(other2.dir, "ref1000.tsv")
	must(t, os.WriteFile(ref1000, []byte("dataset\tmodel\tobjective\trank\tmrr\ntoy\tcp2\tpll\t1000\t0.5\n"), 0o644))
	if code, _, stderr := runInProcess(t, context.Background(), newFake(), other2.args("-only", "0", "-reference", ref1000)...); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if fileExists(filepath.Join(other2.out, "paper.md")) {
		t.Error("paper.md written for runs at d = 4 against values at d = 1000")
	}
	code, _, stderr := runInProcess(t, context.Background(), newFake(), other2.args("-analyze", "paper", "-reference", ref1000)...)
	if code == exitOK || !strings.Contains(stderr, "has no values for the datasets at the embedding sizes") {
		t.Errorf("-analyze paper at another d: exit %d: %s", code, stderr)
	}

	bad := filepath.Join(fx.dir, "bad.tsv")
	must(t, os.WriteFile(bad, []byte("dataset\tmodel\tobjective\tmrr\ntoy\tcp2\tpll\t24.5\n"), 0o644))
	code, _, stderr = runInProcess(t, context.Background(), newFake(), fx.args("-only", "1", "-reference", bad)...)
	if code == exitOK || !strings.Contains(stderr, bad+":2: column mrr") {
		t.Errorf("bad reference: exit %d: %s", code, stderr)
	}
	if rows := readRows(t, fx.out); len(rows) != 1 {
		t.Errorf("%d rows after the bad reference, want the 1 from before", len(rows))
	}
}

// Started outside the repository (a long sweep kept elsewhere) on a grid
// of the repository, the command still finds the paper's values there.
func TestPaperReferenceFoundFromTheGrid(t *testing.T) {
	out := t.TempDir()
	src := filepath.Join("..", "results", "fb15k237-d1000")
	data, err := os.ReadFile(filepath.Join(src, resultsTSVName))
	must(t, err)
	must(t, os.WriteFile(filepath.Join(out, resultsTSVName), data, 0o644))
	grid, err := filepath.Abs(filepath.Join("..", "grids", "fb15k237-d1000.toml"))
	must(t, err)
	var stdout, stderr bytes.Buffer
	code := runCLI(context.Background(), []string{"-grid", grid, "-out", out, "-analyze", "paper"},
		cliEnv{stdout: &stdout, stderr: &stderr, getenv: func(string) string { return "" }, dir: t.TempDir(), run: newFake().run, quiet: true})
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "Reference: `paper-reference.tsv`") {
		t.Errorf("stdout:\n%s", stdout.String())
	}
}
