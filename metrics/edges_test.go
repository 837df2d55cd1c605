package metrics

import (
	"math"
	"math/rand/v2"
	"testing"

	"gekc/kg"
	"gekc/models"

	"gorgonia.org/tensor"
)

// Edges the mutation pass found unguarded.

func TestNewEvaluatorRejectsBatchSize(t *testing.T) {
	m, err := models.New("cp2", models.Sizes{Entities: 3, Relations: 1, Rank: 2}, models.Options{Dtype: tensor.Float64})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []int{0, -1} {
		if _, err := NewEvaluator(m, b); err == nil {
			t.Errorf("batch size %d accepted", b)
		}
	}
}

// One finite log-score is a range of one point, not "no finite log-score".
func TestLogScoreRangeOfOne(t *testing.T) {
	lo, hi, err := LogScoreRange([]float64{math.NaN(), 2.5, math.Inf(1)})
	if err != nil || lo != 2.5 || hi != 2.5 {
		t.Errorf("range [%v, %v], %v; want [2.5, 2.5]", lo, hi, err)
	}
}

// Empty bins neither count nor carry numbers; the ECE averages the
// non-empty ones.
func TestECESkipsEmptyBins(t *testing.T) {
	r, err := ECE([]float64{0.05, 0.95}, []bool{false, true}, 10)
	if err != nil {
		t.Fatal(err)
	}
	if !(math.Abs(r.ECE-0.05) <= 1e-15) {
		t.Errorf("ECE %v, want 0.05", r.ECE)
	}
	if b := r.Bins[5]; b.Count != 0 || !math.IsNaN(b.MeanProb) || !math.IsNaN(b.Frequency) {
		t.Errorf("empty bin %+v", b)
	}
}

// Relation 0 and object 0 are ordinary ids: here the only negative for the
// test triple is (1, 0, 0), object 0 of relation 0 in training.
func TestHardNegativesUseIdZero(t *testing.T) {
	train := []kg.Triple{{S: 2, R: 0, O: 0}, {S: 1, R: 0, O: 3}}
	test := []kg.Triple{{S: 1, R: 0, O: 2}}
	neg := HardNegatives(test, train, kg.NewFilter(train, test), rand.New(rand.NewPCG(1, 1)))
	if len(neg) != 1 || neg[0] != (kg.Triple{S: 1, R: 0, O: 0}) {
		t.Errorf("negatives %v, want [{1 0 0}]", neg)
	}
}

// A relation id one past those seen in training has no candidates: the
// test triple is skipped, not read past the table.
func TestHardNegativesSkipUnseenRelation(t *testing.T) {
	train := []kg.Triple{{S: 2, R: 0, O: 0}}
	test := []kg.Triple{{S: 1, R: 1, O: 2}}
	if neg := HardNegatives(test, train, kg.NewFilter(train, test), rand.New(rand.NewPCG(1, 1))); len(neg) != 0 {
		t.Errorf("negatives %v for a relation never seen in training", neg)
	}
}

// σ of large log-scores saturates instead of dividing infinities.
func TestLogisticSaturates(t *testing.T) {
	p := Logistic([]float64{1000, -1000, 0})
	if p[0] != 1 || p[1] != 0 || p[2] != 0.5 {
		t.Errorf("σ(1000, −1000, 0) = %v", p)
	}
}

// A NaN true score ranks last among the candidates the filter leaves,
// whether or not the filter lists the true entity itself.
func TestNaNTargetRank(t *testing.T) {
	scores := []float64{math.NaN(), 1, 2, 3, 4}
	for _, c := range []struct {
		target   int
		filtered []int32
		want     float64
	}{
		{0, []int32{0, 2}, 4}, // 5 candidates, entity 2 filtered
		{0, []int32{2, 3}, 3}, // two others filtered
		{4, []int32{0, 1}, 3}, // the target, NaN here, is past every filtered id
		{4, []int32{1, 4}, 4}, // the filter lists the target itself
		{2, []int32{}, 5},     // nothing filtered
		{3, []int32{0, 3, 4}, 3},
	} {
		s := append([]float64(nil), scores...)
		s[0], s[c.target] = 0.5, math.NaN()
		if got := rankOf(s, c.target, c.filtered, Pessimistic); got != c.want {
			t.Errorf("NaN target %d, filtered %v: rank %v, want %v", c.target, c.filtered, got, c.want)
		}
	}
}

// Sem@k accepts every k from 1 to |E| and nothing outside.
func TestSemCutOffRange(t *testing.T) {
	sz := models.Sizes{Entities: 9, Relations: 3, Rank: 2}
	ev, err := NewEvaluator(mustModel(t, "cp2", sz), 4)
	if err != nil {
		t.Fatal(err)
	}
	schema := tinySchema(t)
	test := []kg.Triple{{S: 0, R: 0, O: 3}}
	if _, err := ev.Sem(test, schema, []int{1, 9}, nil); err != nil {
		t.Errorf("k = 1 and k = |E|: %v", err)
	}
	for _, ks := range [][]int{{0, 3}, {10}} {
		if _, err := ev.Sem(test, schema, ks, nil); err == nil {
			t.Errorf("cut-offs %v accepted", ks)
		}
	}
}

// KTD's feature rows: those of the triple asked for (subject and relation
// ids other than 0 too), and all zero rather than NaN for zero embeddings;
// KTDDraws accepts subsets as large as the sets and a single draw.
func TestKTDFeatureRowsAndDraws(t *testing.T) {
	sz := models.Sizes{Entities: 3, Relations: 2, Rank: 2}
	m := mustModel(t, "complex", sz)
	// Rows are [re | im], d = 2; entity 2 is zero.
	ent := [][4]float64{{1, 2, 3, 4}, {5, 6, 7, 8}, {}}
	rel := [][4]float64{{0.5, -1, 2, 0.25}, {-3, 1.5, 0.75, 2}}
	for i, row := range ent {
		copy(m.Param("entity").Data().([]float64)[4*i:], row[:])
	}
	for i, row := range rel {
		copy(m.Param("relation").Data().([]float64)[4*i:], row[:])
	}
	psi, err := ProductUnitFeatures(m)
	if err != nil {
		t.Fatal(err)
	}
	f := psi([]kg.Triple{{S: 1, R: 1, O: 0}, {S: 2, R: 0, O: 1}})
	// Units re·re·re, im·re·im, re·im·im, im·im·re, each for j = 0, 1.
	s, r, o := ent[1], rel[1], ent[0]
	var want []float64
	for _, u := range [][3]int{{0, 0, 0}, {2, 0, 2}, {0, 2, 2}, {2, 2, 0}} {
		for j := range 2 {
			want = append(want, s[u[0]+j]*r[u[1]+j]*o[u[2]+j])
		}
	}
	var norm float64
	for _, v := range want {
		norm += v * v
	}
	for j, v := range want {
		if got := f.At(0, j); !(math.Abs(got-v/math.Sqrt(norm)) <= 1e-12) {
			t.Errorf("feature %d of (1, 1, 0): %v, want %v", j, got, v/math.Sqrt(norm))
		}
		if got := f.At(1, j); got != 0 {
			t.Errorf("feature %d of a zero subject: %v, want 0", j, got)
		}
	}
	// The raw units are the same, unnormalised.
	raw, err := RawProductUnitFeatures(m)
	if err != nil {
		t.Fatal(err)
	}
	for j, v := range want {
		if got := raw([]kg.Triple{{S: 1, R: 1, O: 0}}).At(0, j); got != v {
			t.Errorf("raw feature %d of (1, 1, 0): %v, want %v", j, got, v)
		}
	}
	a := []kg.Triple{{S: 0, R: 0, O: 1}, {S: 1, R: 1, O: 0}}
	if _, err := KTDDraws(psi, a, a, 2, 1, rand.New(rand.NewPCG(1, 1))); err != nil {
		t.Errorf("two triples per set, one draw: %v", err)
	}
	for _, c := range []struct{ n, draws int }{{3, 1}, {1, 1}, {2, 0}} {
		if _, err := KTDDraws(psi, a, a, c.n, c.draws, rand.New(rand.NewPCG(1, 1))); err == nil {
			t.Errorf("n = %d, draws = %d accepted", c.n, c.draws)
		}
	}
}

// The merge-walks behind the hard negatives' fallback, with known ids
// beyond the candidates and before them.
func TestUnknownCandidates(t *testing.T) {
	for _, c := range []struct {
		cand, known []int32
		count       int
	}{
		{[]int32{0, 3}, []int32{3, 5}, 1},
		{[]int32{5, 6}, []int32{1}, 2},
		{[]int32{0, 3}, []int32{0, 3}, 0},
		{[]int32{2}, nil, 1},
	} {
		if got := unknownCount(c.cand, c.known); got != c.count {
			t.Errorf("unknownCount(%v, %v) = %d, want %d", c.cand, c.known, got, c.count)
		}
	}
	for _, c := range []struct {
		cand, known []int32
		k           int
		want        int32
		ok          bool
	}{
		{[]int32{0, 3, 6}, []int32{3, 7}, 1, 6, true},
		{[]int32{5}, []int32{1}, 0, 5, true},
		{[]int32{0, 3}, []int32{0, 3}, 0, 0, false},
		{[]int32{0, 3, 6}, []int32{3}, 2, 0, false},
	} {
		if got, ok := nthUnknown(c.cand, c.known, c.k); got != c.want || ok != c.ok {
			t.Errorf("nthUnknown(%v, %v, %d) = %d, %v; want %d, %v", c.cand, c.known, c.k, got, ok, c.want, c.ok)
		}
	}
}
