package metrics

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gekc/kg"
	"gekc/models"

	"gorgonia.org/tensor"
)

func TestECE(t *testing.T) {
	const T, F = true, false
	cases := []struct {
		name   string
		probs  []float64
		labels []bool
		bins   int
		ece    float64
		counts map[int]int // non-empty bins; every other bin must be empty
	}{
		{
			// bin 0: p 0.05, f 0; bin 1: p 0.15, f 1; bin 9: p 0.975, f 1.
			name: "three bins, 1.0 in the last", probs: []float64{0.05, 0.15, 0.95, 1}, labels: []bool{F, T, T, T}, bins: 10,
			ece: (0.05 + 0.85 + 0.025) / 3, counts: map[int]int{0: 1, 1: 1, 9: 2},
		},
		{
			// One bin: p 0.25, f 1/3.
			name: "one bin", probs: []float64{0.21, 0.25, 0.29}, labels: []bool{T, F, F}, bins: 10,
			ece: 1.0/3 - 0.25, counts: map[int]int{2: 3},
		},
		{
			name: "perfectly calibrated", probs: []float64{0, 0, 1, 1}, labels: []bool{F, F, T, T}, bins: 10,
			ece: 0, counts: map[int]int{0: 2, 9: 2},
		},
		{
			name: "confidently wrong", probs: []float64{1, 0}, labels: []bool{F, T}, bins: 10,
			ece: 1, counts: map[int]int{0: 1, 9: 1},
		},
		{
			// A bin's lower edge belongs to it: 0.1 is in bin 1, not 0.
			name: "lower edge", probs: []float64{0.1, 0.09}, labels: []bool{T, F}, bins: 10,
			ece: (0.9 + 0.09) / 2, counts: map[int]int{0: 1, 1: 1},
		},
		{
			// bin 0: p 0.4, f 1; bin 1 (0.5 and 0.9): p 0.7, f 0.5.
			name: "two bins", probs: []float64{0.5, 0.4, 0.9}, labels: []bool{F, T, T}, bins: 2,
			ece: (0.6 + 0.2) / 2, counts: map[int]int{0: 1, 1: 2},
		},
		{
			name: "one bin in all", probs: []float64{0.2, 0.9, 1}, labels: []bool{T, F, T}, bins: 1,
			ece: math.Abs(2.1/3 - 2.0/3), counts: map[int]int{0: 3},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := ECE(c.probs, c.labels, c.bins)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(r.ECE-c.ece) > 1e-12 {
				t.Errorf("ECE %v, want %v", r.ECE, c.ece)
			}
			if len(r.Bins) != c.bins {
				t.Fatalf("%d bins, want %d", len(r.Bins), c.bins)
			}
			for j, b := range r.Bins {
				if want := float64(j) / float64(c.bins); math.Abs(b.Lo-want) > 1e-15 || math.Abs(b.Hi-want-1/float64(c.bins)) > 1e-15 {
					t.Errorf("bin %d is [%v, %v)", j, b.Lo, b.Hi)
				}
				if b.Count != c.counts[j] {
					t.Errorf("bin %d holds %d, want %d", j, b.Count, c.counts[j])
				}
				empty := b.Count == 0
				if empty != math.IsNaN(b.MeanProb) || empty != math.IsNaN(b.Frequency) {
					t.Errorf("bin %d (count %d): mean %v, frequency %v", j, b.Count, b.MeanProb, b.Frequency)
				}
				if !empty && (b.MeanProb < b.Lo || b.MeanProb > b.Hi) {
					t.Errorf("bin %d [%v, %v): mean probability %v outside it", j, b.Lo, b.Hi, b.MeanProb)
				}
			}
		})
	}
}

func TestECEErrors(t *testing.T) {
	cases := []struct {
		name   string
		probs  []float64
		labels []bool
		bins   int
	}{
		{"NaN", []float64{0.5, math.NaN()}, []bool{true, false}, 10},
		{"above 1", []float64{1.0000001}, []bool{true}, 10},
		{"negative", []float64{-0.1}, []bool{true}, 10},
		{"length mismatch", []float64{0.5}, []bool{true, false}, 10},
		{"empty", nil, nil, 10},
		{"no bins", []float64{0.5}, []bool{true}, 0},
	}
	for _, c := range cases {
		if _, err := ECE(c.probs, c.labels, c.bins); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
}

func TestLogistic(t *testing.T) {
	in := []float64{0, math.Log(3), -math.Log(3), 800, -800, math.Inf(1), math.Inf(-1)}
	want := []float64{0.5, 0.75, 0.25, 1, 0, 1, 0}
	got := Logistic(in)
	for i := range in {
		if math.Abs(got[i]-want[i]) > 1e-15 {
			t.Errorf("σ(%v) = %v, want %v", in[i], got[i], want[i])
		}
	}
}

func TestMinMax(t *testing.T) {
	got, err := MinMax([]float64{-3, -2, 0, 1, 2, 5, math.Inf(-1), math.Inf(1)}, -2, 2)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{0, 0, 0.5, 0.75, 1, 1, 0, 1}
	if !slices.Equal(got, want) {
		t.Errorf("MinMax = %v, want %v", got, want)
	}
	if got, _ := MinMax([]float64{math.NaN()}, 0, 1); !math.IsNaN(got[0]) {
		t.Errorf("NaN maps to %v", got[0])
	}
	for _, r := range [][2]float64{{1, 1}, {2, 1}, {math.Inf(-1), 0}, {0, math.Inf(1)}, {math.NaN(), 1}} {
		if _, err := MinMax([]float64{0}, r[0], r[1]); err == nil {
			t.Errorf("range %v accepted", r)
		}
	}
}

func TestLogScoreRange(t *testing.T) {
	lo, hi, err := LogScoreRange([]float64{math.Inf(-1), 3, math.NaN(), -1, math.Inf(1), 0.5})
	if err != nil || lo != -1 || hi != 3 {
		t.Errorf("range [%v, %v], %v; want [-1, 3]", lo, hi, err)
	}
	if _, _, err := LogScoreRange([]float64{math.Inf(-1), math.NaN()}); err == nil {
		t.Error("no finite value accepted")
	}
}

// randomTriples draws n triples over the given numbers of entities and
// relations.
func randomTriples(rng *rand.Rand, n, entities, relations int) []kg.Triple {
	out := make([]kg.Triple, n)
	for i := range out {
		out[i] = kg.Triple{S: int32(rng.IntN(entities)), R: int32(rng.IntN(relations)), O: int32(rng.IntN(entities))}
	}
	return out
}

func TestHardNegatives(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	// Few entities, so that many (s, r) have several known objects and
	// some have every candidate known.
	train := randomTriples(rng, 300, 25, 6)
	test := append(randomTriples(rng, 200, 25, 6), kg.Triple{S: 0, R: 9, O: 1}) // relation 9 is not in train
	filter := kg.NewFilter(train, test)
	seen := map[int32]map[int32]bool{}
	for _, tr := range train {
		if seen[tr.R] == nil {
			seen[tr.R] = map[int32]bool{}
		}
		seen[tr.R][tr.O] = true
	}
	neg := HardNegatives(test, train, filter, rand.New(rand.NewPCG(7, 7)))
	if len(neg) == 0 || len(neg) >= len(test) {
		t.Fatalf("%d negatives for %d test triples", len(neg), len(test))
	}
	j := 0 // the negatives follow the test triples they perturb, in order
	for _, n := range neg {
		if filter.Contains(n) {
			t.Errorf("negative %v is a known triple", n)
		}
		if !seen[n.R][n.O] {
			t.Errorf("negative %v: entity %d is never an object of relation %d in train", n, n.O, n.R)
		}
		for j < len(test) && (test[j].S != n.S || test[j].R != n.R) {
			if hasCandidate(test[j], seen, filter) {
				t.Errorf("test triple %v has a candidate but was skipped", test[j])
			}
			j++
		}
		if j == len(test) {
			t.Fatalf("negative %v does not follow a test triple with its subject and relation", n)
		}
		j++
	}
	again := HardNegatives(test, train, filter, rand.New(rand.NewPCG(7, 7)))
	if !slices.Equal(neg, again) {
		t.Error("the same seed gave different negatives")
	}
}

func hasCandidate(t kg.Triple, seen map[int32]map[int32]bool, filter *kg.Filter) bool {
	for o := range seen[t.R] {
		if !filter.Contains(kg.Triple{S: t.S, R: t.R, O: o}) {
			return true
		}
	}
	return false
}

func TestHardNegativesSkipsAndDrawsUniformly(t *testing.T) {
	// Relation 0 has objects 0..99 in train (subject 1); (0, 0, o) is known
	// for every o but 42, so 42 is the only candidate for subject 0:
	// rejection sampling mostly fails and the exact fallback must find it.
	// Relation 1 has objects {1, 2}, both known for subject 0: skipped.
	// For subject 2 and relation 0 the known objects are {0, 3, 5}: the
	// other 97 must be drawn uniformly.
	var train, known []kg.Triple
	for o := int32(0); o < 100; o++ {
		train = append(train, kg.Triple{S: 1, R: 0, O: o})
		if o != 42 {
			known = append(known, kg.Triple{S: 0, R: 0, O: o})
		}
	}
	train = append(train, kg.Triple{S: 1, R: 1, O: 1}, kg.Triple{S: 1, R: 1, O: 2})
	known = append(known, kg.Triple{S: 0, R: 1, O: 1}, kg.Triple{S: 0, R: 1, O: 2},
		kg.Triple{S: 2, R: 0, O: 0}, kg.Triple{S: 2, R: 0, O: 3}, kg.Triple{S: 2, R: 0, O: 5})
	filter := kg.NewFilter(train, known)

	var test []kg.Triple
	for range 200 {
		test = append(test, kg.Triple{S: 0, R: 0, O: 7}, kg.Triple{S: 0, R: 1, O: 1})
	}
	const draws = 97 * 200
	for range draws {
		test = append(test, kg.Triple{S: 2, R: 0, O: 3})
	}
	neg := HardNegatives(test, train, filter, rand.New(rand.NewPCG(3, 4)))
	if len(neg) != 200+draws {
		t.Fatalf("%d negatives, want %d", len(neg), 200+draws)
	}
	counts := map[int32]int{}
	for _, n := range neg {
		switch n.S {
		case 0:
			if n.R != 0 || n.O != 42 {
				t.Fatalf("negative %v, want (0, 0, 42)", n)
			}
		case 2:
			counts[n.O]++
		}
	}
	if len(counts) != 97 {
		t.Errorf("%d distinct objects drawn for subject 2, want 97", len(counts))
	}
	for _, o := range []int32{0, 3, 5} {
		if counts[o] != 0 {
			t.Errorf("known object %d drawn %d times", o, counts[o])
		}
	}
	// 200 expected per object, standard deviation about 14: 6 deviations.
	for o, c := range counts {
		if c < 200-85 || c > 200+85 {
			t.Errorf("object %d drawn %d times, expected about 200", o, c)
		}
	}
}

func TestEvaluatorCalibration(t *testing.T) {
	sz := models.Sizes{Entities: 12, Relations: 3, Rank: 4}
	rng := rand.New(rand.NewPCG(5, 6))
	train := randomTriples(rng, 80, sz.Entities, sz.Relations)
	test := randomTriples(rng, 30, sz.Entities, sz.Relations)
	filter := kg.NewFilter(train, test)
	neg := HardNegatives(test, train, filter, rng)
	for _, name := range []string{"complex", "cp2", "complex+"} {
		m, err := models.New(name, sz, models.Options{Seed: 1, Dtype: tensor.Float64, InitScale: 0.5})
		if err != nil {
			t.Fatal(err)
		}
		ev, err := NewEvaluator(m, 7) // not a divisor of any set: exercises padding
		if err != nil {
			t.Fatal(err)
		}
		c, err := ev.Calibration(test, neg, train)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, tr := range train {
			s := logScore(t, ev, tr)
			lo, hi = min(lo, s), max(hi, s)
		}
		if c.TrainMin != lo || c.TrainMax != hi {
			t.Errorf("%s: training range [%v, %v], want [%v, %v]", name, c.TrainMin, c.TrainMax, lo, hi)
		}
		if c.Positives != len(test) || c.Negatives != len(neg) || c.NaN != 0 {
			t.Errorf("%s: %d positives, %d negatives, %d NaN; want %d, %d, 0", name, c.Positives, c.Negatives, c.NaN, len(test), len(neg))
		}
		// Each triple's probability under each mapping, from its own
		// log-score, must land in a bin whose counts and label fractions
		// add up to what Calibration reports.
		for _, mp := range []struct {
			name string
			r    Reliability
			prob func(float64) float64
		}{
			{"logistic", c.Logistic, func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }},
			{"min-max", c.MinMax, func(x float64) float64 { return min(max((x-lo)/(hi-lo), 0), 1) }},
		} {
			count := make([]int, CalibrationBins)
			pos := make([]int, CalibrationBins)
			sum := make([]float64, CalibrationBins)
			add := func(ts []kg.Triple, label bool) {
				for _, tr := range ts {
					p := mp.prob(logScore(t, ev, tr))
					j := min(int(p*CalibrationBins), CalibrationBins-1)
					count[j]++
					sum[j] += p
					if label {
						pos[j]++
					}
				}
			}
			add(test, true)
			add(neg, false)
			var ece float64
			nonEmpty := 0
			for j, b := range mp.r.Bins {
				if b.Count != count[j] {
					t.Errorf("%s %s: bin %d holds %d, want %d", name, mp.name, j, b.Count, count[j])
					continue
				}
				if count[j] > 0 {
					f := float64(pos[j]) / float64(count[j])
					if math.Abs(b.Frequency-f) > 1e-12 {
						t.Errorf("%s %s: bin %d frequency %v, want %v", name, mp.name, j, b.Frequency, f)
					}
					ece += math.Abs(sum[j]/float64(count[j]) - f)
					nonEmpty++
				}
			}
			if ece /= float64(nonEmpty); math.Abs(mp.r.ECE-ece) > 1e-9 {
				t.Errorf("%s %s: ECE %v, want %v", name, mp.name, mp.r.ECE, ece)
			}
		}
	}
}

func TestEvaluatorCalibrationErrors(t *testing.T) {
	m, err := models.New("cp2", models.Sizes{Entities: 4, Relations: 2, Rank: 2}, models.Options{Seed: 1, Dtype: tensor.Float64})
	if err != nil {
		t.Fatal(err)
	}
	ev, err := NewEvaluator(m, 4)
	if err != nil {
		t.Fatal(err)
	}
	ts := []kg.Triple{{S: 0, R: 0, O: 1}, {S: 1, R: 1, O: 2}}
	if _, err := ev.Calibration(nil, ts, ts); err == nil {
		t.Error("no true triples accepted")
	}
	if _, err := ev.Calibration(ts, ts, nil); err == nil {
		t.Error("no training triples accepted")
	}
	if _, err := ev.Calibration(ts, nil, ts[:1]); err == nil {
		t.Error("a single training log-score (an empty min-max range) accepted")
	}
}

func logScore(t *testing.T, ev *Evaluator, tr kg.Triple) float64 {
	t.Helper()
	var v float64
	if err := ev.LogScores([]kg.Triple{tr}, func(_ int, s float64) { v = s }); err != nil {
		t.Fatal(err)
	}
	return v
}
