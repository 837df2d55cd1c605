package synth

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gekc/kg"
	"gekc/metrics"
	"gekc/models"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
	"gorgonia.org/tensor"
)

func tinyPlanted(t *testing.T, name string) *models.Model {
	t.Helper()
	m, err := planted(name, models.Sizes{Entities: 7, Relations: 2, Rank: 3}, 5, 0, tensor.Float64)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// allTriples lists every (s, r, o) of a model's sizes, in id order.
func allTriples(sz models.Sizes) []kg.Triple {
	var all []kg.Triple
	for s := range int32(sz.Entities) {
		for r := range int32(sz.Relations) {
			for o := range int32(sz.Entities) {
				all = append(all, kg.Triple{S: s, R: r, O: o})
			}
		}
	}
	return all
}

// exactProbs returns p(t) for every triple by enumeration: each log-score
// normalised by the sum over all triples, not by the model's log Z.
func exactProbs(t *testing.T, m *models.Model) map[kg.Triple]float64 {
	t.Helper()
	ev, err := metrics.NewEvaluator(m, 16)
	if err != nil {
		t.Fatal(err)
	}
	all := allTriples(m.Sizes)
	ls := make([]float64, len(all))
	if err := ev.LogScores(all, func(i int, s float64) { ls[i] = s }); err != nil {
		t.Fatal(err)
	}
	p := map[kg.Triple]float64{}
	var z float64
	for i, s := range ls {
		// A squared model's log-score is already log(φ² + ε).
		w := math.Exp(s)
		p[all[i]] = w
		z += w
	}
	for k := range p {
		p[k] /= z
	}
	return p
}

// A data set drawn i.i.d. and written to files has the model's exact
// distribution when read back by the loader (χ² over all triples), for a
// squared model (the Gram-tree sampler) and a non-negative one (inverse
// transform); and its splits never share a triple.
func TestWrittenSamplesFollowTheModel(t *testing.T) {
	for _, name := range []string{"complex2", "cp2", "complex+"} {
		m := tinyPlanted(t, name)
		s, err := NewSampler(m, nil)
		if err != nil {
			t.Fatal(err)
		}
		d, err := DrawSplits(s, Splits{Train: 60_000, Valid: 10, Test: 10}, IID, Support(m.Sizes, nil), 3)
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		if err := WriteSplits(dir, d, NumberedNames(7, 2), true); err != nil {
			t.Fatal(err)
		}
		ds, err := kg.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		if ds.Entities.Len() != 7 || ds.Relations.Len() != 2 {
			t.Fatalf("%s: loaded %d entities, %d relations", name, ds.Entities.Len(), ds.Relations.Len())
		}
		counts := map[kg.Triple]float64{}
		for _, tr := range ds.Train {
			counts[tr]++
		}
		held := map[kg.Triple]bool{}
		for _, tr := range append(append([]kg.Triple(nil), ds.Valid...), ds.Test...) {
			if counts[tr] > 0 || held[tr] {
				t.Fatalf("%s: %v in two splits (or twice in valid/test)", name, tr)
			}
			held[tr] = true
		}
		// Held-out triples are not drawn for train: the training split is
		// p conditioned on them not being drawn, renormalised.
		p := exactProbs(t, m)
		var rest float64
		for tr, q := range p {
			if !held[tr] {
				rest += q
			}
		}
		var chi2 float64
		cells := 0
		n := float64(len(ds.Train))
		for tr, q := range p {
			if held[tr] {
				continue
			}
			e := n * q / rest
			chi2 += (counts[tr] - e) * (counts[tr] - e) / e
			cells++
		}
		if pv := 1 - (distuv.ChiSquared{K: float64(cells - 1)}).CDF(chi2); pv <= 1e-3 {
			t.Errorf("%s: χ² %.1f over %d cells, p-value %.3g", name, chi2, cells, pv)
		}
	}
}

// The exact log-likelihood of each split, written beside a planted graph,
// is the enumeration's.
func TestLogLikelihoodsMatchEnumeration(t *testing.T) {
	for _, name := range []string{"complex2", "cp+"} {
		m := tinyPlanted(t, name)
		s, err := NewSampler(m, nil)
		if err != nil {
			t.Fatal(err)
		}
		d, err := DrawSplits(s, Splits{Train: 40, Valid: 5, Test: 5}, Distinct, Support(m.Sizes, nil), 9)
		if err != nil {
			t.Fatal(err)
		}
		p := exactProbs(t, m)
		train, valid, test, err := LogLikelihoods(m, nil, d)
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range []struct {
			got float64
			ts  []kg.Triple
		}{{train, d.Train}, {valid, d.Valid}, {test, d.Test}} {
			var want float64
			for _, tr := range c.ts {
				want += math.Log(p[tr])
			}
			want /= float64(len(c.ts))
			if math.Abs(c.got-want) > 1e-9 {
				t.Errorf("%s split %d: log-likelihood %.6f, enumeration %.6f", name, i, c.got, want)
			}
		}
	}
}

type stuckSampler struct{}

func (stuckSampler) Sample(n int, _ *rand.Rand) ([]kg.Triple, error) {
	return make([]kg.Triple, n), nil // always (0, 0, 0)
}

func TestDrawSplits(t *testing.T) {
	m := tinyPlanted(t, "cp2")
	s, _ := NewSampler(m, nil)
	sup := Support(m.Sizes, nil)
	d, err := DrawSplits(s, Splits{Train: 40, Valid: 10, Test: 10}, Distinct, sup, 1)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[kg.Triple]bool{}
	for _, ts := range [][]kg.Triple{d.Train, d.Valid, d.Test} {
		for _, tr := range ts {
			if seen[tr] {
				t.Fatalf("distinct draw repeats %v", tr)
			}
			seen[tr] = true
		}
	}
	if len(d.Train) != 40 || len(d.Valid) != 10 || len(d.Test) != 10 || d.Draws < 60 {
		t.Errorf("sizes %d/%d/%d after %d draws", len(d.Train), len(d.Valid), len(d.Test), d.Draws)
	}
	again, _ := DrawSplits(s, Splits{Train: 40, Valid: 10, Test: 10}, Distinct, sup, 1)
	for i := range d.Train {
		if again.Train[i] != d.Train[i] {
			t.Fatal("the same seed drew another data set")
		}
	}
	iid, err := DrawSplits(s, Splits{Train: 500, Valid: 3, Test: 3}, IID, sup, 2)
	if err != nil {
		t.Fatal(err)
	}
	distinct := map[kg.Triple]bool{}
	for _, tr := range iid.Train {
		distinct[tr] = true
	}
	if len(distinct) == len(iid.Train) {
		t.Error("500 i.i.d. draws from 98 triples repeat none")
	}
	if _, err := DrawSplits(s, Splits{Train: 90, Valid: 5, Test: 5}, Distinct, sup, 1); err == nil {
		t.Error("100 distinct triples of 98 were not refused")
	}
	if _, err := DrawSplits(stuckSampler{}, Splits{Train: 1, Valid: 1}, Distinct, sup, 1); !errors.Is(err, errExhausted) {
		t.Errorf("a sampler stuck on one triple: %v", err)
	}
	if _, err := ParseDraw("some"); err == nil {
		t.Error("draw \"some\" accepted")
	}
}

func TestNumberedNamesKeepIDOrder(t *testing.T) {
	n := NumberedNames(1234, 7)
	if n.Entity(42) != "e0042" || n.Relation(3) != "r3" || n.Entity(1233) != "e1233" {
		t.Errorf("names %s %s %s", n.Entity(42), n.Relation(3), n.Entity(1233))
	}
	if !(n.Entity(9) < n.Entity(10)) {
		t.Error("byte order differs from id order")
	}
}

// A surrogate identical to the original has no distance and lies in its
// train split; one that moves every triple's relation is far.
func TestCompare(t *testing.T) {
	rels, _ := kg.NewVocab([]string{"a", "b"})
	ents, _ := kg.NewVocab([]string{"x", "y", "z"})
	train := []kg.Triple{{S: 0, R: 0, O: 1}, {S: 0, R: 0, O: 2}, {S: 1, R: 1, O: 2}}
	ds := &kg.Dataset{Name: "toy", Entities: ents, Relations: rels, Train: train, Test: []kg.Triple{{S: 2, R: 1, O: 0}}}
	same := Compare(ds, &Sampled{Train: train})
	if same.RelationTV != 0 || same.SubjectKS != 0 || same.ObjectKS != 0 || same.InTrain != 1 || same.Novel != 0 {
		t.Errorf("identical surrogate: %+v", same)
	}
	moved := Compare(ds, &Sampled{Train: []kg.Triple{{S: 2, R: 1, O: 0}, {S: 2, R: 1, O: 1}}, Test: []kg.Triple{{S: 1, R: 0, O: 0}}})
	if math.Abs(moved.RelationTV-2.0/3) > 1e-12 || moved.SubjectKS != 0.5 || moved.InTest != 1.0/3 || moved.Novel != 2.0/3 {
		t.Errorf("moved surrogate: TV %v, subject KS %v, in test %v, novel %v", moved.RelationTV, moved.SubjectKS, moved.InTest, moved.Novel)
	}
	if png, err := moved.DegreePlot("toy"); err != nil || len(png) < 100 {
		t.Errorf("degree plot: %d bytes, %v", len(png), err)
	}
	if !strings.Contains(moved.Markdown(), "66.67% in none (novel)") {
		t.Errorf("markdown:\n%s", moved.Markdown())
	}
}

// A planted data set loads with every planted entity, in the planted ids,
// even those no triple mentions, and its exact log-likelihood is the
// loaded data set's.
func TestPlantedVocabulary(t *testing.T) {
	m := tinyPlanted(t, "cp2")
	s, _ := NewSampler(m, nil)
	// A draw of few triples that mentions both relations but not every
	// entity.
	var d *Sampled
	for seed := uint64(1); d == nil && seed < 100; seed++ {
		got, err := DrawSplits(s, Splits{Train: 3, Valid: 1, Test: 1}, Distinct, Support(m.Sizes, nil), seed)
		if err != nil {
			t.Fatal(err)
		}
		ents, rels := map[int32]bool{}, map[int32]bool{}
		for _, tr := range slices.Concat(got.Train, got.Valid, got.Test) {
			ents[tr.S], ents[tr.O], rels[tr.R] = true, true, true
		}
		if len(ents) < 7 && len(rels) == 2 {
			d = got
		}
	}
	if d == nil {
		t.Fatal("no seed gave a draw with both relations and an unmentioned entity")
	}
	dir := t.TempDir()
	names := NumberedNames(7, 2)
	if err := WriteSplits(dir, d, names, false); err != nil {
		t.Fatal(err)
	}
	if err := WriteVocabulary(dir, 7, 2, names, d); err != nil {
		t.Fatal(err)
	}
	ds, err := kg.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if ds.Entities.Len() != 7 || ds.Relations.Len() != 2 {
		t.Fatalf("loaded %d entities and %d relations, planted 7 and 2", ds.Entities.Len(), ds.Relations.Len())
	}
	if !ds.Synthetic {
		t.Error("a data set written by synth does not load as synthetic")
	}
	for i, tr := range d.Train {
		if ds.Train[i] != tr {
			t.Fatalf("train triple %d loads as %v, drawn as %v", i, ds.Train[i], tr)
		}
	}
}

// Under a schema, only triples whose types the relations allow can be drawn.
func TestSupport(t *testing.T) {
	types, _ := kg.NewVocab([]string{"a", "b"})
	schema := &kg.Schema{Types: types, EntityType: []int32{0, 0, 0, 1, 1}, SubjectType: []int32{0, 1}, ObjectType: []int32{1, 1}}
	if got := Support(models.Sizes{Entities: 5, Relations: 2}, schema); got != 3*2+2*2 {
		t.Errorf("typed support %v, want 10", got)
	}
	if got := Support(models.Sizes{Entities: 5, Relations: 2}, nil); got != 50 {
		t.Errorf("untyped support %v, want 50", got)
	}
}

// A distinct draw is shuffled before it is dealt out: without replacement
// the first triples drawn are the probable ones, and splits dealt in draw
// order would give train a higher log-likelihood than test. With a skewed
// planted model the two splits' mean exact log-likelihoods must agree
// within 5 standard errors.
func TestDistinctSplitsAreExchangeable(t *testing.T) {
	m, err := Planted("complex2", models.Sizes{Entities: 100, Relations: 2, Rank: 2}, 3, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSampler(m, nil)
	if err != nil {
		t.Fatal(err)
	}
	d, err := DrawSplits(s, Splits{Train: 1500, Valid: 0, Test: 1500}, Distinct, Support(m.Sizes, nil), 5)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := metrics.NewEvaluator(m, 256)
	if err != nil {
		t.Fatal(err)
	}
	meanVar := func(ts []kg.Triple) (float64, float64) {
		lp, err := ev.LogProbs(ts)
		if err != nil {
			t.Fatal(err)
		}
		var mean, sq float64
		for _, x := range lp {
			mean += x
		}
		mean /= float64(len(lp))
		for _, x := range lp {
			sq += (x - mean) * (x - mean)
		}
		return mean, sq / float64(len(lp)-1) / float64(len(lp))
	}
	mt, vt := meanVar(d.Train)
	ms, vs := meanVar(d.Test)
	if se := math.Sqrt(vt + vs); math.Abs(mt-ms) > 5*se {
		t.Errorf("mean log p: train %.4f, test %.4f (difference %.4f, standard error %.4f)", mt, ms, mt-ms, se)
	}
}

// popularity multiplies every entity table's row e by one factor z_e,
// shared by the subject and object tables, log-normal with spread
// popularity, and leaves the relation tables as drawn.
func TestPlantedPopularityOnEveryTable(t *testing.T) {
	const entities, pop = 400, 0.7
	for _, name := range []string{"cp2", "complex2", "rescal2"} {
		sz := models.Sizes{Entities: entities, Relations: 3, Rank: 3}
		flat, err := Planted(name, sz, 9, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		skewed, err := Planted(name, sz, 9, 0, pop)
		if err != nil {
			t.Fatal(err)
		}
		l := skewed.Layout
		factor := make([]float64, entities) // z_e, from the first table that has row e
		for _, tab := range l.Tables {
			a, b := flat.Param(tab.Name).Data().([]float32), skewed.Param(tab.Name).Data().([]float32)
			entityTable := tab.Name == l.Subject || tab.Name == l.Object
			if !entityTable {
				if !slices.Equal(a, b) {
					t.Errorf("%s: relation table %s changed", name, tab.Name)
				}
				continue
			}
			k := len(a) / entities
			for e := range entities {
				for j := range k {
					r := float64(b[e*k+j]) / float64(a[e*k+j])
					if factor[e] == 0 {
						factor[e] = r
					}
					if math.Abs(r-factor[e]) > 1e-5*factor[e] {
						t.Fatalf("%s: table %s row %d entry %d scaled by %v, the row's factor is %v", name, tab.Name, e, j, r, factor[e])
					}
				}
			}
		}
		logs := make([]float64, entities)
		for e, f := range factor {
			logs[e] = math.Log(f)
		}
		if mean, sd := stat.MeanStdDev(logs, nil); math.Abs(mean) > 4*pop/math.Sqrt(entities) || math.Abs(sd-pop) > 0.1 {
			t.Errorf("%s: log factors mean %.3f, sd %.3f; want 0 and %v", name, mean, sd, pop)
		}
	}
	for _, bad := range []struct {
		name string
		pop  float64
	}{{"cp2", -0.5}, {"cp+", 0.5}, {"cp", 0.5}} {
		if _, err := Planted(bad.name, models.Sizes{Entities: 5, Relations: 2, Rank: 2}, 1, 0, bad.pop); err == nil {
			t.Errorf("%s with popularity %v: accepted", bad.name, bad.pop)
		}
	}
}

// countingSampler counts the draws asked of it.
type countingSampler struct{ calls int }

func (c *countingSampler) Sample(n int, rng *rand.Rand) ([]kg.Triple, error) {
	c.calls++
	out := make([]kg.Triple, n)
	for i := range out {
		out[i] = kg.Triple{S: int32(rng.IntN(2)), R: 0, O: int32(rng.IntN(2))}
	}
	return out, nil
}

// An IID draw needs its validation and test triples distinct, and room for
// one training triple beside them: sizes the support cannot hold are
// refused before any sampling.
func TestDrawSplitsRefusesTooSmallASupport(t *testing.T) {
	for _, c := range []struct {
		how     Draw
		sz      Splits
		support float64
		ok      bool
	}{
		{IID, Splits{Train: 5, Valid: 2, Test: 2}, 4, false}, // no room for a training triple
		{IID, Splits{Train: 0, Valid: 2, Test: 2}, 4, true},
		{Distinct, Splits{Train: 1, Valid: 2, Test: 2}, 4, false},
	} {
		s := &countingSampler{}
		_, err := DrawSplits(s, c.sz, c.how, c.support, 1)
		if c.ok {
			continue
		}
		if err == nil || !strings.Contains(err.Error(), "distinct triples") || s.calls != 0 {
			t.Errorf("%v %+v on a support of %v: %v after %d draws; want a refusal before any", c.how, c.sz, c.support, err, s.calls)
		}
	}
}

// Names are padded to the width of the largest id, so 10 entities are e0
// to e9 and 11 are e00 to e10.
func TestNumberedNamesWidth(t *testing.T) {
	for _, c := range []struct {
		entities int
		id       int32
		want     string
	}{{10, 9, "e9"}, {10, 0, "e0"}, {11, 0, "e00"}, {11, 10, "e10"}, {1, 0, "e0"}, {101, 7, "e007"}} {
		if got := NumberedNames(c.entities, 1).Entity(c.id); got != c.want {
			t.Errorf("NumberedNames(%d, 1).Entity(%d) = %q, want %q", c.entities, c.id, got, c.want)
		}
	}
	if got := NumberedNames(1, 10).Relation(9); got != "r9" {
		t.Errorf("NumberedNames(1, 10).Relation(9) = %q, want r9", got)
	}
}
