package analysis

import (
	"path/filepath"
	"strings"
	"testing"

	"gekc/kg"
	"gekc/metrics"
	"gekc/models"
)

// On a CP+ model whose components have unequal masses, both draws report
// a KTD and their training share, and the perplexity is below the rank; a
// squared model is refused (no mixture of components).
func TestUniformComponents(t *testing.T) {
	ds, err := kg.Load(filepath.Join("..", "data", "nations"))
	if err != nil {
		t.Fatal(err)
	}
	sz := models.Sizes{Entities: ds.Entities.Len(), Relations: ds.Relations.Len(), Rank: 4}
	m, err := models.New("cp+", sz, models.Options{Seed: 3, InitScale: 0.3})
	if err != nil {
		t.Fatal(err)
	}
	feats, err := models.New("complex", sz, models.Options{Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	psi, err := metrics.ProductUnitFeatures(feats)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := UniformComponents(&b, "run", m, ds, psi, 300, 1); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"run (cp+): component perplexity", "of 4\n", "components by mass (exact): KTD", "components uniform (the paper's code): KTD", "% of samples are training triples"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	sq, _ := models.New("cp2", sz, models.Options{Seed: 3})
	if err := UniformComponents(&b, "run", sq, ds, psi, 10, 1); err == nil {
		t.Error("a squared model is accepted")
	}
	if got := shareIn([]kg.Triple{{S: 1}, {S: 2}, {S: 1}, {S: 3}}, []kg.Triple{{S: 1}}); got != 0.5 {
		t.Errorf("shareIn = %v, want 0.5", got)
	}
}
