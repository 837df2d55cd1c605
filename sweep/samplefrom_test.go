package sweep

import (
	"strings"
	"testing"

	"gekc/grid"
	"gekc/runspec"
)

// sample_from is checked with the grid: a value it does not know, a
// validation without the log-likelihood, an energy-based model.
func TestSampleFromValidation(t *testing.T) {
	for _, c := range []struct{ keys, want string }{
		{`model = "complex2"` + "\n" + `sample_from = "best"`, `sample_from "best": want "select"`},
		{`model = "complex2"` + "\n" + `sample_from = "ll"` + "\n" + `eval = { metrics = ["mrr"] }`, `sample_from "ll": eval.metrics has no "ll"`},
		{`model = "complex"` + "\n" + `sample_from = "ll"`, `model "complex" with sample_from = "ll": it is energy-based`},
	} {
		src := "name = \"v\"\n[defaults]\ndataset = \"nations\"\nrank = 4\nbatch_size = 100\nlearning_rate = 0.01\nepochs = 1\nobjective = \"pll\"\n" + c.keys + "\n[[sweep]]\n"
		_, err := grid.ParseGrid("grid.toml", []byte(src), runspec.Validate)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.keys, err, c.want)
		}
	}
	if _, err := grid.ParseGrid("grid.toml", []byte("name = \"v\"\n[defaults]\ndataset = \"nations\"\nrank = 4\nbatch_size = 100\nlearning_rate = 0.01\nepochs = 1\nobjective = \"pll\"\nmodel = \"cp2\"\nsample_from = \"select\"\n[[sweep]]\n"), runspec.Validate); err != nil {
		t.Errorf("sample_from = \"select\": %v", err)
	}
}
