package synth

import (
	"math/rand/v2"
	"strings"
	"testing"

	"gekc/kg"
	"gekc/models"

	"gorgonia.org/tensor"
)

// A surrogate drawn from the model that made the "original" is closer to
// the original's test triples, by KTD, than uniform triples are; a model
// without linear-space product units (a + model) is refused by name.
func TestKTDToOriginal(t *testing.T) {
	m, err := planted("complex2", models.Sizes{Entities: 60, Relations: 3, Rank: 4}, 7, 0, tensor.Float64)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSampler(m, nil)
	if err != nil {
		t.Fatal(err)
	}
	draw := func(seed uint64) *Sampled {
		d, err := DrawSplits(s, Splits{Train: 2000, Valid: 10, Test: 500}, IID, Support(m.Sizes, nil), seed)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	orig := draw(1)
	original := &kg.Dataset{Name: "original", Train: orig.Train, Valid: orig.Valid, Test: orig.Test}
	fromModel, train, err := KTDToOriginal(m, original, draw(2), 3)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(4, 4))
	uniform := &Sampled{Test: make([]kg.Triple, 500)}
	for i := range uniform.Test {
		uniform.Test[i] = kg.Triple{S: rng.Int32N(60), R: rng.Int32N(3), O: rng.Int32N(60)}
	}
	fromUniform, _, err := KTDToOriginal(m, original, uniform, 3)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("KTD: model %v, train %v, uniform %v", fromModel, train, fromUniform)
	if !(fromModel.Mean < fromUniform.Mean) || !(train.Mean < fromUniform.Mean) {
		t.Errorf("KTD of the model's samples %v and of the original's train %v, not below uniform triples' %v", fromModel, train, fromUniform)
	}
	plus, err := planted("complex+", models.Sizes{Entities: 6, Relations: 1, Rank: 2}, 1, 0, tensor.Float64)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := KTDToOriginal(plus, original, orig, 1); err == nil || !strings.Contains(err.Error(), "product units") {
		t.Errorf("a + model: %v", err)
	}
}
