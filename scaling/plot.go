package scaling

import (
	"bytes"
	"cmp"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// scaling.png is the paper's figure fig:pll-scaling with memory drawn as a
// second row of panels instead of bubble sizes: step time (top, log scale)
// and peak RSS (bottom) by batch size (left) and by number of entities
// (right), a line per model, and one legend beside them. A point that ran
// out of memory is a cross at the top of its panels in its model's colour,
// one that failed otherwise a plus.

var palette = []color.Color{
	color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
	color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff},
	color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
	color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
	color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff},
	color.RGBA{R: 0x8c, G: 0x56, B: 0x4b, A: 0xff},
}

var glyphs = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.BoxGlyph{}, draw.TriangleGlyph{}, draw.PyramidGlyph{}, draw.RingGlyph{}, draw.SquareGlyph{}}

// panel is one study's rows and how to draw its x axis.
type panel struct {
	study         string
	title, xlabel string
	log           bool // log-scale x
	x             func(Row) float64
	rows          []Row
}

// style is what the panels share: the models' order (their colours
// and glyphs), the memory unit and the cap.
type style struct {
	models  []string
	unit    string  // "MiB" or "GiB"
	perUnit float64 // MiB per unit
	maxMem  ByteSize
	showCap bool // draw the cap in the memory panels
}

func (st style) color(i int) color.Color      { return palette[i%len(palette)] }
func (st style) glyph(i int) draw.GlyphDrawer { return glyphs[i%len(glyphs)] }

// RenderPlot draws rows as scaling.png; o gives the settings the titles
// state and the memory cap.
func RenderPlot(o Options, rows []Row) ([]byte, error) {
	st := style{unit: "GiB", perUnit: 1024, maxMem: o.MaxMem}
	peak := 0.0
	for _, r := range rows {
		if !slices.Contains(st.models, r.Model) {
			st.models = append(st.models, r.Model)
		}
		if !math.IsNaN(r.PeakRSSMB) {
			peak = max(peak, r.PeakRSSMB)
		}
	}
	if peak < 1024 && float64(o.MaxMem) < 1<<30 {
		st.unit, st.perUnit = "MiB", 1
	}
	oom := slices.ContainsFunc(rows, func(r Row) bool { return r.Status == StatusOOM })
	failed := slices.ContainsFunc(rows, func(r Row) bool { return !r.OK() && r.Status != StatusOOM })
	// The cap is drawn when it explains something: points out of memory,
	// or peaks near it.
	capMiB := float64(o.MaxMem) / (1 << 20)
	st.showCap = o.MaxMem > 0 && (oom || capMiB < 1.5*peak)
	var panels []panel
	for _, p := range []panel{
		{study: StudyBatch, title: fmt.Sprintf("by batch size, |E| = %s", groupDigits(o.AllEntities)), xlabel: "batch size", log: true,
			x: func(r Row) float64 { return float64(r.Batch) }},
		{study: StudyEntities, title: fmt.Sprintf("by number of entities, batch %d", o.Batch), xlabel: "entities",
			x: func(r Row) float64 { return float64(r.Entities) }},
	} {
		for _, r := range rows {
			if r.Study == p.study {
				p.rows = append(p.rows, r)
			}
		}
		if len(p.rows) > 0 {
			panels = append(panels, p)
		}
	}
	header := fmt.Sprintf("One PLL training step (forward, backward, Adam), |R| = %d, d = %d, float32", o.Relations, o.Rank)
	if len(panels) == 0 {
		p := plot.New()
		p.Title.Text = "no point measured yet"
		p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, 1, 0, 1
		return drawFigure([][]*plot.Plot{{p}}, plot.NewLegend(), header, 8*vg.Inch, 4*vg.Inch)
	}

	legend := plot.NewLegend()
	for i, m := range st.models {
		l, err := plotter.NewLine(plotter.XYs{{}, {}})
		if err != nil {
			return nil, err
		}
		pts, err := plotter.NewScatter(plotter.XYs{{}})
		if err != nil {
			return nil, err
		}
		l.Color, pts.Color, pts.Shape, pts.Radius = st.color(i), st.color(i), st.glyph(i), vg.Points(3)
		legend.Add(m, l, pts)
	}
	for _, f := range []struct {
		glyph draw.GlyphDrawer
		label string
		shown bool
	}{
		{draw.CrossGlyph{}, "out of memory", oom},
		{draw.PlusGlyph{}, "timeout or error", failed},
	} {
		if !f.shown {
			continue
		}
		sc, err := plotter.NewScatter(plotter.XYs{{}})
		if err != nil {
			return nil, err
		}
		sc.Shape, sc.Radius, sc.Color = f.glyph, vg.Points(5), color.Black
		legend.Add(f.label, sc)
	}
	if st.showCap {
		l, err := plotter.NewLine(plotter.XYs{{}, {}})
		if err != nil {
			return nil, err
		}
		l.Color, l.Dashes = color.Gray{Y: 0x80}, []vg.Length{vg.Points(4), vg.Points(3)}
		legend.Add("memory cap "+o.MaxMem.String(), l)
	}

	grid := [][]*plot.Plot{make([]*plot.Plot, len(panels)), make([]*plot.Plot, len(panels))}
	for j, pn := range panels {
		var err error
		if grid[0][j], err = panelPlot(pn, st, false); err != nil {
			return nil, err
		}
		if grid[1][j], err = panelPlot(pn, st, true); err != nil {
			return nil, err
		}
		grid[0][j].Title.Text = "step time, " + pn.title
		grid[1][j].Title.Text = "peak RSS, " + pn.title
	}
	return drawFigure(grid, legend, header, vg.Length(len(panels))*5.5*vg.Inch+2.2*vg.Inch, 9*vg.Inch)
}

// panelPlot draws step time (log scale, seconds) or, if memory,
// peak RSS against the panel's x.
func panelPlot(pn panel, st style, memory bool) (*plot.Plot, error) {
	p := plot.New()
	p.X.Label.Text = pn.xlabel
	p.Add(plotter.NewGrid())
	y := func(r Row) float64 { return r.StepMS / 1000 }
	p.Y.Label.Text = "seconds per step"
	if memory {
		y = func(r Row) float64 { return r.PeakRSSMB / st.perUnit }
		p.Y.Label.Text = "peak RSS (" + st.unit + ")"
	}

	// Axis ranges are set by hand: gonum's automatic ones are not valid on
	// a log scale when every value is the same.
	var xs []float64
	ylo, yhi := math.Inf(1), math.Inf(-1)
	failures := false
	for _, r := range pn.rows {
		if x := pn.x(r); !slices.Contains(xs, x) {
			xs = append(xs, x)
		}
		if !r.OK() {
			failures = true
			continue
		}
		if v := y(r); v > 0 && !math.IsInf(v, 0) {
			ylo, yhi = min(ylo, v), max(yhi, v)
		}
	}
	slices.Sort(xs)
	p.X.Tick.Marker = valueTicks(xs)
	if pn.log {
		p.X.Scale = plot.LogScale{}
		p.X.Min, p.X.Max = xs[0]/1.25, xs[len(xs)-1]*1.25
	} else {
		pad := 0.05 * (xs[len(xs)-1] - xs[0])
		if pad == 0 {
			pad = 0.5 * xs[0]
		}
		p.X.Min, p.X.Max = xs[0]-pad, xs[len(xs)-1]+pad
	}

	// Failed points are drawn above the measured ones, a model a step
	// higher than the one before so that crosses at one x stay apart.
	var failedY func(model int) float64
	if memory {
		capY := float64(st.maxMem) / (1 << 20) / st.perUnit
		if math.IsInf(yhi, -1) {
			yhi = 1
		}
		if st.showCap {
			yhi = max(yhi, capY)
			l, err := plotter.NewLine(plotter.XYs{{X: p.X.Min, Y: capY}, {X: p.X.Max, Y: capY}})
			if err != nil {
				return nil, err
			}
			l.Color, l.Dashes = color.Gray{Y: 0x80}, []vg.Length{vg.Points(4), vg.Points(3)}
			p.Add(l)
		}
		step := 0.04 * yhi
		failedY = func(i int) float64 { return yhi + step*float64(i+1) }
		p.Y.Min, p.Y.Max = 0, yhi+step*float64(len(st.models)+1)
	} else {
		if math.IsInf(ylo, 1) {
			ylo, yhi = 0.1, 1
		}
		p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, logTicks125{}
		p.Y.Min, p.Y.Max = ylo/1.5, yhi*1.5
		failedY = func(i int) float64 { return yhi * 1.5 * math.Pow(1.3, float64(i+1)) }
		if failures {
			p.Y.Max = failedY(len(st.models))
		}
	}

	for i, m := range st.models {
		var line, oom, failed plotter.XYs
		for _, r := range pn.rows {
			switch {
			case r.Model != m:
			case r.OK() && y(r) > 0:
				line = append(line, plotter.XY{X: pn.x(r), Y: y(r)})
			case r.Status == StatusOOM:
				oom = append(oom, plotter.XY{X: pn.x(r), Y: failedY(i)})
			case !r.OK():
				failed = append(failed, plotter.XY{X: pn.x(r), Y: failedY(i)})
			}
		}
		if len(line) > 0 {
			slices.SortFunc(line, func(a, b plotter.XY) int { return cmp.Compare(a.X, b.X) })
			l, pts, err := plotter.NewLinePoints(line)
			if err != nil {
				return nil, err
			}
			l.Color, pts.Color = st.color(i), st.color(i)
			pts.Shape, pts.Radius = st.glyph(i), vg.Points(3)
			p.Add(l, pts)
		}
		for _, f := range []struct {
			xys   plotter.XYs
			glyph draw.GlyphDrawer
		}{{oom, draw.CrossGlyph{}}, {failed, draw.PlusGlyph{}}} {
			if len(f.xys) == 0 {
				continue
			}
			sc, err := plotter.NewScatter(f.xys)
			if err != nil {
				return nil, err
			}
			sc.Shape, sc.Radius, sc.Color = f.glyph, vg.Points(5), st.color(i)
			p.Add(sc)
		}
	}
	return p, nil
}

// drawFigure draws the header across the top, the plots on a grid
// of aligned panels below it and the legend to their right, and encodes
// the result as PNG.
func drawFigure(rows [][]*plot.Plot, legend plot.Legend, header string, w, h vg.Length) ([]byte, error) {
	c, err := draw.NewFormattedCanvas(w, h, "png")
	if err != nil {
		return nil, err
	}
	dc := draw.New(c)
	headH, legendW := vg.Points(30), 2.2*vg.Inch
	sty := text.Style{Color: color.Black, Font: font.From(plot.DefaultFont, 14), Handler: plot.DefaultTextHandler,
		XAlign: draw.XCenter, YAlign: draw.YTop}
	dc.FillText(sty, vg.Point{X: (w - legendW) / 2, Y: h - vg.Points(8)}, header)

	tiles := draw.Tiles{Rows: len(rows), Cols: len(rows[0]),
		PadTop: vg.Points(6), PadBottom: vg.Points(6), PadLeft: vg.Points(6), PadRight: vg.Points(12),
		PadX: vg.Points(30), PadY: vg.Points(24)}
	canvases := plot.Align(rows, tiles, draw.Crop(dc, 0, -legendW, 0, -headH))
	for i, row := range rows {
		for j, p := range row {
			p.Draw(canvases[i][j])
		}
	}
	legend.Top, legend.Left = true, true
	legend.Draw(draw.Crop(dc, w-legendW, -vg.Points(6), 0, -headH-vg.Points(30)))

	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// valueTicks labels the measured values themselves: the studies' sizes are
// few and chosen, and the default ticks would fall between them.
type valueTicks []float64

func (v valueTicks) Ticks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	for _, x := range v {
		if x >= lo && x <= hi {
			ticks = append(ticks, plot.Tick{Value: x, Label: compactCount(x)})
		}
	}
	return ticks
}

// compactCount writes a count as 500, 1k, 2.5M.
func compactCount(x float64) string {
	for _, u := range []struct {
		div    float64
		suffix string
	}{{1e9, "G"}, {1e6, "M"}, {1e3, "k"}} {
		if x >= u.div {
			return strconv.FormatFloat(x/u.div, 'f', -1, 64) + u.suffix
		}
	}
	return strconv.FormatFloat(x, 'f', -1, 64)
}

// groupDigits writes n with thousands separators: 2,500,604.
func groupDigits(n int) string {
	s := strconv.Itoa(n)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	var b []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			b = append(b, ',')
		}
		b = append(b, s[i])
	}
	if neg {
		return "-" + string(b)
	}
	return string(b)
}

// logTicks125 labels 1, 2 and 5 times the powers of ten in range (every
// digit when that gives fewer than two labels), so that a log axis spanning
// less than a decade still reads.
type logTicks125 struct{}

func (logTicks125) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi > lo) {
		return nil
	}
	collect := func(mults []float64) []plot.Tick {
		var ticks []plot.Tick
		for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
			for _, m := range mults {
				// Parsed from decimal, 3e-1 is the float nearest 0.3 and
				// prints as such; 3·10⁻¹ computed is not.
				x, err := strconv.ParseFloat(fmt.Sprintf("%ge%d", m, int(e)), 64)
				if err == nil && x >= lo && x <= hi {
					ticks = append(ticks, plot.Tick{Value: x, Label: strconv.FormatFloat(x, 'f', -1, 64)})
				}
			}
		}
		return ticks
	}
	ticks := collect([]float64{1, 2, 5})
	if len(ticks) < 2 {
		ticks = collect([]float64{1, 2, 3, 4, 5, 6, 7, 8, 9})
	}
	return ticks
}
