package metrics

import (
	"math"
	"testing"

	"gekc/internal/logmath"
	"gekc/kg"
	"gekc/models"

	"gonum.org/v1/gonum/mat"
	"gorgonia.org/tensor"
)

// allTriples enumerates E×R×E in the order (s·|R| + r)·|E| + o.
func allTriples(sz models.Sizes) []kg.Triple {
	var out []kg.Triple
	for s := range sz.Entities {
		for r := range sz.Relations {
			for o := range sz.Entities {
				out = append(out, kg.Triple{S: int32(s), R: int32(r), O: int32(o)})
			}
		}
	}
	return out
}

// The average log-likelihood is the mean of log φ − log Z, log Z summed by
// enumerating every triple's log-score.
func TestLogLikelihoodByEnumeration(t *testing.T) {
	sz := models.Sizes{Entities: 5, Relations: 2, Rank: 3}
	test := []kg.Triple{{S: 0, R: 1, O: 2}, {S: 4, R: 0, O: 4}, {S: 3, R: 1, O: 0}}
	for _, c := range []struct {
		name  string
		dtype tensor.Dtype
		tol   float64
	}{{"cp2", tensor.Float64, 1e-12}, {"complex+", tensor.Float64, 1e-12}, {"complex2", tensor.Float32, 1e-5}} {
		m, err := models.New(c.name, sz, models.Options{Seed: 2, Dtype: c.dtype, InitScale: 0.7})
		if err != nil {
			t.Fatal(err)
		}
		ev, err := NewEvaluator(m, 4)
		if err != nil {
			t.Fatal(err)
		}
		all := allTriples(sz)
		ls := make([]float64, len(all))
		if err := ev.LogScores(all, func(i int, v float64) { ls[i] = v }); err != nil {
			t.Fatal(err)
		}
		logZ := logmath.LogSumExp(ls)
		if got, err := ev.LogPartition(); err != nil || !(math.Abs(got-logZ) <= c.tol*math.Max(1, math.Abs(logZ))) {
			t.Errorf("%s: log Z = %v (%v), enumeration %v", c.name, got, err, logZ)
		}
		lp, err := ev.LogProbs(test)
		if err != nil {
			t.Fatal(err)
		}
		var mean float64
		for i, tr := range test {
			want := ls[(int(tr.S)*sz.Relations+int(tr.R))*sz.Entities+int(tr.O)] - logZ
			if !(math.Abs(lp[i]-want) <= c.tol*math.Max(1, math.Abs(want))) {
				t.Errorf("%s: log p%v = %v, want %v", c.name, tr, lp[i], want)
			}
			mean += want / float64(len(test))
		}
		if ll, err := ev.LogLikelihood(test); err != nil || !(math.Abs(ll-mean) <= c.tol*math.Max(1, math.Abs(mean))) {
			t.Errorf("%s: average log-likelihood %v (%v), want %v", c.name, ll, err, mean)
		}
	}
}

// Filtered ranks of both sides, with known triples that outrank the true
// answer on each side: the filter must be read by (r, o) for subjects and
// by (s, r) for objects.
func TestRankFiltersEachSide(t *testing.T) {
	sz := models.Sizes{Entities: 6, Relations: 2, Rank: 3}
	m, err := models.New("complex", sz, models.Options{Seed: 4, Dtype: tensor.Float64, InitScale: 0.8})
	if err != nil {
		t.Fatal(err)
	}
	ev, err := NewEvaluator(m, 3)
	if err != nil {
		t.Fatal(err)
	}
	all := allTriples(sz)
	ls := make([]float64, len(all))
	if err := ev.LogScores(all, func(i int, v float64) { ls[i] = v }); err != nil {
		t.Fatal(err)
	}
	score := func(tr kg.Triple) float64 {
		return ls[(int(tr.S)*sz.Relations+int(tr.R))*sz.Entities+int(tr.O)]
	}
	var known, test []kg.Triple
	for _, tr := range all {
		if (tr.S+2*tr.O+tr.R)%3 != 0 {
			known = append(known, tr) // two thirds of all triples
		}
	}
	for i := 0; i < len(known); i += 5 {
		test = append(test, known[i])
	}
	isKnown := map[kg.Triple]bool{}
	for _, tr := range known {
		isKnown[tr] = true
	}
	rank := func(tr kg.Triple, side models.Var, filtered bool) float64 {
		r := 1.0
		for e := int32(0); e < int32(sz.Entities); e++ {
			alt := tr
			if side == models.Subject {
				alt.S = e
			} else {
				alt.O = e
			}
			if alt != tr && !(filtered && isKnown[alt]) && score(alt) >= score(tr) {
				r++
			}
		}
		return r
	}
	got, err := ev.Rank(test, kg.NewFilter(known), Pessimistic, []int{1})
	if err != nil {
		t.Fatal(err)
	}
	matters := map[models.Var]int{}
	for i, tr := range test {
		for _, side := range []models.Var{models.Subject, models.Object} {
			g := got.ObjectRanks[i]
			if side == models.Subject {
				g = got.SubjectRanks[i]
			}
			if want := rank(tr, side, true); g != want {
				t.Errorf("%v %v rank %v, want %v", tr, side, g, want)
			}
			if rank(tr, side, false) != rank(tr, side, true) {
				matters[side]++
			}
		}
	}
	if matters[models.Subject] == 0 || matters[models.Object] == 0 {
		t.Fatalf("the filter changes %d subject and %d object ranks: the test cannot tell a misread filter", matters[models.Subject], matters[models.Object])
	}
}

// A true answer whose score overflows to +Inf counts as non-finite on
// each side, in float32 as in float64.
func TestRankCountsInfiniteScores(t *testing.T) {
	sz := models.Sizes{Entities: 4, Relations: 1, Rank: 2}
	for _, c := range []struct {
		dtype tensor.Dtype
		huge  float64
	}{{tensor.Float32, 3e38}, {tensor.Float64, 1.5e308}} {
		m, err := models.New("cp", sz, models.Options{Seed: 1, Dtype: c.dtype})
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range m.ParamNames() {
			switch d := m.Param(n).Data().(type) {
			case []float32:
				for i := range d {
					d[i] = 1
				}
			case []float64:
				for i := range d {
					d[i] = 1
				}
			}
		}
		// Subject 0's row: φ(0, r, o) = 2·huge overflows.
		switch d := m.Param("subject").Data().(type) {
		case []float32:
			d[0], d[1] = float32(c.huge), float32(c.huge)
		case []float64:
			d[0], d[1] = c.huge, c.huge
		}
		ev, err := NewEvaluator(m, 2)
		if err != nil {
			t.Fatal(err)
		}
		r, err := ev.Rank([]kg.Triple{{S: 0, R: 0, O: 1}, {S: 2, R: 0, O: 3}}, kg.NewFilter(nil), Pessimistic, []int{1})
		if err != nil {
			t.Fatal(err)
		}
		if r.NonFinite != 2 {
			t.Errorf("%v: %d non-finite true scores, want 2 (both sides of the first triple)", c.dtype, r.NonFinite)
		}
	}
}

// OGB's tie rule on exact ties: a negative list holding the true entity
// itself (twice) ties with it twice, each counting half.
func TestRankAgainstExactTies(t *testing.T) {
	sz := models.Sizes{Entities: 5, Relations: 1, Rank: 2}
	m := mustModel(t, "cp2", sz)
	ev, err := NewEvaluator(m, 2)
	if err != nil {
		t.Fatal(err)
	}
	tr := kg.Triple{S: 1, R: 0, O: 3}
	r, err := ev.RankAgainst([]kg.Triple{tr}, [][]int32{{1, 1}}, [][]int32{{3}}, []int{1})
	if err != nil {
		t.Fatal(err)
	}
	if r.SubjectRanks[0] != 2 || r.ObjectRanks[0] != 1.5 {
		t.Errorf("ranks with exact ties: subject %v, object %v; want 2 and 1.5", r.SubjectRanks[0], r.ObjectRanks[0])
	}
}

// ComplEx's triple features written out for one triple: the 4d product
// units re_s·re_r·re_o, im_s·re_r·im_o, re_s·im_r·im_o, im_s·im_r·re_o,
// L2-normalised.
func TestComplExFeaturesByHand(t *testing.T) {
	sz := models.Sizes{Entities: 2, Relations: 1, Rank: 2}
	m := mustModel(t, "complex", sz)
	// Rows are [re | im].
	copy(m.Param("entity").Data().([]float64), []float64{1, 2, 3, 4, 5, 6, 7, 8})
	copy(m.Param("relation").Data().([]float64), []float64{0.5, -1, 2, 0.25})
	psi, err := ProductUnitFeatures(m)
	if err != nil {
		t.Fatal(err)
	}
	s := [2][2]float64{{1, 2}, {3, 4}} // [re, im][j] of entity 0
	o := [2][2]float64{{5, 6}, {7, 8}} // entity 1
	r := [2][2]float64{{0.5, -1}, {2, 0.25}}
	var want []float64
	for _, u := range [][3]int{{0, 0, 0}, {1, 0, 1}, {0, 1, 1}, {1, 1, 0}} {
		for j := range 2 {
			want = append(want, s[u[0]][j]*r[u[1]][j]*o[u[2]][j])
		}
	}
	var norm float64
	for _, v := range want {
		norm += v * v
	}
	for i := range want {
		want[i] /= math.Sqrt(norm)
	}
	got := psi([]kg.Triple{{S: 0, R: 0, O: 1}})
	if !mat.EqualApprox(got, mat.NewDense(1, len(want), want), 1e-12) {
		t.Errorf("features %v, want %v", mat.Formatted(got), want)
	}
}
