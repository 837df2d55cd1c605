package synth

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strings"

	"gekc/kg"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// Comparison sets a surrogate's statistics beside those of the graph its
// model was trained on. Both use the original's ids.
type Comparison struct {
	Original, Surrogate []kg.Triple // the training splits compared
	// Shares of the surrogate's triples (all splits) that are in the
	// original's train, valid or test split, or in none of them.
	InTrain, InValid, InTest, Novel float64
	// Consistent is the share of surrogate triples the original's schema
	// allows; NaN without a schema.
	Consistent float64
	// RelationTV is the total variation distance between the two
	// relation frequency distributions; DegreeKS the Kolmogorov–Smirnov
	// distances between the subject and object degree distributions (over
	// entities with degree ≥ 1).
	RelationTV               float64
	SubjectKS, ObjectKS      float64
	relations                int
	origRel, surRel          []float64
	origS, surS, origO, surO []int // degrees of entities with at least one triple, sorted
}

// Compare computes the statistics of a surrogate drawn from a model of
// original (its train, valid and test splits against the original's).
func Compare(original *kg.Dataset, d *Sampled) *Comparison {
	known := map[kg.Triple]int{}
	for i, ts := range [][]kg.Triple{original.Train, original.Valid, original.Test} {
		for _, t := range ts {
			known[t] = i + 1
		}
	}
	c := &Comparison{Original: original.Train, Surrogate: d.Train, relations: original.Relations.Len(), Consistent: math.NaN()}
	all := slices.Concat(d.Train, d.Valid, d.Test)
	var in [4]float64
	consistent := 0
	for _, t := range all {
		in[known[t]]++
		if original.Schema != nil && original.Schema.Consistent(t) {
			consistent++
		}
	}
	n := float64(max(len(all), 1))
	c.Novel, c.InTrain, c.InValid, c.InTest = in[0]/n, in[1]/n, in[2]/n, in[3]/n
	if original.Schema != nil {
		c.Consistent = float64(consistent) / n
	}
	ne := original.Entities.Len()
	c.origRel, c.origS, c.origO = profile(original.Train, c.relations, ne)
	c.surRel, c.surS, c.surO = profile(d.Train, c.relations, ne)
	for r := range c.origRel {
		c.RelationTV += math.Abs(c.origRel[r]-c.surRel[r]) / 2
	}
	c.SubjectKS, c.ObjectKS = ks(c.origS, c.surS), ks(c.origO, c.surO)
	return c
}

// profile returns relation frequencies and the sorted positive subject and
// object degrees of triples.
func profile(ts []kg.Triple, relations, entities int) (rel []float64, subj, obj []int) {
	rel = make([]float64, relations)
	ds, do := make([]int, entities), make([]int, entities)
	for _, t := range ts {
		rel[t.R]++
		ds[t.S]++
		do[t.O]++
	}
	for r := range rel {
		rel[r] /= float64(max(len(ts), 1))
	}
	positive := func(d []int) []int {
		var out []int
		for _, x := range d {
			if x > 0 {
				out = append(out, x)
			}
		}
		slices.Sort(out)
		return out
	}
	return rel, positive(ds), positive(do)
}

// ks is the Kolmogorov–Smirnov distance between two sorted samples.
func ks(a, b []int) float64 {
	if len(a) == 0 || len(b) == 0 {
		return math.NaN()
	}
	var d float64
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		var x int
		switch {
		case j == len(b) || (i < len(a) && a[i] <= b[j]):
			x = a[i]
		default:
			x = b[j]
		}
		for i < len(a) && a[i] == x {
			i++
		}
		for j < len(b) && b[j] == x {
			j++
		}
		d = max(d, math.Abs(float64(i)/float64(len(a))-float64(j)/float64(len(b))))
	}
	return d
}

// Markdown returns the comparison as a table.
func (c *Comparison) Markdown() string {
	var b strings.Builder
	row := func(name, orig, sur string) { fmt.Fprintf(&b, "| %s | %s | %s |\n", name, orig, sur) }
	b.WriteString("| statistic | original (train) | surrogate (train) |\n| --- | --- | --- |\n")
	row("triples", fmt.Sprint(len(c.Original)), fmt.Sprint(len(c.Surrogate)))
	row("subjects with a triple", fmt.Sprint(len(c.origS)), fmt.Sprint(len(c.surS)))
	row("objects with a triple", fmt.Sprint(len(c.origO)), fmt.Sprint(len(c.surO)))
	row("max subject degree", fmt.Sprint(last(c.origS)), fmt.Sprint(last(c.surS)))
	row("max object degree", fmt.Sprint(last(c.origO)), fmt.Sprint(last(c.surO)))
	row("median subject degree", fmt.Sprint(median(c.origS)), fmt.Sprint(median(c.surS)))
	row("median object degree", fmt.Sprint(median(c.origO)), fmt.Sprint(median(c.surO)))
	fmt.Fprintf(&b, "\nRelation frequencies: total variation distance %.4f. Degree distributions (entities with a triple): Kolmogorov–Smirnov distance %.4f (subjects), %.4f (objects).\n\n", c.RelationTV, c.SubjectKS, c.ObjectKS)
	fmt.Fprintf(&b, "Of the surrogate's triples (all splits), %.2f%% are in the original's train split, %.2f%% in valid, %.2f%% in test, and %.2f%% in none (novel).", 100*c.InTrain, 100*c.InValid, 100*c.InTest, 100*c.Novel)
	if !math.IsNaN(c.Consistent) {
		fmt.Fprintf(&b, " %.2f%% satisfy the original's schema.", 100*c.Consistent)
	}
	b.WriteString("\n")
	return b.String()
}

func last(xs []int) int {
	if len(xs) == 0 {
		return 0
	}
	return xs[len(xs)-1]
}

func median(xs []int) int {
	if len(xs) == 0 {
		return 0
	}
	return xs[len(xs)/2]
}

// DegreePlot returns a PNG of the subject and object degree distributions
// (complementary CDFs, log-log), original beside surrogate.
func (c *Comparison) DegreePlot(title string) ([]byte, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "degree k"
	p.Y.Label.Text = "share of entities with degree ≥ k"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = plot.LogTicks{Prec: -1}, plot.LogTicks{Prec: -1}
	for _, s := range []struct {
		name string
		deg  []int
		col  color.Color
		dash bool
	}{{"original, subjects", c.origS, color.RGBA{0x1f, 0x77, 0xb4, 0xff}, false},
		{"surrogate, subjects", c.surS, color.RGBA{0x1f, 0x77, 0xb4, 0xff}, true},
		{"original, objects", c.origO, color.RGBA{0xff, 0x7f, 0x0e, 0xff}, false},
		{"surrogate, objects", c.surO, color.RGBA{0xff, 0x7f, 0x0e, 0xff}, true}} {
		if len(s.deg) == 0 {
			continue
		}
		var xy plotter.XYs
		for i, d := range s.deg {
			if i == 0 || d != s.deg[i-1] {
				xy = append(xy, plotter.XY{X: float64(d), Y: float64(len(s.deg)-i) / float64(len(s.deg))})
			}
		}
		l, err := plotter.NewLine(xy)
		if err != nil {
			return nil, err
		}
		l.Color, l.Width = s.col, vg.Points(1.5)
		if s.dash {
			l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		}
		p.Add(l)
		p.Legend.Add(s.name, l)
	}
	// A complementary CDF starts near 1 at small degrees and falls, so the
	// bottom left corner is the one no curve crosses.
	p.Legend.Top, p.Legend.Left = false, true
	p.Legend.XOffs, p.Legend.YOffs = vg.Points(10), vg.Points(10)
	w, err := p.WriterTo(6*vg.Inch, 4*vg.Inch, "png")
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
