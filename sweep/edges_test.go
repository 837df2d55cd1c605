package sweep

import (
	"bytes"
	"encoding/json"
	"testing"

	"gekc/grid"
	"gekc/runspec"
)

// sbatch's time formats, days included: D-HH, D-HH:MM, D-HH:MM:SS, MM,
// MM:SS, HH:MM:SS.
func TestSlurmMinutes(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
	}{{"1-02:30", 1590}, {"0-01:30", 90}, {"2-00", 2880}, {"1-00:00:59", 1440}, {"90", 90}, {"90:30", 90}, {"01:30:00", 90}} {
		if got, ok := slurmMinutes(c.in); !ok || got != c.want {
			t.Errorf("slurmMinutes(%q) = %d, %v; want %d", c.in, got, ok, c.want)
		}
	}
	if _, ok := slurmMinutes("x-01"); ok {
		t.Error("a day count that is not a number is accepted")
	}
}

// A memory request rounds up to whole GiB.
func TestGibibytesUp(t *testing.T) {
	for _, c := range []struct{ bytes, want int64 }{{0, 1}, {1, 1}, {1 << 30, 1}, {1<<30 + 1, 2}, {3 << 29, 2}, {5 << 30, 5}} {
		if got := gibibytesUp(c.bytes); got != c.want {
			t.Errorf("gibibytesUp(%d) = %d, want %d", c.bytes, got, c.want)
		}
	}
}

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
