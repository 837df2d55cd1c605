package sweep

import (
	"bytes"
	"encoding/json"
	"testing"

	"gekc/grid"
	"gekc/runspec"
)

// The dry run's JSON says 1 process for a run that does not set them.
func TestRunJSONProcesses(t *testing.T) {
	g, err := grid.ParseGrid("g.toml", []byte(`name = "p"
[defaults]
dataset = "nations"
model = "cp2"
rank = 2
objective = "mle"
learning_rate = 0.1
batch_size = 10
epochs = 1
[[sweep]]
seed = 0
[[sweep]]
seed = 1
processes = 3
`), runspec.Validate)
	must(t, err)
	var b bytes.Buffer
	must(t, WriteRunJSON(&b, g, g.Runs, t.TempDir(), t.TempDir()))
	dec := json.NewDecoder(&b)
	for _, want := range []int{1, 3} {
		var r RunJSON
		must(t, dec.Decode(&r))
		if r.Processes != want {
			t.Errorf("run %d: processes %d, want %d", r.Index, r.Processes, want)
		}
	}
}
