package metrics

import (
	"math"
	"testing"

	"gekc/kg"
	"gekc/models"

	"gorgonia.org/tensor"
)

func TestRankOf(t *testing.T) {
	nan := math.NaN()
	cases := []struct {
		name     string
		scores   []float64
		target   int
		filtered []int32
		want     [3]float64 // pessimistic, realistic, optimistic
	}{
		{"best", []float64{3, 1, 2}, 0, nil, [3]float64{1, 1, 1}},
		{"third", []float64{3, 1, 2}, 1, nil, [3]float64{3, 3, 3}},
		{"ties", []float64{2, 2, 2, 1}, 1, nil, [3]float64{3, 2, 1}},
		{"all equal", []float64{0, 0, 0, 0}, 2, nil, [3]float64{4, 2.5, 1}},
		{"filtered higher", []float64{5, 4, 3}, 2, []int32{0, 2}, [3]float64{2, 2, 2}},
		{"filtered tie", []float64{3, 3, 3}, 0, []int32{0, 1}, [3]float64{2, 1.5, 1}},
		{"nan candidate never outranks", []float64{nan, 1, 2}, 1, nil, [3]float64{2, 2, 2}},
		{"nan target ranks last", []float64{nan, 1, 2}, 0, []int32{2}, [3]float64{2, 2, 2}},
		{"-inf target ties -inf candidates", []float64{inf(-1), inf(-1), 0, inf(-1)}, 0, nil, [3]float64{4, 3, 2}},
		{"-inf target, ties filtered", []float64{inf(-1), inf(-1), 0, inf(-1)}, 0, []int32{1, 3}, [3]float64{2, 2, 2}},
		{"+inf target ties +inf", []float64{inf(1), 5, inf(1)}, 2, nil, [3]float64{2, 1.5, 1}},
		{"no candidates but the target", []float64{7}, 0, nil, [3]float64{1, 1, 1}},
		{"every other candidate filtered", []float64{1, 9, 9}, 0, []int32{1, 2}, [3]float64{1, 1, 1}},
	}
	for _, c := range cases {
		for p := Pessimistic; p <= Optimistic; p++ {
			if got := rankOf(c.scores, c.target, c.filtered, p); got != c.want[p] {
				t.Errorf("%s (%v): rank %v, want %v", c.name, p, got, c.want[p])
			}
			f32 := make([]float32, len(c.scores))
			for i, v := range c.scores {
				f32[i] = float32(v)
			}
			if got := rankOf(f32, c.target, c.filtered, p); got != c.want[p] {
				t.Errorf("%s (%v, float32): rank %v, want %v", c.name, p, got, c.want[p])
			}
		}
	}
}

func inf(sign int) float64 { return math.Inf(sign) }

// OGB's rank (1 + #greater + #equal/2) and Counts' ranks at the edges:
// exact ties, infinite and NaN scores, no negatives.
func TestOGBRankAndCounts(t *testing.T) {
	nan := math.NaN()
	for _, c := range []struct {
		name string
		pos  float64
		negs []float64
		want float64
	}{
		{"no negatives", 0.5, nil, 1},
		{"all below", 3, []float64{1, 2}, 1},
		{"exact ties count half", 2, []float64{2, 2, 1, 3}, 3},
		{"-inf ties -inf", inf(-1), []float64{inf(-1), 0}, 2.5},
		{"+inf above every finite", inf(1), []float64{1e30, inf(1)}, 1.5},
		{"nan target below all", nan, []float64{1, 2, nan}, 4},
		{"nan negative never above", 0, []float64{nan, nan}, 1},
	} {
		if got := ogbRank(c.pos, len(c.negs), func(j int) float64 { return c.negs[j] }); got != c.want {
			t.Errorf("%s: ogbRank %v, want %v", c.name, got, c.want)
		}
	}
	for _, c := range []struct {
		c    Counts
		want [3]float64
	}{{Counts{}, [3]float64{1, 1, 1}}, {Counts{Greater: 2, Equal: 3}, [3]float64{6, 4.5, 3}}, {Counts{Equal: 1}, [3]float64{2, 1.5, 1}}} {
		for p := Pessimistic; p <= Optimistic; p++ {
			if got := c.c.Rank(p); got != c.want[p] {
				t.Errorf("%+v (%v): rank %v, want %v", c.c, p, got, c.want[p])
			}
		}
	}
}

// Hits@k counts rank k itself and not a realistic rank just above it; an
// empty ranking has no MRR.
func TestSummaryEdges(t *testing.T) {
	r := summarise([]float64{3, 3.5}, []float64{1}, []int{3}, 0)
	if r.Hits[3] != 2.0/3 {
		t.Errorf("hits@3 of ranks 3, 3.5, 1: %v, want 2/3", r.Hits[3])
	}
	if r.MRRSubject != (1.0/3+1/3.5)/2 || r.MRRObject != 1 {
		t.Errorf("per-side MRR %v, %v", r.MRRSubject, r.MRRObject)
	}
	if e := summarise(nil, nil, []int{1}, 0); !math.IsNaN(e.MRR) || e.N != 0 {
		t.Errorf("empty ranking: MRR %v, N %d; want NaN, 0", e.MRR, e.N)
	}
}

func TestParseTiePolicy(t *testing.T) {
	for _, s := range []string{"pessimistic", "Realistic", "OPTIMISTIC"} {
		if _, err := ParseTiePolicy(s); err != nil {
			t.Error(err)
		}
	}
	if _, err := ParseTiePolicy("random"); err == nil {
		t.Error("unknown policy accepted")
	}
}

func TestSummarise(t *testing.T) {
	r := summarise([]float64{1, 2}, []float64{4, 10}, []int{1, 3, 10}, 0)
	if want := (1 + 0.5 + 0.25 + 0.1) / 4; math.Abs(r.MRR-want) > 1e-15 {
		t.Errorf("MRR %v, want %v", r.MRR, want)
	}
	if r.Hits[1] != 0.25 || r.Hits[3] != 0.5 || r.Hits[10] != 1 {
		t.Errorf("hits %v", r.Hits)
	}
}

// The evaluator's ranks must equal ranks computed from each candidate
// triple's own log-score, filtered by the known triples.
func TestEvaluatorRanksMatchLogScores(t *testing.T) {
	sz := models.Sizes{Entities: 9, Relations: 3, Rank: 4}
	for _, name := range []string{"complex", "cp2", "complex+"} {
		m, err := models.New(name, sz, models.Options{Seed: 1, Dtype: tensor.Float64, InitScale: 0.5})
		if err != nil {
			t.Fatal(err)
		}
		test := []kg.Triple{{S: 0, R: 1, O: 2}, {S: 3, R: 0, O: 3}, {S: 8, R: 2, O: 1}}
		known := append([]kg.Triple{{S: 0, R: 1, O: 5}, {S: 7, R: 0, O: 3}}, test...)
		filter := kg.NewFilter(known)
		ev, err := NewEvaluator(m, 2) // batch smaller than the test set: exercises padding
		if err != nil {
			t.Fatal(err)
		}
		got, err := ev.Rank(test, filter, Pessimistic, []int{1})
		if err != nil {
			t.Fatal(err)
		}
		score := func(tr kg.Triple) float64 {
			var v float64
			if err := ev.LogScores([]kg.Triple{tr}, func(_ int, s float64) { v = s }); err != nil {
				t.Fatal(err)
			}
			return v
		}
		for i, tr := range test {
			for _, side := range []models.Var{models.Subject, models.Object} {
				target := score(tr)
				rank := 1.0
				for e := int32(0); e < int32(sz.Entities); e++ {
					alt := tr
					if side == models.Object {
						alt.O = e
					} else {
						alt.S = e
					}
					if alt == tr || filter.Contains(alt) {
						continue
					}
					if score(alt) >= target-1e-12 {
						rank++
					}
				}
				want := rank
				g := got.ObjectRanks[i]
				if side == models.Subject {
					g = got.SubjectRanks[i]
				}
				if g != want {
					t.Errorf("%s: %v rank of %v = %v, want %v", name, side, tr, g, want)
				}
			}
		}
	}
}
