package analysis

import (
	"math"
	"strings"
	"testing"

	"gekc/kg"
	"gekc/models"

	"gorgonia.org/tensor"
)

// fixedLL gives each triple a log-probability of −(s + 10·o), so every
// split's mean can be written down.
type fixedLL struct{}

func (fixedLL) LogJoint(ts [][3]int) ([]float64, error) {
	out := make([]float64, len(ts))
	for i, t := range ts {
		out[i] = -float64(t[0] + 10*t[2])
	}
	return out, nil
}

// The split's means are over the triples each side names: entity 3 never
// occurs in training, entity 2 only as an object; CP² keeps role tables,
// whose rows are measured apart, and a squared model's ε floor is
// log(ε/(|E|²|R|)) − log Z.
func TestLLBySeen(t *testing.T) {
	ents, _ := kg.NewVocab([]string{"a", "b", "c", "d"})
	rels, _ := kg.NewVocab([]string{"r"})
	ds := &kg.Dataset{Entities: ents, Relations: rels, Train: []kg.Triple{{S: 0, R: 0, O: 1}, {S: 1, R: 0, O: 2}},
		Test: []kg.Triple{{S: 0, R: 0, O: 1}, {S: 2, R: 0, O: 1}, {S: 0, R: 0, O: 3}}}
	m, err := models.New("cp2", models.Sizes{Entities: 4, Relations: 1, Rank: 2}, models.Options{Seed: 1, Dtype: tensor.Float64})
	if err != nil {
		t.Fatal(err)
	}
	s, err := LLBySeen(m, ds, fixedLL{}, func() (float64, error) { return 2, nil })
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		got  MeanLL
		want MeanLL
	}{
		{"all", s.All, MeanLL{-(10 + 12 + 30) / 3.0, 3}},
		{"both seen", s.BothSeen, MeanLL{-11, 2}},
		{"one unseen", s.OneUnseen, MeanLL{-30, 1}},
		{"in role", s.InRole, MeanLL{-10, 1}},
		{"out of role", s.OutOfRole, MeanLL{-21, 2}},
	} {
		if c.got.N != c.want.N || math.Abs(c.got.LL-c.want.LL) > 1e-12 {
			t.Errorf("%s: %+v, want %+v", c.name, c.got, c.want)
		}
	}
	if len(s.RoleTables) != 2 || s.RoleTables[0].NTrained != 2 || s.RoleTables[1].NTrained != 2 {
		t.Errorf("role tables %+v: want 2 subjects and 2 objects trained", s.RoleTables)
	}
	if want := math.Log(m.EpsMass/16) - 2; s.LogZ != 2 || math.Abs(s.ZeroScoreLogP-want) > 1e-12 {
		t.Errorf("log Z %v, ε floor %v; want 2, %v", s.LogZ, s.ZeroScoreLogP, want)
	}
	var b strings.Builder
	s.Write(&b, "run")
	if !strings.Contains(b.String(), "run: test LL -17.333 over 3 triples") || !strings.Contains(b.String(), "log Z 2.000") {
		t.Errorf("written:\n%s", b.String())
	}
}
