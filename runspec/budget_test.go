package runspec

import (
	"strings"
	"testing"

	"gekc/grid"
	"gekc/internal/procstat"
)

// A run's budget comes from its memory key, else GOMEMLIMIT (unless
// "off"), else 90% of the machine's memory.
func TestMemoryBudget(t *testing.T) {
	total, err := procstat.MemTotal()
	if err != nil {
		t.Fatalf("this test needs /proc/meminfo: %v", err)
	}
	tests := []struct {
		key, env string
		want     int64
		err      string // substring of the error; "" = none
	}{
		{"2GiB", "", 2 << 30, ""},
		{"0", "3GiB", 0, ""},          // "0": no budget, whatever the environment
		{"2GiB", "3GiB", 2 << 30, ""}, // the key wins
		{"", "3GiB", 3 << 30, ""},
		{"", "1048576", 1 << 20, ""},
		{"", "off", total / 10 * 9, ""},
		{"", "", total / 10 * 9, ""},
		{"lots", "", 0, "memory: "},
		{"", "lots", 0, "GOMEMLIMIT: "},
	}
	for _, tt := range tests {
		t.Setenv("GOMEMLIMIT", tt.env)
		spec := grid.DefaultRunSpec()
		spec.Memory = tt.key
		got, err := MemoryBudget(spec)
		switch {
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("memory %q, GOMEMLIMIT %q: error %v, want one containing %q", tt.key, tt.env, err, tt.err)
		case tt.err == "" && (err != nil || got != tt.want):
			t.Errorf("memory %q, GOMEMLIMIT %q: %d, %v; want %d", tt.key, tt.env, got, err, tt.want)
		}
	}
}
