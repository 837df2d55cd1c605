package report

import (
	"image"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gekc/metrics"
	"gekc/report/reporttest"
	"gekc/train"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// decodePNG checks that data is a plausible figure of a run
// (reporttest.Figure) and returns its size.
func decodePNG(t *testing.T, what string, data []byte) image.Point {
	t.Helper()
	return reporttest.Figure(t, what, data, RunColor)
}

func TestCurves(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name   string
		epochs []train.EpochRecord
		best   int
		panels int
	}{
		{"loss only", []train.EpochRecord{{Epoch: 1, TrainLoss: 3}, {Epoch: 2, TrainLoss: 2.5}}, 0, 1},
		{"mrr every other epoch", []train.EpochRecord{
			{Epoch: 1, TrainLoss: 3}, {Epoch: 2, TrainLoss: 2, Valid: map[string]float64{"mrr": 0.2}},
			{Epoch: 3, TrainLoss: 1.5}, {Epoch: 4, TrainLoss: 1.2, Valid: map[string]float64{"mrr": 0.3, "hits@1": 0.1}},
		}, 4, 2},
		{"mrr and ll over a narrow range", []train.EpochRecord{
			{Epoch: 1, TrainLoss: 9.23, Valid: map[string]float64{"mrr": 0.48, "ll": -9.23}},
			{Epoch: 2, TrainLoss: 9.1, Valid: map[string]float64{"mrr": 0.49, "ll": -9.1}},
		}, 2, 3},
		{"diverged", []train.EpochRecord{
			{Epoch: 1, TrainLoss: 5, Valid: map[string]float64{"mrr": 0.1}},
			{Epoch: 2, TrainLoss: nan},
		}, 1, 2},
		{"diverged in the first epoch", []train.EpochRecord{{Epoch: 1, TrainLoss: math.Inf(1)}, {Epoch: 2, TrainLoss: 1}}, 0, 1},
		{"one epoch", []train.EpochRecord{{Epoch: 1, TrainLoss: 1, Valid: map[string]float64{"ll": -3}}}, 1, 2},
	}
	var height1 int
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := Curves("test run", tt.epochs, tt.best)
			if err != nil {
				t.Fatal(err)
			}
			size := decodePNG(t, tt.name, data)
			// One panel per series: the height grows with the panels.
			if tt.panels == 1 {
				height1 = size.Y
			} else if height1 > 0 && (size.Y < tt.panels*height1*9/10 || size.Y > tt.panels*height1*11/10) {
				t.Errorf("%d panels: height %d, one panel %d", tt.panels, size.Y, height1)
			}
		})
	}
	if _, err := Curves("empty", nil, 0); err == nil {
		t.Error("no epochs accepted")
	}
}

func TestDistinctTicks(t *testing.T) {
	for _, r := range [][2]float64{{-9.23, -9.1}, {0.4831, 0.4874}, {0, 1}, {1200, 1800}, {-1e-5, 3e-5}} {
		seen := map[string]bool{}
		for _, tk := range (distinctTicks{}).Ticks(r[0], r[1]) {
			if tk.IsMinor() {
				continue
			}
			if seen[tk.Label] {
				t.Errorf("range %v: label %q repeats", r, tk.Label)
			}
			seen[tk.Label] = true
			if v, err := strconv.ParseFloat(tk.Label, 64); err != nil || math.Abs(v-tk.Value) > 1e-6*(r[1]-r[0]) {
				t.Errorf("range %v: tick %v labelled %q", r, tk.Value, tk.Label)
			}
		}
		if len(seen) < 2 {
			t.Errorf("range %v: %d labelled ticks", r, len(seen))
		}
	}
}

func TestCalibration(t *testing.T) {
	probs := []float64{0.05, 0.12, 0.18, 0.35, 0.5, 0.52, 0.77, 0.9, 1, 0.99}
	labels := []bool{false, false, true, false, true, false, true, true, true, false}
	logistic, err := metrics.ECE(probs, labels, metrics.CalibrationBins)
	must(t, err)
	// Everything in one bin: the curve is a single point.
	single, err := metrics.ECE([]float64{0.5, 0.55}, []bool{true, false}, metrics.CalibrationBins)
	must(t, err)
	c := &metrics.Calibration{Logistic: logistic, MinMax: single, Positives: 6, Negatives: 4}
	data, err := Calibration("test run", c)
	if err != nil {
		t.Fatal(err)
	}
	size := decodePNG(t, "calibration", data)
	if size.X <= size.Y {
		t.Errorf("%dx%d: the two diagrams should be side by side", size.X, size.Y)
	}
	if _, err := Calibration("nil", nil); err == nil {
		t.Error("nil calibration accepted")
	}
	if _, err := Calibration("no bins", &metrics.Calibration{}); err == nil {
		t.Error("calibration without bins accepted")
	}
}

func TestEpochTicks(t *testing.T) {
	tests := []struct {
		lo, hi float64
		want   []float64
	}{
		{0.9, 2.1, []float64{1, 2}},
		{1, 8, []float64{1, 2, 3, 4, 5, 6, 7, 8}},
		{0.2, 40.8, []float64{10, 20, 30, 40}},
		{1, 15, []float64{2, 4, 6, 8, 10, 12, 14}},
		{0, 500, []float64{0, 100, 200, 300, 400, 500}},
		{-1, 1, []float64{-1, 0, 1}},
	}
	for _, tt := range tests {
		var got []float64
		for _, tk := range (epochTicks{}).Ticks(tt.lo, tt.hi) {
			got = append(got, tk.Value)
			if tk.Label != strconv.FormatFloat(tk.Value, 'f', -1, 64) {
				t.Errorf("[%v, %v]: tick %v labelled %q", tt.lo, tt.hi, tk.Value, tk.Label)
			}
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("[%v, %v]: ticks %v, want %v", tt.lo, tt.hi, got, tt.want)
		}
	}
}

func TestSafeRender(t *testing.T) {
	if _, err := safeRender(func() ([]byte, error) { panic("illegal range") }); err == nil || !strings.Contains(err.Error(), "illegal range") {
		t.Errorf("panic: %v", err)
	}
	got, err := safeRender(func() ([]byte, error) { return []byte("png"), nil })
	if err != nil || string(got) != "png" {
		t.Errorf("%q, %v", got, err)
	}
}

// TSNE draws test and sampled triples in their colours, a square figure,
// leaving out non-finite points; an embedding it cannot split in two
// groups with finite points is an error.
func TestTSNE(t *testing.T) {
	y := mat.NewDense(6, 2, []float64{0, 0, 1, 0, 0, 1, 5, 5, 6, 5, math.Inf(1), 0})
	groups, err := tsneGroups(y, 3)
	if err != nil || len(groups[0]) != 3 || len(groups[1]) != 2 || groups[1][1] != (plotter.XY{X: 6, Y: 5}) {
		t.Errorf("groups %v (%v), want 3 test points and the 2 finite sampled ones", groups, err)
	}
	data, err := TSNE("run: t-SNE", y, 3)
	if err != nil {
		t.Fatal(err)
	}
	if size := decodePNG(t, "t-SNE", data); size.X != size.Y {
		t.Errorf("%dx%d, want a square", size.X, size.Y)
	}
	for _, tc := range []struct {
		points int
		alpha  float64
		radius vg.Length
	}{{2, 1, vg.Points(1.5)}, {1000, 1, vg.Points(1.5)}, {2000, 0.5, vg.Points(1)}, {5000, 0.2, vg.Points(1)}, {20000, 0.15, vg.Points(1)}, {50000, 0.15, vg.Points(1)}} {
		if alpha, radius := tsneMarks(tc.points); alpha != tc.alpha || radius != tc.radius {
			t.Errorf("%d points: opacity %v, radius %v; want %v, %v", tc.points, alpha, radius, tc.alpha, tc.radius)
		}
	}
	nan := mat.DenseCopyOf(y)
	for i := 3; i < 6; i++ {
		nan.Set(i, 0, math.NaN())
	}
	for _, tc := range []struct {
		y     *mat.Dense
		tests int
	}{{nil, 1}, {y, 0}, {y, 6}, {mat.NewDense(4, 3, nil), 2}, {nan, 3}} {
		if _, err := TSNE("bad", tc.y, tc.tests); err == nil {
			t.Errorf("%v test rows of %v accepted", tc.tests, tc.y)
		}
	}
}
