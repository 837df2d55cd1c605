package analysis

import (
	"bytes"
	"image/png"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gekc/kg"
)

// -analyze tsne draws each GeKC's figure beside its record (not the
// energy-based ψ's own), says what it embedded, and draws the same figure
// again; without -features it says what it needs.
func TestTSNEAnalysis(t *testing.T) {
	data := shippedData(t, "nations")
	ts := psiAndGeKC(t, data)
	ids := ts.ids()
	a := analysisJob{Kind: "tsne", Features: ids[0], Samples: 300, Out: ts.out, DataRoot: data, Runs: ts.g.Runs}
	_, stderr := mustAnalyze(t, a)
	fig := filepath.Join(ts.out, runsDirName, ids[1], TSNEName)
	first, err := os.ReadFile(fig)
	must(t, err)
	if dst := os.Getenv("GEKC_TSNE_COPY"); dst != "" {
		must(t, os.WriteFile(dst, first, 0o644))
	}
	if _, err := png.Decode(bytes.NewReader(first)); err != nil {
		t.Errorf("%s: %v", fig, err)
	}
	if _, err := os.Stat(filepath.Join(ts.out, runsDirName, ids[0], TSNEName)); err == nil {
		t.Error("the energy-based ψ run got a t-SNE figure")
	}
	if !strings.Contains(stderr, ids[1]+": t-SNE of 201 test and 201 sampled triples, Barnes–Hut at angle 0.5, perplexity 50, ") { // Nations: 201 test triples
		t.Errorf("stderr:\n%s", stderr)
	}
	mustAnalyze(t, a)
	if again, err := os.ReadFile(fig); err != nil || !bytes.Equal(again, first) {
		t.Errorf("a second analysis drew another figure (%v)", err)
	}
	a.Features = ""
	if _, _, err := runAnalysis(a); err == nil || !strings.Contains(err.Error(), "-analyze tsne needs -features") {
		t.Errorf("no -features: %v", err)
	}
}

// draw takes n distinct triples when there are more, all of them else.
func TestTSNEDraw(t *testing.T) {
	ts := make([]kg.Triple, 50)
	for i := range ts {
		ts[i] = kg.Triple{S: int32(i)}
	}
	got := draw(ts, 20, rand.New(rand.NewPCG(1, 2)))
	seen := map[kg.Triple]bool{}
	for _, tr := range got {
		seen[tr] = true
	}
	if len(got) != 20 || len(seen) != 20 {
		t.Errorf("20 of 50: %d drawn, %d distinct", len(got), len(seen))
	}
	if all := draw(ts, 80, rand.New(rand.NewPCG(1, 2))); len(all) != 50 {
		t.Errorf("80 of 50: %d", len(all))
	}
}
