package analysis

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"gekc/kg"
	"gekc/models"
	"gekc/query"
	"gekc/resultsdir"
)

// auditModel is a squared CP on Nations (14 entities, 55 relations:
// 10,780 triples, few enough to enumerate) and its querier under dom (nil:
// none), initialised wide and with little uniform mass so that its
// distribution is far from uniform.
func auditModel(t *testing.T, ds *kg.Dataset, dom *models.Domain) (*models.Model, *query.Querier) {
	t.Helper()
	m, err := models.New("cp2", models.Sizes{Entities: ds.Entities.Len(), Relations: ds.Relations.Len(), Rank: 4}, models.Options{Seed: 3, InitScale: 1, EpsMass: 1e-6})
	if err != nil {
		t.Fatal(err)
	}
	q, err := query.New(m, dom, 512)
	if err != nil {
		t.Fatal(err)
	}
	return m, q
}

// nationsDomain gives Nations' entities two alternating types and each
// relation a subject and an object type, so that about a quarter of the
// triples, some training triples among them, are consistent.
func nationsDomain(t *testing.T, ds *kg.Dataset) *models.Domain {
	t.Helper()
	et := make([]int32, ds.Entities.Len())
	for i := range et {
		et[i] = int32(i % 2)
	}
	st, ot := make([]int32, ds.Relations.Len()), make([]int32, ds.Relations.Len())
	for r := range st {
		st[r], ot[r] = int32(r%2), int32(r/2%2)
	}
	dom, err := models.NewDomain(et, st, ot, 2)
	if err != nil {
		t.Fatal(err)
	}
	return dom
}

// The audit against enumeration, unconstrained and under a domain
// constraint: each split's mass is Σ p over every triple of the
// vocabulary that the split holds, the entropy estimate lies within four
// standard errors of −Σ p log p (its standard error within 5% of
// √(Var log p / n)), and exact samples land on each split as often as its
// mass says (|z| < 4). Samples that do not come from the model, uniform
// triples, are caught by the z-scores.
func TestAuditSamplesAgainstEnumeration(t *testing.T) {
	ds := nations(t)
	for _, c := range []struct {
		name string
		dom  *models.Domain
	}{{"unconstrained", nil}, {"domain", nationsDomain(t, ds)}} {
		t.Run(c.name, func(t *testing.T) { checkAuditAgainstEnumeration(t, ds, c.dom) })
	}
}

func checkAuditAgainstEnumeration(t *testing.T, ds *kg.Dataset, dom *models.Domain) {
	m, q := auditModel(t, ds, dom)
	ne, nr := ds.Entities.Len(), ds.Relations.Len()
	var all [][3]int
	for s := range ne {
		for r := range nr {
			for o := range ne {
				all = append(all, [3]int{s, r, o})
			}
		}
	}
	lps, err := q.LogJoint(all)
	if err != nil {
		t.Fatal(err)
	}
	sets := make([]map[kg.Triple]bool, len(AuditSplits))
	for i := range AuditSplits {
		sets[i] = map[kg.Triple]bool{}
		for _, tr := range splitTriples(ds, i) {
			sets[i][tr] = true
		}
	}
	var entropy, second, total float64 // −E[log p], E[(log p)²], Σ p
	masses := make([]float64, len(AuditSplits))
	pr := make([]float64, nr) // p(r), Σ over s and o
	for i, x := range all {
		p := math.Exp(lps[i])
		if p == 0 {
			continue // inconsistent with the domain
		}
		pr[x[1]] += p
		total += p
		entropy -= p * lps[i]
		second += p * lps[i] * lps[i]
		for j := range AuditSplits {
			if sets[j][kg.Triple{S: int32(x[0]), R: int32(x[1]), O: int32(x[2])}] {
				masses[j] += p
			}
		}
	}
	if math.Abs(total-1) > 1e-6 {
		t.Fatalf("the enumerated probabilities sum to %v", total)
	}

	samples, _, err := resultsdir.Sample(m, dom, 20000, 11)
	if err != nil {
		t.Fatal(err)
	}
	a, err := AuditSamples(q, ds, samples)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[kg.Triple]bool{}
	for _, tr := range samples {
		seen[tr] = true
	}
	if a.Samples != 20000 || a.Distinct != len(seen) {
		t.Errorf("%d samples, %d distinct; want 20000, %d", a.Samples, a.Distinct, len(seen))
	}
	if d := math.Abs(a.Entropy - entropy); !(d < 4*a.EntropySE) {
		t.Errorf("entropy %v ± %v, enumeration %v", a.Entropy, a.EntropySE, entropy)
	}
	if se := math.Sqrt((second - entropy*entropy) / 20000); !(math.Abs(a.EntropySE/se-1) < 0.05) {
		t.Errorf("entropy standard error %v, enumeration's %v", a.EntropySE, se)
	}
	for j, sp := range a.Splits {
		if sp.Split != AuditSplits[j] || sp.Triples != len(sets[j]) {
			t.Errorf("split %d: %s of %d triples, want %s of %d", j, sp.Split, sp.Triples, AuditSplits[j], len(sets[j]))
		}
		if math.Abs(sp.Mass-masses[j]) > 1e-9*math.Max(1, masses[j]) {
			t.Errorf("%s: mass %v, enumeration %v", sp.Split, sp.Mass, masses[j])
		}
		if z := sp.Z(a.Samples); !(math.Abs(z) < 4) {
			t.Errorf("%s: %d of %d samples for mass %v: z = %v", sp.Split, sp.Hits, a.Samples, sp.Mass, z)
		}
	}
	freq := make([]float64, nr)
	for _, tr := range ds.Train {
		freq[tr.R] += 1 / float64(len(ds.Train))
	}
	var want RelationFit
	for r := range nr {
		want.TV += math.Abs(pr[r]-freq[r]) / 2
	}
	for _, tr := range ds.Test {
		want.TestLL += math.Log(pr[tr.R]) / float64(len(ds.Test))
		want.TestLLTrain += math.Log(freq[tr.R]) / float64(len(ds.Test))
	}
	// p(R) comes from the relation-marginal program, the enumeration from
	// LogJoint's: two float32 evaluations.
	if got := a.Relations; got == nil || math.Abs(got.TV-want.TV) > 1e-6 || math.Abs(got.TestLL-want.TestLL) > 1e-6 ||
		math.Abs(got.TestLLTrain-want.TestLLTrain) > 1e-12 {
		t.Errorf("relations %+v, enumeration %+v", got, want)
	}
	if !(want.TV > 0.05) {
		t.Errorf("relation TV %v: this model's p(R) should be far from the training frequencies", want.TV)
	}
	if dom != nil {
		return // uniform triples break the constraint: probability 0, an error
	}

	// Uniform triples: this model has 13.6% of its mass on the training
	// triples, uniform draws hit them 14.8% of the time; 60,000 draws put
	// that many standard errors apart.
	rng := rand.New(rand.NewPCG(5, 5))
	uniform := make([]kg.Triple, 60000)
	for i := range uniform {
		uniform[i] = kg.Triple{S: int32(rng.IntN(ne)), R: int32(rng.IntN(nr)), O: int32(rng.IntN(ne))}
	}
	u, err := AuditSamples(q, ds, uniform)
	if err != nil {
		t.Fatal(err)
	}
	if z := u.Splits[0].Z(u.Samples); !(math.Abs(z) > 6) {
		t.Errorf("uniform triples pass as the model's samples: train z = %v (mass %v, share %v)", z, u.Splits[0].Mass, u.Splits[0].Share(u.Samples))
	}
}

// stubJoint gives every triple log p = lp, but −Inf to triples of
// subject 0 and NaN to those of subject 1, and its two relations equal
// marginals.
type stubJoint struct{ lp float64 }

func (stubJoint) RelationLogMarginals() ([]float64, error) { return []float64{0, 0}, nil }

func (s stubJoint) LogJoint(ts [][3]int) ([]float64, error) {
	out := make([]float64, len(ts))
	for i, t := range ts {
		out[i] = [2]float64{math.Inf(-1), math.NaN()}[min(t[0], 1)]
		if t[0] > 1 {
			out[i] = s.lp
		}
	}
	return out, nil
}

// A sample of probability 0 cannot come from the model and a NaN or
// positive log p is no probability: errors naming the triple, rather
// than an infinite entropy written to a table that cannot be read back.
// Split triples of probability 0 weigh nothing.
func TestAuditSamplesNonFinite(t *testing.T) {
	ds := &kg.Dataset{Train: []kg.Triple{{S: 0, R: 0, O: 2}, {S: 2, R: 0, O: 2}}, Valid: []kg.Triple{{S: 3}}, Test: []kg.Triple{{S: 4}}}
	good := []kg.Triple{{S: 2, O: 2}, {S: 3}, {S: 5}}
	a, err := AuditSamples(stubJoint{math.Log(0.25)}, ds, good)
	if err != nil || a.Splits[0].Mass != 0.25 || a.Entropy != math.Log(4) || a.EntropySE != 0 {
		t.Errorf("audit %+v, %v; want train mass 0.25 (one triple of p 0), entropy log 4 ± 0", a, err)
	}
	// p(R) = (½, ½) against the training frequencies (1, 0).
	if want := (RelationFit{TV: 0.5, TestLL: math.Log(0.5), TestLLTrain: 0}); err == nil && *a.Relations != want {
		t.Errorf("relations %+v, want %+v", *a.Relations, want)
	}
	unseen := *ds
	unseen.Test = []kg.Triple{{S: 4}, {S: 4, R: 1}}
	if a, err := AuditSamples(stubJoint{math.Log(0.25)}, &unseen, good); err != nil || !math.IsInf(a.Relations.TestLLTrain, -1) {
		t.Errorf("a test relation absent from training: %+v, %v; want a training-frequency LL of −Inf", a.Relations, err)
	}
	beyond := *ds
	beyond.Test = []kg.Triple{{S: 4, R: 2}}
	if _, err := AuditSamples(stubJoint{math.Log(0.25)}, &beyond, good); err == nil || !strings.Contains(err.Error(), "relations: test triple (4, 2, 0): relation beyond the model's 2") {
		t.Errorf("a test relation beyond the model's: error %v", err)
	}
	for _, c := range []struct {
		name    string
		q       stubJoint
		samples []kg.Triple
		want    string
	}{
		{"zero probability", stubJoint{-1}, append(good, kg.Triple{S: 0, R: 1, O: 3}), "sample 3 (0, 1, 3) has probability 0"},
		{"NaN", stubJoint{-1}, append(good, kg.Triple{S: 1, O: 2}), "triple 3 (1, 0, 2): log p = NaN"},
		{"above 1", stubJoint{0.5}, good, "the samples: triple 0 (2, 0, 2): log p = 0.5"},
	} {
		if _, err := AuditSamples(c.q, ds, c.samples); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

// A triple listed twice in a split weighs once; each sample that is it
// counts, as often as it was drawn.
func TestAuditSamplesDuplicates(t *testing.T) {
	ds := nations(t)
	_, q := auditModel(t, ds, nil)
	tr := ds.Train[0]
	once := *ds
	once.Train, once.Valid, once.Test = []kg.Triple{tr}, []kg.Triple{ds.Valid[0]}, []kg.Triple{ds.Test[0]}
	twice := once
	twice.Train = []kg.Triple{tr, tr}
	samples := []kg.Triple{tr, tr, ds.Test[0], {S: tr.S, R: tr.R, O: (tr.O + 1) % int32(ds.Entities.Len())}}
	a, err := AuditSamples(q, &once, samples)
	if err != nil {
		t.Fatal(err)
	}
	b, err := AuditSamples(q, &twice, samples)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Errorf("a doubled training triple changes the audit:\n%+v\n%+v", a, b)
	}
	want := []int{2, 0, 1}
	if ds.Valid[0] == tr {
		want[1] = 2
	}
	for j, sp := range a.Splits {
		if sp.Triples != 1 || sp.Hits != want[j] {
			t.Errorf("%s: %d triples, %d hits; want 1, %d", sp.Split, sp.Triples, sp.Hits, want[j])
		}
	}
	lp, err := q.LogJoint([][3]int{{int(tr.S), int(tr.R), int(tr.O)}})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(a.Splits[0].Mass-math.Exp(lp[0])) > 1e-12 {
		t.Errorf("train mass %v, want p = %v", a.Splits[0].Mass, math.Exp(lp[0]))
	}
	if _, err := AuditSamples(q, &once, samples[:1]); err == nil {
		t.Error("an audit of one sample: no error")
	}
}

// The tables read back as written; a row whose run is gone is dropped;
// malformed lines are errors naming the file, line and column.
func TestAuditTablesRoundTrip(t *testing.T) {
	runs := map[string]Run{
		"a": {ID: "a", Dataset: "nations", Model: "cp2", Objective: "mle", Constraints: "none", Rank: 4, Seed: 1},
		"b": {ID: "b", Dataset: "nations", Model: "complex+", Objective: "pll", Constraints: "none", Rank: 4, Seed: 2},
	}
	audit := func(h float64, rf *RelationFit) *SampleAudit {
		return &SampleAudit{Samples: 100, Distinct: 97, Entropy: h, EntropySE: 0.0123, Splits: []SplitMass{
			{"train", 1592, 0.2162718, 22}, {"valid", 199, 0.0123, 1}, {"test", 201, 0.0131, 2}}, Relations: rf}
	}
	rows := []AuditRow{{runs["a"], "best valid LL, epoch 3", audit(8.5, &RelationFit{TV: 0.3587, TestLL: -1.5234, TestLLTrain: -1.2345})},
		{runs["b"], "best valid MRR, epoch 7", audit(9.25, nil)}}
	tsv, md, err := AuditTables(rows)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| 8.500 ± 0.025 ", "| 97 of 100 ", "| 0.2163 / 0.2200 (+0.1) ", "`a`", "| complex+ ",
		"| 0.359 ", "| -1.523 / -1.234 "} {
		if !strings.Contains(string(md), want) {
			t.Errorf("no %q in\n%s", want, md)
		}
	}
	for _, line := range strings.Split(string(md), "\n") {
		if cells := strings.Split(line, "|"); strings.Contains(line, "`b`") &&
			(strings.TrimSpace(cells[len(cells)-4]) != "–" || strings.TrimSpace(cells[len(cells)-3]) != "–") {
			t.Errorf("row b, which has no relations: %s", line)
		}
	}
	path := filepath.Join(t.TempDir(), AuditTSVName)
	if err := os.WriteFile(path, tsv, 0o644); err != nil {
		t.Fatal(err)
	}
	lookup := func(id string) (Run, bool, error) { r, ok := runs[id]; return r, ok, nil }
	back, err := ReadAuditTSV(path, lookup)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, rows) {
		t.Errorf("read back\n%+v\nwrote\n%+v", back, rows)
	}
	delete(runs, "a")
	if back, err := ReadAuditTSV(path, lookup); err != nil || len(back) != 1 || back[0].Run.ID != "b" {
		t.Errorf("run a gone: %+v, %v", back, err)
	}
	if back, err := ReadAuditTSV(filepath.Join(t.TempDir(), "none.tsv"), lookup); back != nil || err != nil {
		t.Errorf("a missing table: %v, %v", back, err)
	}
	runs["a"] = rows[0].Run

	// A table written before audits weighed the relations reads with none.
	var old []string
	for _, line := range strings.Split(strings.TrimRight(string(tsv), "\n"), "\n") {
		f := strings.Split(line, "\t")
		old = append(old, strings.Join(f[:len(f)-len(auditRelationColumns)], "\t"))
	}
	legacy := filepath.Join(t.TempDir(), AuditTSVName)
	if err := os.WriteFile(legacy, []byte(strings.Join(old, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	back, err = ReadAuditTSV(legacy, lookup)
	if err != nil || len(back) != 2 || back[0].Audit.Relations != nil || back[0].Audit.Entropy != 8.5 {
		t.Errorf("an older table: %+v, %v", back, err)
	}

	lines := strings.Split(string(tsv), "\n")
	for _, c := range []struct{ name, edit, want string }{
		{"short", "b\tx", ":2: fields: 2, want 24"},
		{"relation TV", strings.Replace(lines[1], "\t0.3587\t", "\t1.3587\t", 1), ":2: relation columns: relation_tv: total variation 1.3587 outside [0, 1]"},
		{"relation LL", strings.Replace(lines[1], "\t-1.5234\t", "\t1.5234\t", 1), ":2: relation columns: test_ll_relation: 1.5234 is no mean log-probability"},
		{"relation cell missing", strings.Replace(lines[1], "\t-1.5234\t", "\t\t", 1), ":2: relation columns: test_ll_relation: strconv.ParseFloat"},
		{"samples", strings.Replace(lines[1], "\t100\t97\t", "\tmany\t97\t", 1), ":2: column 9:"},
		{"negative hits", strings.Replace(lines[1], "\t0.2162718\t22\t", "\t0.2162718\t-22\t", 1), ":2: column 15: -22 is negative"},
		{"mass", strings.Replace(lines[1], "\t0.0123\t1\t", "\tNaN\t1\t", 1), ":2: column 17: NaN is not finite"},
		{"distinct above samples", strings.Replace(lines[1], "\t100\t97\t", "\t100\t101\t", 1), ":2: columns 9 and 10: 101 distinct of 100 samples"},
		{"mass above 1", strings.Replace(lines[1], "\t0.2162718\t22\t", "\t1.5\t22\t", 1), ":2: column 14: mass 1.5 outside [0, 1]"},
		{"hits above samples", strings.Replace(lines[1], "\t0.2162718\t22\t", "\t0.2162718\t122\t", 1), ":2: column 15: 122 hits of 100 samples"},
		{"run", strings.Replace(lines[1], "\ta\tbest", "\t../a\tbest", 1), `:2: run: "../a" is not a run ID`},
	} {
		bad := filepath.Join(t.TempDir(), AuditTSVName)
		if err := os.WriteFile(bad, []byte(lines[0]+"\n"+c.edit+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadAuditTSV(bad, lookup); err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), bad) {
			t.Errorf("%s: error %v, want one naming %s and %q", c.name, err, bad, c.want)
		}
	}
}

// ReadAuditTSV never panics, and what it accepts writes back to a table
// it accepts again.
func FuzzReadAuditTSV(f *testing.F) {
	rows := []AuditRow{{Run{ID: "a", Dataset: "d", Model: "cp2", Objective: "mle", Constraints: "none", Rank: 2, Seed: 1}, "best valid LL, epoch 3",
		&SampleAudit{Samples: 10, Distinct: 9, Entropy: 3.5, EntropySE: 0.1, Splits: []SplitMass{{"train", 5, 0.5, 4}, {"valid", 1, 0.1, 1}, {"test", 1, 0.1, 0}}}}}
	tsv, _, err := AuditTables(rows)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(tsv)
	f.Add([]byte(strings.SplitN(string(tsv), "\n", 2)[0] + "\na\tb\n"))
	f.Add([]byte(""))
	lookup := func(id string) (Run, bool, error) { return Run{ID: id}, true, nil }
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(t.TempDir(), AuditTSVName)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		rows, err := ReadAuditTSV(path, lookup)
		if err != nil {
			return
		}
		tsv, _, err := AuditTables(rows)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, tsv, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadAuditTSV(path, lookup); err != nil {
			t.Fatalf("a table written from accepted rows is refused: %v\n%s", err, tsv)
		}
	})
}
