package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gekc/resultsdir"
	"gekc/sweep/sweeptest"
)

// -emit slurm on the command line (the script itself, and what it does
// when run, are sweep's slurm tests): the flags and their defaults reach
// the script, nothing is trained, stdout names the script, and a resource
// the script cannot ask for is a usage error that writes nothing.
func TestEmitSlurm(t *testing.T) {
	fx := newSweepFixture(t, sweeptest.ToyGrid)
	script := filepath.Join(fx.out, "sbatch.sh")
	code, _, stderr := runInProcess(t, context.Background(), newFake(), fx.args("-emit", "slurm", "-slurm-time", "10", "-slurm-signal-before", "10m")...)
	if code != exitUsage || !strings.Contains(stderr, "-slurm-signal-before") || fileExists(script) {
		t.Errorf("a signal as late as the time limit: exit %d, want %d and the flag named, and no script: %s", code, exitUsage, stderr)
	}

	for _, c := range []struct {
		args, want []string
	}{
		{nil, []string{"--array=0-11\n", "--cpus-per-task=4\n", "--time=12:00:00\n", "--signal=B:USR1@300\n", "PARTITION=''",
			"OUT=" + fx.out + "\n", "DATA=" + fx.data + "\n", "GRID=" + filepath.Join(fx.out, resultsdir.GridCopyName) + "\n", "EXTRA_ARGS=()"}},
		{[]string{"-only", "0-2,5,9-11", "-samples", "100"}, []string{"--array=0-2,5,9-11\n", "EXTRA_ARGS=(-samples=100 )"}},
		{[]string{"-samples", "0"}, []string{"EXTRA_ARGS=(-samples=0 )"}},
		{[]string{"-slurm-cpus", "2", "-slurm-mem", "3G", "-slurm-time", "1-12:00", "-slurm-partition", "long", "-slurm-signal-before", "2m"},
			[]string{"--cpus-per-task=2\n", "--mem=3G\n", "--time=1-12:00\n", "--partition=long\n", "--signal=B:USR1@120\n"}},
	} {
		fake := newFake()
		code, stdout, stderr := runInProcess(t, context.Background(), fake, fx.args(append([]string{"-emit", "slurm"}, c.args...)...)...)
		if code != exitOK || fake.TotalCalls() != 0 || !strings.Contains(stdout, script) {
			t.Fatalf("%q: exit %d, %d runs trained, stdout %q: %s", c.args, code, fake.TotalCalls(), stdout, stderr)
		}
		data, err := os.ReadFile(script)
		must(t, err)
		if err := containsAll(string(data), c.want...); err != nil {
			t.Errorf("%q: %v\n%s", c.args, err, data)
		}
	}
}
