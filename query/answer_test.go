package query

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gekc/kg"
	"gekc/models"

	"gorgonia.org/tensor"
)

// tinyAnswerer is a model over a dataset of 5 entities and 2 relations
// with known triples in each split.
func tinyAnswerer(t *testing.T, model string) (*Answerer, *Querier) {
	t.Helper()
	ents, err := kg.NewVocab([]string{"a", "b", "c", "d", "e"})
	if err != nil {
		t.Fatal(err)
	}
	rels, err := kg.NewVocab([]string{"likes", "knows"})
	if err != nil {
		t.Fatal(err)
	}
	ds := &kg.Dataset{Name: "tiny", Entities: ents, Relations: rels,
		Train: []kg.Triple{{S: 0, R: 0, O: 1}, {S: 0, R: 0, O: 2}},
		Valid: []kg.Triple{{S: 0, R: 0, O: 4}},
		Test:  []kg.Triple{{S: 1, R: 1, O: 3}},
	}
	m, err := models.New(model, models.Sizes{Entities: 5, Relations: 2, Rank: 3}, models.Options{Seed: 3, Dtype: tensor.Float64, InitScale: 0.7})
	if err != nil {
		t.Fatal(err)
	}
	q, err := New(m, nil, 4)
	if err != nil {
		t.Fatal(err)
	}
	a, err := NewAnswerer(q, ds)
	if err != nil {
		t.Fatal(err)
	}
	return a, q
}

func sumP(rows []Row) float64 {
	var s float64
	for _, r := range rows {
		s += *r.Prob
	}
	return s
}

// Completions list the conditional best first, ranked from 1, marked
// known as the splits say; filtered drops exactly the known ones, in the
// same order, and k cuts the list.
func TestAnswererCompletions(t *testing.T) {
	a, q := tinyAnswerer(t, "cp2")
	given := [3]int{0, 0, Free}
	all, err := a.Completions(given, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	if all.Kind != KindConditional || all.Query != "(a, likes, ?)" || len(all.Rows) != 5 {
		t.Fatalf("got %+v", all)
	}
	if s := sumP(all.Rows); math.Abs(s-1) > 1e-12 {
		t.Errorf("p sums to %v", s)
	}
	lp, err := q.Conditional(given, models.Object)
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{"b": true, "c": true, "e": true}
	var unknown []string
	for i, r := range all.Rows {
		if r.Rank != i+1 || r.Subject != "a" || r.Relation != "likes" {
			t.Errorf("row %d: %+v", i, r)
		}
		id, _ := a.ds.Entities.Index(r.Object)
		if *r.LogProb != lp[id] || (i > 0 && *r.LogProb > *all.Rows[i-1].LogProb) {
			t.Errorf("row %d (%s): log p %v, conditional %v, not best first", i, r.Object, *r.LogProb, lp[id])
		}
		if *r.Known != known[r.Object] {
			t.Errorf("row %d (%s): known %v", i, r.Object, *r.Known)
		}
		if !known[r.Object] {
			unknown = append(unknown, r.Object)
		}
	}
	filtered, err := a.Completions(given, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	if !filtered.Filtered || len(filtered.Rows) != len(unknown) {
		t.Fatalf("filtered: %+v, want objects %v", filtered, unknown)
	}
	for i, r := range filtered.Rows {
		if r.Object != unknown[i] || r.Rank != i+1 {
			t.Errorf("filtered row %d: %s rank %d, want %s", i, r.Object, r.Rank, unknown[i])
		}
	}
	top2, err := a.Completions([3]int{Free, 1, 3}, 2, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(top2.Rows) != 2 || top2.Query != "(?, knows, d)" || top2.Rows[0].Subject == "" {
		t.Errorf("(?, knows, d) top 2: %+v", top2)
	}
	for _, bad := range [][3]int{{0, Free, Free}, {0, 0, 1}} {
		if _, err := a.Completions(bad, 0, false); err == nil || !strings.Contains(err.Error(), "want exactly one free slot") {
			t.Errorf("Completions(%v): error %v", bad, err)
		}
	}
}

// A scored triple's conditionals are the completions' log-probabilities,
// and its joint is the Querier's.
func TestAnswererScore(t *testing.T) {
	a, q := tinyAnswerer(t, "cp2")
	ts := [][3]int{{0, 0, 1}, {3, 1, 2}}
	res, err := a.Score(ts)
	if err != nil {
		t.Fatal(err)
	}
	joint, err := q.LogJoint(ts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Kind != KindJoint || len(res.Rows) != 2 {
		t.Fatalf("got %+v", res)
	}
	for i, tr := range ts {
		r := res.Rows[i]
		if *r.LogProb != joint[i] || math.Abs(*r.Prob-math.Exp(joint[i])) > 1e-15 || r.Rank != 0 {
			t.Errorf("row %d: %+v, joint %v", i, r, joint[i])
		}
		for v, got := range []*float64{r.LogPSubject, r.LogPRelation, r.LogPObject} {
			free := tr
			free[v] = Free
			lp, err := q.Conditional(free, models.Var(v))
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(*got-lp[tr[v]]) > 1e-12 {
				t.Errorf("row %d slot %d: %v, conditional %v", i, v, *got, lp[tr[v]])
			}
		}
	}
	if !*res.Rows[0].Known || *res.Rows[1].Known {
		t.Errorf("known: %v %v", *res.Rows[0].Known, *res.Rows[1].Known)
	}
}

func TestAnswererMarginalAndSample(t *testing.T) {
	a, _ := tinyAnswerer(t, "cp2")
	for _, c := range []struct {
		given  [3]int
		target models.Var
		k      int
		query  string
		rows   int
	}{
		{[3]int{Free, Free, Free}, models.Relation, 0, "p(relation)", 2},
		{[3]int{0, Free, Free}, models.Object, 0, "p(object | subject = a)", 5},
		{[3]int{Free, 1, Free}, models.Subject, 3, "p(subject | relation = knows)", 3},
	} {
		res, err := a.Marginal(c.given, c.target, c.k)
		if err != nil {
			t.Fatal(err)
		}
		if res.Kind != KindMarginal || res.Query != c.query || len(res.Rows) != c.rows {
			t.Errorf("%v %v: %+v", c.given, c.target, res)
			continue
		}
		if s := sumP(res.Rows); c.k == 0 && math.Abs(s-1) > 1e-12 {
			t.Errorf("%s sums to %v", c.query, s)
		}
		for i, r := range res.Rows {
			slots := [3]string{r.Subject, r.Relation, r.Object}
			if r.Rank != i+1 || slots[c.target] == "" || r.Known != nil {
				t.Errorf("%s row %d: %+v", c.query, i, r)
			}
		}
	}
	res, err := a.Sample([3]int{2, Free, Free}, 10, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	if res.Kind != KindSample || res.Query != "(c, ?, ?)" || len(res.Rows) != 10 {
		t.Fatalf("samples: %+v", res)
	}
	for _, r := range res.Rows {
		if r.Subject != "c" || r.Relation == "" || r.Object == "" || r.Prob != nil {
			t.Errorf("sample %+v", r)
		}
	}
}

// An energy-based model completes and scores with softmaxes, without a
// joint; marginals and samples are refused.
func TestAnswererEnergy(t *testing.T) {
	a, _ := tinyAnswerer(t, "cp")
	c, err := a.Completions([3]int{0, 0, Free}, 2, false)
	if err != nil || c.Kind != KindSoftmax || len(c.Rows) != 2 {
		t.Errorf("completions: %+v, %v", c, err)
	}
	s, err := a.Score([][3]int{{0, 0, 1}})
	if err != nil || s.Kind != KindSoftmax || s.Rows[0].LogProb != nil || s.Rows[0].LogPObject == nil {
		t.Errorf("score: %+v, %v", s, err)
	}
	if _, err := a.Marginal([3]int{Free, Free, Free}, models.Relation, 0); !errors.Is(err, ErrEnergy) {
		t.Errorf("marginal: %v", err)
	}
	if _, err := a.Sample([3]int{0, Free, Free}, 1, rand.New(rand.NewPCG(1, 2))); !errors.Is(err, ErrEnergy) {
		t.Errorf("sample: %v", err)
	}
}

func TestAnswererTripleAndParse(t *testing.T) {
	a, _ := tinyAnswerer(t, "cp2")
	if tr, err := a.Triple("b", "", "e"); err != nil || tr != [3]int{1, Free, 4} {
		t.Errorf("Triple(b, , e) = %v, %v", tr, err)
	}
	_, err := a.Triple("a", "know", "")
	var ne *kg.NameError
	if !errors.As(err, &ne) || ne.Kind != "relation" || err.Error() != `unknown relation "know"; did you mean "knows"?` {
		t.Errorf("Triple(a, know, ): %v", err)
	}

	for _, c := range []struct {
		in      string
		want    [][3]int
		wantErr string
	}{
		{"a\tlikes\tb\n# a comment\n\n  \nc\tknows\td\r\n", [][3]int{{0, 0, 1}, {2, 1, 3}}, ""},
		{"a\tlikes\tb\na\tlikes\n", nil, "in.tsv:2: want subject<TAB>relation<TAB>object, got 2 fields"},
		{"a\tlikes\tb\tc\n", nil, "in.tsv:1: want subject<TAB>relation<TAB>object, got 4 fields"},
		{"\n\na\tlike\tb\n", nil, `in.tsv:3: unknown relation "like"; did you mean "likes"?`},
		{"xyzzy\tlikes\tb\n", nil, `in.tsv:1: unknown entity "xyzzy"`},
		{"# only a comment\n", nil, "in.tsv: no triples"},
		{"", nil, "in.tsv: no triples"},
	} {
		got, err := a.ParseTriples(strings.NewReader(c.in), "in.tsv")
		if c.wantErr != "" {
			if err == nil || err.Error() != c.wantErr {
				t.Errorf("%q: error %v, want %s", c.in, err, c.wantErr)
			}
			continue
		}
		if err != nil || len(got) != len(c.want) {
			t.Errorf("%q: %v, %v", c.in, got, err)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%q: triple %d is %v, want %v", c.in, i, got[i], c.want[i])
			}
		}
	}
	if _, err := a.ReadTriples("no/such/file.tsv"); err == nil || !strings.Contains(err.Error(), "no/such/file.tsv") {
		t.Errorf("missing file: %v", err)
	}
}

func TestNewAnswererChecksSizes(t *testing.T) {
	_, q := tinyAnswerer(t, "cp2")
	ents, _ := kg.NewVocab([]string{"a", "b"})
	rels, _ := kg.NewVocab([]string{"r", "s"})
	_, err := NewAnswerer(q, &kg.Dataset{Name: "small", Entities: ents, Relations: rels})
	if err == nil || !strings.Contains(err.Error(), "5 entities") || !strings.Contains(err.Error(), "small 2") {
		t.Errorf("error %v", err)
	}
	// The entities agree, the relations do not: names and ids would not.
	ents5, _ := kg.NewVocab([]string{"a", "b", "c", "d", "e"})
	rels3, _ := kg.NewVocab([]string{"r", "s", "t"})
	if _, err := NewAnswerer(q, &kg.Dataset{Name: "more", Entities: ents5, Relations: rels3}); err == nil || !strings.Contains(err.Error(), "2 relations") {
		t.Errorf("a data set with 3 relations for a model of 2: %v", err)
	}
}
