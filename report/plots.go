package report

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"strconv"

	"gekc/metrics"
	"gekc/train"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// The per-run figures, as PNG: Curves (training loss and validation
// metrics by epoch) and Calibration (reliability diagrams, paper appendix
// "Calibration Diagrams").

// RunColor is the colour of a run's own data in every figure; references
// (the diagonal, the best epoch) are grey.
var RunColor = color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}

var (
	colorRef   = color.RGBA{R: 0x80, G: 0x80, B: 0x80, A: 0xff}  // references: the diagonal, the best epoch
	colorShare = color.NRGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0x60} // translucent bars of bin shares
)

// safeRender calls render, turning a panic into an error: gonum/plot
// panics on some degenerate data (its default ticker on an empty range),
// and a figure must never cost a run its results.
func safeRender(render func() ([]byte, error)) (png []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			png, err = nil, fmt.Errorf("plotting panicked: %v", p)
		}
	}()
	return render()
}

// Curves returns a PNG of one panel per series, stacked over a shared epoch
// axis: the training loss, then the validation MRR ("mrr") and
// log-likelihood ("ll") when some epoch has them (their scales differ too
// much to share a y axis). Non-finite values are left out, and a diverged
// run says so in its title. bestEpoch (0: none) is marked by a vertical
// line. title heads the figure. Degenerate data is an error, never a panic.
func Curves(title string, epochs []train.EpochRecord, bestEpoch int) ([]byte, error) {
	return safeRender(func() ([]byte, error) { return renderCurves(title, epochs, bestEpoch) })
}

func renderCurves(title string, epochs []train.EpochRecord, bestEpoch int) ([]byte, error) {
	if len(epochs) == 0 {
		return nil, fmt.Errorf("no epochs to plot")
	}
	var loss plotter.XYs
	diverged := 0
	for _, e := range epochs {
		if isFinite(e.TrainLoss) {
			loss = append(loss, plotter.XY{X: float64(e.Epoch), Y: e.TrainLoss})
		} else if diverged == 0 {
			diverged = e.Epoch
		}
	}
	lossTitle := "training loss"
	if diverged > 0 {
		lossTitle += fmt.Sprintf(" (non-finite from epoch %d: diverged)", diverged)
	}
	if bestEpoch > 0 {
		lossTitle += fmt.Sprintf("; dashed: best epoch (%d)", bestEpoch)
	}
	type panel struct {
		title, ylabel string
		xys           plotter.XYs
	}
	panels := []panel{{title + "\n" + lossTitle, "loss", loss}}
	for _, m := range []struct{ key, title string }{{"mrr", "validation MRR"}, {"ll", "validation log-likelihood"}} {
		var xys plotter.XYs
		present := false
		for _, e := range epochs {
			v, ok := e.Valid[m.key]
			present = present || ok
			if ok && isFinite(v) {
				xys = append(xys, plotter.XY{X: float64(e.Epoch), Y: v})
			}
		}
		if present {
			panels = append(panels, panel{m.title, m.key, xys})
		}
	}

	first, last := float64(epochs[0].Epoch), float64(epochs[len(epochs)-1].Epoch)
	rows := make([][]*plot.Plot, len(panels))
	for i, pn := range panels {
		p := plot.New()
		p.Title.Text = pn.title
		p.Y.Label.Text = pn.ylabel
		if i == len(panels)-1 {
			p.X.Label.Text = "epoch"
		}
		p.X.Tick.Marker = epochTicks{}
		p.Y.Tick.Marker = distinctTicks{}
		p.Add(plotter.NewGrid())
		if len(pn.xys) > 0 {
			line, points, err := plotter.NewLinePoints(pn.xys)
			if err != nil {
				return nil, err
			}
			line.Color, points.Color = RunColor, RunColor
			points.Shape, points.Radius = draw.CircleGlyph{}, vg.Points(2)
			p.Add(line, points)
		}
		// Every panel spans the same epochs, so that they line up
		// although validation may skip epochs; the margin keeps points on
		// the first and last epochs whole, and a single epoch gets room
		// either side.
		pad := 0.02 * (last - first)
		if first == last {
			pad = 1
		}
		p.X.Min, p.X.Max = first-pad, last+pad
		if bestEpoch > 0 && len(pn.xys) > 0 {
			lo, hi := yRange(pn.xys)
			best, err := plotter.NewLine(plotter.XYs{{X: float64(bestEpoch), Y: lo}, {X: float64(bestEpoch), Y: hi}})
			if err != nil {
				return nil, err
			}
			best.Color, best.Dashes = colorRef, []vg.Length{vg.Points(3), vg.Points(3)}
			p.Add(best)
		}
		if len(pn.xys) == 0 {
			// An empty axis would have no range at all.
			p.Y.Min, p.Y.Max = 0, 1
			p.Title.Text += " (no finite values)"
		}
		rows[i] = []*plot.Plot{p}
	}
	return renderTiles(rows, 8*vg.Inch, vg.Length(len(rows))*2.6*vg.Inch)
}

// Calibration returns a PNG of the reliability diagrams of both of c's
// mappings (logistic and min-max) side by side: the fraction of true
// triples against the mean probability of each non-empty bin, the diagonal
// of perfect calibration, and bars with each bin's share of the triples.
// title heads both diagrams. Degenerate data is an error, never a panic.
func Calibration(title string, c *metrics.Calibration) ([]byte, error) {
	return safeRender(func() ([]byte, error) { return renderCalibration(title, c) })
}

func renderCalibration(title string, c *metrics.Calibration) ([]byte, error) {
	if c == nil {
		return nil, fmt.Errorf("no calibration to plot")
	}
	var row []*plot.Plot
	for _, m := range []struct {
		name string
		r    metrics.Reliability
	}{{"logistic σ(log-score)", c.Logistic}, {"min-max on training log-scores", c.MinMax}} {
		p := plot.New()
		p.Title.Text = fmt.Sprintf("%s\n%s: ECE %.4f (%d true, %d negatives)", title, m.name, m.r.ECE, c.Positives, c.Negatives)
		p.X.Label.Text = "probability of being true (bin mean)"
		p.Y.Label.Text = "fraction of true triples"
		p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, 1, 0, 1
		p.Add(plotter.NewGrid())

		total := 0
		for _, b := range m.r.Bins {
			total += b.Count
		}
		if total == 0 {
			return nil, fmt.Errorf("%s: no triples in any bin", m.name)
		}
		share := &plotter.Histogram{FillColor: colorShare, LineStyle: draw.LineStyle{Color: colorShare, Width: vg.Points(0.5)}}
		var curve plotter.XYs
		for _, b := range m.r.Bins {
			share.Bins = append(share.Bins, plotter.HistogramBin{Min: b.Lo, Max: b.Hi, Weight: float64(b.Count) / float64(total)})
			if b.Count > 0 {
				curve = append(curve, plotter.XY{X: b.MeanProb, Y: b.Frequency})
			}
		}
		diag, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 1}})
		if err != nil {
			return nil, err
		}
		diag.Color, diag.Dashes = colorRef, []vg.Length{vg.Points(4), vg.Points(3)}
		line, points, err := plotter.NewLinePoints(curve)
		if err != nil {
			return nil, err
		}
		line.Color, points.Color = RunColor, RunColor
		points.Shape, points.Radius = draw.CircleGlyph{}, vg.Points(2.5)
		p.Add(share, diag, line, points)
		p.Legend.Add(fmt.Sprintf("model (ECE %.4f)", m.r.ECE), line, points)
		p.Legend.Add("perfectly calibrated", diag)
		p.Legend.Add("share of triples in the bin", share)
		p.Legend.Top, p.Legend.Left = true, true
		row = append(row, p)
	}
	return renderTiles([][]*plot.Plot{row}, 12*vg.Inch, 5.5*vg.Inch)
}

// renderTiles draws plots on a grid of aligned panels and encodes the
// result as PNG.
func renderTiles(rows [][]*plot.Plot, w, h vg.Length) ([]byte, error) {
	c, err := draw.NewFormattedCanvas(w, h, "png")
	if err != nil {
		return nil, err
	}
	tiles := draw.Tiles{Rows: len(rows), Cols: len(rows[0]),
		PadTop: vg.Points(6), PadBottom: vg.Points(6), PadLeft: vg.Points(6), PadRight: vg.Points(12),
		PadX: vg.Points(24), PadY: vg.Points(18)}
	canvases := plot.Align(rows, tiles, draw.New(c))
	for i, row := range rows {
		for j, p := range row {
			p.Draw(canvases[i][j])
		}
	}
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// epochTicks labels whole epochs at a round step (1, 2, 5, 10, 20, …)
// giving at most eight labels.
type epochTicks struct{}

func (epochTicks) Ticks(lo, hi float64) []plot.Tick {
	step := 1.0
	for i := 0; (hi-lo)/step > 8; i++ {
		step = [...]float64{2, 5, 10}[i%3] * math.Pow10(i/3)
	}
	var ticks []plot.Tick
	for e := math.Ceil(lo/step) * step; e <= hi; e += step {
		ticks = append(ticks, plot.Tick{Value: e, Label: strconv.FormatFloat(e, 'f', -1, 64)})
	}
	return ticks
}

// distinctTicks are the default ticks labelled with the fewest decimals
// that give each major tick its exact value (to a millionth of the
// range) and a label of its own: over a narrow range (a log-likelihood from
// −9.23 to −9.10) the default labels can repeat.
type distinctTicks struct{}

func (distinctTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := (plot.DefaultTicks{}).Ticks(lo, hi)
	tol := 1e-6 * (hi - lo)
	for decimals := 0; decimals <= 10; decimals++ {
		seen := map[string]bool{}
		ok := true
		for _, t := range ticks {
			if t.IsMinor() {
				continue
			}
			l := strconv.FormatFloat(t.Value, 'f', decimals, 64)
			v, _ := strconv.ParseFloat(l, 64)
			ok = ok && !seen[l] && math.Abs(v-t.Value) <= tol
			seen[l] = true
		}
		if ok { // else the default labels stay
			for i, t := range ticks {
				if !t.IsMinor() {
					ticks[i].Label = strconv.FormatFloat(t.Value, 'f', decimals, 64)
				}
			}
			break
		}
	}
	return ticks
}

func yRange(xys plotter.XYs) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, p := range xys {
		lo, hi = min(lo, p.Y), max(hi, p.Y)
	}
	return lo, hi
}

func isFinite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// SampleColor is the colour of sampled triples beside test triples
// (RunColor) in TSNE.
var SampleColor = color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff}

// TSNE returns a PNG of a t-SNE embedding (n×2) of test triples, its first
// tests rows, and a model's sampled triples, the rest: the paper's figure
// "Sampled triples are close to test triples". title heads it.
func TSNE(title string, y *mat.Dense, tests int) ([]byte, error) {
	return safeRender(func() ([]byte, error) { return renderTSNE(title, y, tests) })
}

func renderTSNE(title string, y *mat.Dense, tests int) ([]byte, error) {
	groups, err := tsneGroups(y, tests)
	if err != nil {
		return nil, err
	}
	p := plot.New()
	p.Title.Text = title
	p.HideAxes()
	alpha, radius := tsneMarks(len(groups[0]) + len(groups[1]))
	for i, name := range []string{"test triples", "sampled triples"} {
		s, err := plotter.NewScatter(groups[i])
		if err != nil {
			return nil, err
		}
		c := []color.RGBA{RunColor, SampleColor}[i]
		s.Color = color.NRGBA{R: c.R, G: c.G, B: c.B, A: uint8(math.Round(255 * alpha))}
		s.Shape, s.Radius = draw.CircleGlyph{}, radius
		p.Add(s)
		p.Legend.Add(fmt.Sprintf("%s (%d)", name, len(groups[i])), legendMark{draw.GlyphStyle{Color: c, Shape: draw.CircleGlyph{}, Radius: vg.Points(3)}})
	}
	p.Legend.Top = true
	return renderTiles([][]*plot.Plot{{p}}, 7*vg.Inch, 7*vg.Inch)
}

// tsneMarks returns the opacity and radius of an embedding's marks: solid
// up to a thousand points, fainter beyond, down to 0.15 from about 6,700
// points on (the paper's code draws 0.05: faint on a page this size), so
// that dense regions show as dense.
func tsneMarks(points int) (alpha float64, radius vg.Length) {
	if points <= 1000 {
		return 1, vg.Points(1.5)
	}
	return math.Max(0.15, 1000/float64(points)), vg.Points(1)
}

// legendMark is a legend's opaque mark for faint points.
type legendMark struct{ style draw.GlyphStyle }

func (m legendMark) Thumbnail(c *draw.Canvas) { c.DrawGlyph(m.style, c.Center()) }

// tsneGroups splits an embedding's finite points into test (the first
// tests rows) and sampled triples; an embedding without finite points of
// both is an error.
func tsneGroups(y *mat.Dense, tests int) ([2]plotter.XYs, error) {
	var groups [2]plotter.XYs
	if y == nil {
		return groups, fmt.Errorf("no embedding to plot")
	}
	n, c := y.Dims()
	if c != 2 || tests <= 0 || tests >= n {
		return groups, fmt.Errorf("an embedding of %d×%d with %d test triples: want two columns, and test and sampled triples both", n, c, tests)
	}
	for i := range n {
		if x, yy := y.At(i, 0), y.At(i, 1); isFinite(x) && isFinite(yy) {
			g := 0
			if i >= tests {
				g = 1
			}
			groups[g] = append(groups[g], plotter.XY{X: x, Y: yy})
		}
	}
	for i, name := range []string{"test", "sampled"} {
		if len(groups[i]) == 0 {
			return groups, fmt.Errorf("no finite point of the %s triples to plot", name)
		}
	}
	return groups, nil
}
