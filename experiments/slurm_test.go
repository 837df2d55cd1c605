package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestEmitSlurm(t *testing.T) {
	tests := []struct {
		name      string
		extra     []string
		wantArray string
		wantArgs  string
	}{
		{"every run", nil, "0-11", ""},
		{"a selection", []string{"-only", "0-2,5,9-11"}, "0-2,5,9-11", ""},
		{"with -samples", []string{"-samples", "100"}, "0-11", "-samples=100"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fx := newSweepFixture(t, toyGrid)
			fake := newFake()
			code, stdout, stderr := runInProcess(t, context.Background(), fake, fx.args(append([]string{"-emit", "slurm"}, tt.extra...)...)...)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if fake.totalCalls() != 0 {
				t.Error("-emit trained runs")
			}
			path := filepath.Join(fx.out, "sbatch.sh")
			if !strings.Contains(stdout, path) {
				t.Errorf("stdout does not name the script: %s", stdout)
			}
			st, err := os.Stat(path)
			must(t, err)
			if st.Mode().Perm()&0o100 == 0 {
				t.Error("sbatch.sh is not executable")
			}
			data, err := os.ReadFile(path)
			must(t, err)
			script := string(data)
			if err := containsAll(script,
				"#!/usr/bin/env bash",
				"#SBATCH --job-name=gekc-toy",
				"#SBATCH --array="+tt.wantArray,
				"#SBATCH --cpus-per-task=",
				"#SBATCH --mem=",
				"#SBATCH --time=",
				"#SBATCH --output="+fx.out+"/slurm/%A_%a.out",
				"ARRAY="+tt.wantArray,
				"CPUS_PER_TASK=", "MEM=", "TIME=",
				"OUT="+fx.out,
				"GRID="+filepath.Join(fx.out, gridCopyName),
				"go build -o \"$BIN\" ./experiments",
				`-only "$SLURM_ARRAY_TASK_ID"`,
			); err != nil {
				t.Errorf("%v\n%s", err, script)
			}
			if tt.wantArgs != "" && !strings.Contains(script, tt.wantArgs) {
				t.Errorf("script lacks %s", tt.wantArgs)
			}
			if !fileExists(filepath.Join(fx.out, gridCopyName)) || !fileExists(filepath.Join(fx.out, "slurm")) {
				t.Error("the grid copy or the log directory is missing")
			}
			if bash, err := exec.LookPath("bash"); err == nil {
				if out, err := exec.Command(bash, "-n", path).CombinedOutput(); err != nil {
					t.Errorf("bash -n: %v\n%s", err, out)
				}
			}
		})
	}
}

// The script does what it says: on the login node it builds and submits;
// in an array task it runs the binary on run SLURM_ARRAY_TASK_ID. go and
// sbatch are replaced by stubs that record their arguments.
func TestSlurmScriptRuns(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	fx := newSweepFixture(t, toyGrid)
	if code, _, stderr := runInProcess(t, context.Background(), newFake(), fx.args("-emit", "slurm", "-samples", "3")...); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	script := filepath.Join(fx.out, "sbatch.sh")
	data, err := os.ReadFile(script)
	must(t, err)
	// Point BIN at a stub binary.
	stubs := filepath.Join(fx.dir, "stubs")
	must(t, os.MkdirAll(stubs, 0o755))
	bin := filepath.Join(stubs, "gekc-experiments")
	record := filepath.Join(fx.dir, "record")
	stub := "#!/usr/bin/env bash\necho \"$(basename \"$0\") $*\" >> " + shellQuote(record) + "\n"
	for _, name := range []string{"gekc-experiments", "go", "sbatch"} {
		must(t, os.WriteFile(filepath.Join(stubs, name), []byte(stub), 0o755))
	}
	edited := regexp.MustCompile(`(?m)^BIN=.*$`).ReplaceAllString(string(data), "BIN="+shellQuote(bin))
	must(t, os.WriteFile(script, []byte(edited), 0o755))
	env := append(os.Environ(), "PATH="+stubs+":"+os.Getenv("PATH"))

	// Login node.
	cmd := exec.Command(bash, script)
	cmd.Env = append(env, "SLURM_ARRAY_TASK_ID=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("submitting: %v\n%s", err, out)
	}
	// Array task 7.
	cmd = exec.Command(bash, script)
	cmd.Env = append(env, "SLURM_ARRAY_TASK_ID=7", "SLURM_CPUS_PER_TASK=3")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("array task: %v\n%s", err, out)
	}
	got, err := os.ReadFile(record)
	must(t, err)
	lines := strings.Split(strings.TrimSpace(string(got)), "\n")
	if len(lines) != 3 {
		t.Fatalf("recorded calls:\n%s", got)
	}
	if !strings.HasPrefix(lines[0], "go build -o "+bin+" ./experiments") {
		t.Errorf("build: %s", lines[0])
	}
	if err := containsAll(lines[1], "sbatch ", "--array=0-11", "--job-name=gekc-toy", "--cpus-per-task=4", "--output="+fx.out+"/slurm/%A_%a.out", script); err != nil {
		t.Errorf("submit %q: %v", lines[1], err)
	}
	want := "gekc-experiments -grid " + filepath.Join(fx.out, gridCopyName) + " -out " + fx.out + " -data " + fx.data + " -only 7 -v -samples=3"
	if lines[2] != want {
		t.Errorf("task ran\n %q\nwant\n %q", lines[2], want)
	}
}

// Resources and the stop-and-requeue settings are in the script, as
// #SBATCH lines and as the options of the login node's sbatch call; bad
// resource flags are refused before anything is written.
func TestEmitSlurmResources(t *testing.T) {
	fx := newSweepFixture(t, toyGrid)
	code, stdout, stderr := runInProcess(t, context.Background(), newFake(),
		fx.args("-emit", "slurm", "-slurm-cpus", "2", "-slurm-mem", "3G", "-slurm-time", "1-12:00", "-slurm-partition", "long", "-slurm-signal-before", "2m")...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "each 2 CPU(s), 3G of memory, time limit 1-12:00") {
		t.Errorf("stdout does not give the resources: %s", stdout)
	}
	data, err := os.ReadFile(filepath.Join(fx.out, "sbatch.sh"))
	must(t, err)
	if err := containsAll(string(data),
		"#SBATCH --cpus-per-task=2\n", "#SBATCH --mem=3G\n", "#SBATCH --time=1-12:00\n", "#SBATCH --partition=long\n",
		"#SBATCH --requeue\n", "#SBATCH --signal=B:USR1@120\n", "#SBATCH --open-mode=append\n",
		"CPUS_PER_TASK=2", "MEM=3G", "TIME=1-12:00", "SIGNAL_BEFORE=120", "PARTITION=long",
		`--requeue --signal="B:USR1@$SIGNAL_BEFORE"`, "--open-mode=append",
		`export OPENBLAS_NUM_THREADS="$GOMAXPROCS"`,
	); err != nil {
		t.Error(err)
	}

	for _, bad := range [][]string{
		{"-slurm-cpus", "0"}, {"-slurm-time", "12h"}, {"-slurm-mem", "lots"},
		{"-slurm-time", "10", "-slurm-signal-before", "10m"}, {"-slurm-signal-before", "0s"}, {"-slurm-partition", "a b"},
	} {
		fx := newSweepFixture(t, toyGrid)
		code, _, stderr := runInProcess(t, context.Background(), newFake(), fx.args(append([]string{"-emit", "slurm"}, bad...)...)...)
		if code != exitUsage || !strings.Contains(stderr, bad[len(bad)-2]) {
			t.Errorf("%v: exit %d, want %d and the flag named: %s", bad, code, exitUsage, stderr)
		}
		if fileExists(filepath.Join(fx.out, "sbatch.sh")) {
			t.Errorf("%v: the script was written", bad)
		}
	}
}

// In an array task, USR1 (sent by SLURM ahead of the time limit) makes the
// script pass SIGTERM to the run and, once the run has exited as
// interrupted (130, state saved), requeue its own job. SIGTERM to the
// script alone (scancel reaches every process of the job) does not
// requeue. A run that ends normally is not requeued either.
func TestSlurmScriptRequeuesOnUSR1(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	for _, tt := range []struct {
		name    string
		signal  syscall.Signal
		runExit string // what the stub run does on SIGTERM
		requeue bool
	}{
		{"time limit near", syscall.SIGUSR1, "130", true},
		{"run finished anyway", syscall.SIGUSR1, "0", false},
		{"scancel", syscall.SIGTERM, "130", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fx := newSweepFixture(t, toyGrid)
			if code, _, stderr := runInProcess(t, context.Background(), newFake(), fx.args("-emit", "slurm")...); code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			script := filepath.Join(fx.out, "sbatch.sh")
			data, err := os.ReadFile(script)
			must(t, err)
			stubs := filepath.Join(fx.dir, "stubs")
			must(t, os.MkdirAll(stubs, 0o755))
			record := filepath.Join(fx.dir, "record")
			started := filepath.Join(fx.dir, "started")
			bin := filepath.Join(stubs, "gekc-experiments")
			// The stub run says it started, then waits for SIGTERM.
			run := "#!/usr/bin/env bash\ntrap 'echo run got TERM >> " + shellQuote(record) + "; exit " + tt.runExit + "' TERM\n" +
				"echo $$ > " + shellQuote(started) + ".tmp; mv " + shellQuote(started) + ".tmp " + shellQuote(started) + "\nwhile :; do sleep 0.05; done\n"
			must(t, os.WriteFile(bin, []byte(run), 0o755))
			must(t, os.WriteFile(filepath.Join(stubs, "scontrol"), []byte("#!/usr/bin/env bash\necho \"scontrol $*\" >> "+shellQuote(record)+"\n"), 0o755))
			edited := regexp.MustCompile(`(?m)^BIN=.*$`).ReplaceAllString(string(data), "BIN="+shellQuote(bin))
			must(t, os.WriteFile(script, []byte(edited), 0o755))

			cmd := exec.Command(bash, script)
			cmd.Env = append(os.Environ(), "PATH="+stubs+":"+os.Getenv("PATH"), "SLURM_ARRAY_TASK_ID=3", "SLURM_ARRAY_JOB_ID=40", "SLURM_JOB_ID=43")
			var out strings.Builder
			cmd.Stdout, cmd.Stderr = &out, &out
			must(t, cmd.Start())
			deadline := time.Now().Add(10 * time.Second)
			for !fileExists(started) && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			must(t, cmd.Process.Signal(tt.signal))
			if tt.signal == syscall.SIGTERM {
				// As from SLURM: the run gets its own SIGTERM.
				time.Sleep(100 * time.Millisecond)
				pid, err := os.ReadFile(started)
				must(t, err)
				n, err := strconv.Atoi(strings.TrimSpace(string(pid)))
				must(t, err)
				must(t, syscall.Kill(n, syscall.SIGTERM))
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				cmd.Process.Kill()
				t.Fatalf("the script did not end:\n%s", out.String())
			}
			got, _ := os.ReadFile(record)
			if !strings.Contains(string(got), "run got TERM") {
				t.Errorf("the run was not told to stop; record:\n%s\nscript output:\n%s", got, out.String())
			}
			if requeued := strings.Contains(string(got), "scontrol requeue 43"); requeued != tt.requeue {
				t.Errorf("requeued %v, want %v; record:\n%s\nscript output:\n%s", requeued, tt.requeue, got, out.String())
			}
			if ws := cmd.ProcessState.ExitCode(); strconv.Itoa(ws) != tt.runExit {
				t.Errorf("script exit %d, want the run's %s", ws, tt.runExit)
			}
		})
	}
}
