package procstat

import (
	"strings"
	"testing"
)

func TestField(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		err  bool
	}{
		{"Name:\tx\nVmPeak:\t  100 kB\nVmHWM:\t    2048 kB\nVmRSS:\t 10 kB\n", 2048 * 1024, false},
		{"VmHWM: 1 MB\n", 0, true},
		{"VmHWM: x kB\n", 0, true},
		{"Name: x\n", 0, true},
	}
	for _, tt := range tests {
		got, err := Field([]byte(tt.in), "VmHWM:")
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("Field(%q) = %d, %v", tt.in, got, err)
		}
	}
	// On Linux the real thing works, and resetting is allowed.
	if _, err := PeakRSS(); err == nil {
		if err := ResetPeakRSS(); err != nil {
			t.Logf("clear_refs not writable here: %v", err)
		}
		if rss, err := PeakRSS(); err != nil || rss <= 0 {
			t.Errorf("peak RSS after reset: %d, %v", rss, err)
		}
	}
}

func TestParseCPUInfo(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC\nflags\t\t: fpu\n\nprocessor\t: 1\nmodel name\t: AMD EPYC\n", "AMD EPYC × 2"},
		{"processor : 0\nmodel name : Intel(R) Xeon(R) CPU @ 2.20GHz\n", "Intel(R) Xeon(R) CPU @ 2.20GHz × 2"},
		{"processor\t: 0\nCPU implementer\t: 0x41\n", ""}, // arm64 names no model
		{"", ""},
	} {
		if got := parseCPUInfo(strings.NewReader(tt.in), 2); got != tt.want {
			t.Errorf("parseCPUInfo(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
