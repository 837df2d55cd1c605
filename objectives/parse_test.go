package objectives_test

import (
	"strings"
	"testing"

	"gekc/models"
	"gekc/objectives"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

func TestParse(t *testing.T) {
	w := objectives.Weights{Subject: 0.5, Relation: 0, Object: 2}
	for _, c := range []struct {
		name string
		want objectives.Objective
	}{
		{"pll", objectives.PLL{Weights: w}},
		{"mle", objectives.MLE{}},
	} {
		got, err := objectives.Parse(c.name, w)
		if err != nil || got != c.want || got.Name() != c.name {
			t.Errorf("Parse(%q) = %#v, %v; want %#v", c.name, got, err, c.want)
		}
	}
	if _, err := objectives.Parse("nll", w); err == nil || !strings.Contains(err.Error(), `"nll"`) {
		t.Errorf("Parse(nll): error %v", err)
	}
}

// PLL refuses weights it cannot mean: a negative one (the loss would reward
// a worse fit) and all zero (there is no loss).
func TestPLLRejectsWeights(t *testing.T) {
	m, err := models.New("cp2", models.Sizes{Entities: 4, Relations: 2, Rank: 2}, models.Options{Seed: 1, Dtype: tensor.Float64})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		w    objectives.Weights
		want string
	}{
		{objectives.Weights{Subject: 1, Relation: -0.5, Object: 1}, "negative weight -0.5"},
		{objectives.Weights{Subject: -2, Relation: 0, Object: 1}, "negative weight -2"},
		{objectives.Weights{}, "all weights are zero"},
	} {
		g := G.NewGraph()
		c0 := m.Bind(g)
		b, err := c0.NewBatch(ints(g, "s", []int{0, 1}), ints(g, "r", []int{0, 1}), ints(g, "o", []int{2, 3}))
		if err != nil {
			t.Fatal(err)
		}
		wn := G.NewVector(g, tensor.Float64, G.WithShape(2), G.WithName("w"),
			G.WithValue(tensor.New(tensor.WithShape(2), tensor.WithBacking([]float64{0.5, 0.5}))))
		loss, err := objectives.PLL{Weights: c.w}.Loss(c0, b, wn)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("weights %+v: loss %v, error %v; want an error saying %q", c.w, loss, err, c.want)
		}
	}
}
