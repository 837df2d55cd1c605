package slurm

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"gekc/grid"
	"gekc/kg"
	"gekc/report"
	"gekc/resultsdir"
)

func TestShellQuote(t *testing.T) {
	tests := map[string]string{
		"plain/path-1.toml": "plain/path-1.toml",
		"":                  "''",
		"with space":        "'with space'",
		"it's":              `'it'\''s'`,
		"$HOME":             "'$HOME'",
	}
	for in, want := range tests {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

// The memory asked for is at least what the committed UMLS sweep measured
// (peak_rss_mb of results/umls-reference/results.tsv), run by run.
func TestMemoryEstimateCoversMeasuredPeaks(t *testing.T) {
	data := shippedData(t, "umls")
	ds, err := resultsdir.LoadDataset(filepath.Join(data, "umls"))
	must(t, err)
	table, err := report.ReadTSV(filepath.Join("..", "results", "umls-reference", resultsTSVName))
	must(t, err)
	n := 0
	for _, row := range table.Rows {
		spec := grid.DefaultRunSpec()
		spec.Model, spec.DType = row["model"], "float32"
		spec.Rank, _ = strconv.Atoi(row["rank"])
		spec.BatchSize, _ = strconv.Atoi(row["batch_size"])
		peak, err := strconv.ParseFloat(row["peak_rss_mb"], 64)
		if err != nil || spec.Rank == 0 {
			continue
		}
		est, err := estimateMemoryBytes(spec, ds.Entities.Len(), ds.Relations.Len())
		must(t, err)
		if float64(est) < peak*(1<<20) {
			t.Errorf("%s: estimate %d MiB, measured %.0f MiB", row["id"], est>>20, peak)
		}
		n++
	}
	if n == 0 {
		t.Fatal("no rows checked")
	}
}

// toySlurm is the job array of sweeptest.ToyGrid's runs selected by only, with the
// command's default resources, emitted into a new directory; it returns
// the script's path and what Emit printed on stdout.
func toySlurm(t *testing.T, only string, edit func(*Array)) (ts toySweep, script, stdout string) {
	t.Helper()
	ts = newToySweep(t)
	runs, err := grid.Select(only, ts.g.Runs)
	must(t, err)
	o := &Array{CPUs: 4, Time: "12:00:00", SignalBefore: 5 * time.Minute,
		Out: ts.out, DataRoot: ts.data, Repo: filepath.Dir(ts.out), Args: []string{"-grid", "toy.toml", "-emit", "slurm"}}
	if edit != nil {
		edit(o)
	}
	must(t, o.Check())
	var out strings.Builder
	must(t, o.Emit(&out, io.Discard, ts.g, runs))
	return ts, filepath.Join(ts.out, "sbatch.sh"), out.String()
}

// The script asks for what the Array says, as #SBATCH lines and as the
// options of the login node's sbatch call, runs the selected runs as its
// array, and is valid bash; Emit names it and its resources on stdout and
// writes the grid copy the tasks read and the log directory.
func TestSlurmEmit(t *testing.T) {
	for _, c := range []struct {
		name   string
		only   string
		edit   func(*Array)
		want   []string // in the script, besides what every script has
		stdout string
		absent []string // not in the script
	}{
		{"every run", "", nil, []string{"#SBATCH --array=0-11\n", "ARRAY=0-11"}, "(12 array tasks; each 4 CPU(s)", []string{"-samples"}},
		{"a selection", "0-2,5,9-11", nil, []string{"#SBATCH --array=0-2,5,9-11\n", "ARRAY=0-2,5,9-11"}, "(7 array tasks", nil},
		{"with samples", "", func(o *Array) { o.Samples = 100 }, []string{"#SBATCH --array=0-11\n", "ARRAY=0-11", "-samples=100"}, "", nil},
		{"without samples", "", func(o *Array) { o.NoSamples = true }, []string{"-samples=0"}, "", nil},
		{"resources", "", func(o *Array) {
			o.CPUs, o.Mem, o.Time, o.Partition, o.SignalBefore = 2, "3G", "1-12:00", "long", 2*time.Minute
		}, []string{
			"#SBATCH --cpus-per-task=2\n", "#SBATCH --mem=3G\n", "#SBATCH --time=1-12:00\n", "#SBATCH --partition=long\n",
			"#SBATCH --signal=B:USR1@120\n", "CPUS_PER_TASK=2", "MEM=3G", "TIME=1-12:00", "SIGNAL_BEFORE=120", "PARTITION=long",
		}, "each 2 CPU(s), 3G of memory, time limit 1-12:00", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			ts, path, stdout := toySlurm(t, c.only, c.edit)
			if !strings.Contains(stdout, path) || !strings.Contains(stdout, c.stdout) {
				t.Errorf("stdout does not name the script and %q: %s", c.stdout, stdout)
			}
			st, err := os.Stat(path)
			must(t, err)
			if st.Mode().Perm()&0o100 == 0 {
				t.Error("sbatch.sh is not executable")
			}
			data, err := os.ReadFile(path)
			must(t, err)
			script := string(data)
			if err := containsAll(script, append([]string{
				"#!/usr/bin/env bash",
				"#SBATCH --job-name=gekc-toy",
				"#SBATCH --cpus-per-task=",
				"#SBATCH --mem=",
				"#SBATCH --time=",
				"#SBATCH --output=" + ts.out + "/slurm/%A_%a.out",
				"#SBATCH --requeue\n", "#SBATCH --open-mode=append\n",
				"CPUS_PER_TASK=", "MEM=", "TIME=",
				"OUT=" + ts.out,
				"GRID=" + filepath.Join(ts.out, GridCopyName),
				"go build -o \"$BIN\" ./experiments",
				`--requeue --signal="B:USR1@$SIGNAL_BEFORE"`, "--open-mode=append",
				`-only "$SLURM_ARRAY_TASK_ID"`,
				`export OPENBLAS_NUM_THREADS="$GOMAXPROCS"`,
			}, c.want...)...); err != nil {
				t.Errorf("%v\n%s", err, script)
			}
			for _, a := range c.absent {
				if strings.Contains(script, a) {
					t.Errorf("the script has %q\n%s", a, script)
				}
			}
			if !fileExists(filepath.Join(ts.out, GridCopyName)) || !fileExists(filepath.Join(ts.out, "slurm")) {
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

// Check names the flag of each resource the script cannot ask for.
func TestSlurmCheck(t *testing.T) {
	for _, c := range []struct {
		edit func(*Array)
		want string // "" for accepted
	}{
		{func(*Array) {}, ""},
		{func(o *Array) { o.CPUs = 0 }, "-slurm-cpus"},
		{func(o *Array) { o.Time = "12h" }, "-slurm-time"},
		{func(o *Array) { o.Mem = "lots" }, "-slurm-mem"},
		{func(o *Array) { o.Time, o.SignalBefore = "10", 10*time.Minute }, "-slurm-signal-before"},
		{func(o *Array) { o.SignalBefore = 0 }, "-slurm-signal-before"},
		{func(o *Array) { o.Partition = "a b" }, "-slurm-partition"},
	} {
		o := &Array{CPUs: 4, Time: "12:00:00", SignalBefore: 5 * time.Minute}
		c.edit(o)
		err := o.Check()
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%+v: %v, want an error naming %q", *o, err, c.want)
		}
	}
}

// stubScript points the BIN of the script at path at bin, and returns
// the environment that puts the directory stubs first in PATH.
func stubScript(t *testing.T, path, bin, stubs string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	must(t, err)
	edited := regexp.MustCompile(`(?m)^BIN=.*$`).ReplaceAllString(string(data), "BIN="+shellQuote(bin))
	must(t, os.WriteFile(path, []byte(edited), 0o755))
	return append(os.Environ(), "PATH="+stubs+":"+os.Getenv("PATH"))
}

// The script does what it says: on the login node it builds and submits;
// in an array task it runs the binary on run SLURM_ARRAY_TASK_ID. go and
// sbatch are replaced by stubs that record their arguments.
func TestSlurmScriptRuns(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	ts, script, _ := toySlurm(t, "", func(o *Array) { o.Samples = 3 })
	dir := t.TempDir()
	stubs := filepath.Join(dir, "stubs")
	must(t, os.MkdirAll(stubs, 0o755))
	bin := filepath.Join(stubs, "gekc-experiments")
	record := filepath.Join(dir, "record")
	stub := "#!/usr/bin/env bash\necho \"$(basename \"$0\") $*\" >> " + shellQuote(record) + "\n"
	for _, name := range []string{"gekc-experiments", "go", "sbatch"} {
		must(t, os.WriteFile(filepath.Join(stubs, name), []byte(stub), 0o755))
	}
	env := stubScript(t, script, bin, stubs)

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
	if err := containsAll(lines[1], "sbatch ", "--array=0-11", "--job-name=gekc-toy", "--cpus-per-task=4", "--output="+ts.out+"/slurm/%A_%a.out", script); err != nil {
		t.Errorf("submit %q: %v", lines[1], err)
	}
	want := "gekc-experiments -grid " + filepath.Join(ts.out, GridCopyName) + " -out " + ts.out + " -data " + ts.data + " -only 7 -v -samples=3"
	if lines[2] != want {
		t.Errorf("task ran\n %q\nwant\n %q", lines[2], want)
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
			_, script, _ := toySlurm(t, "", nil)
			dir := t.TempDir()
			stubs := filepath.Join(dir, "stubs")
			must(t, os.MkdirAll(stubs, 0o755))
			record := filepath.Join(dir, "record")
			started := filepath.Join(dir, "started")
			bin := filepath.Join(stubs, "gekc-experiments")
			// The stub run says it started, then waits for SIGTERM.
			run := "#!/usr/bin/env bash\ntrap 'echo run got TERM >> " + shellQuote(record) + "; exit " + tt.runExit + "' TERM\n" +
				"echo $$ > " + shellQuote(started) + ".tmp; mv " + shellQuote(started) + ".tmp " + shellQuote(started) + "\nwhile :; do sleep 0.05; done\n"
			must(t, os.WriteFile(bin, []byte(run), 0o755))
			must(t, os.WriteFile(filepath.Join(stubs, "scontrol"), []byte("#!/usr/bin/env bash\necho \"scontrol $*\" >> "+shellQuote(record)+"\n"), 0o755))
			env := stubScript(t, script, bin, stubs)

			cmd := exec.Command(bash, script)
			cmd.Env = append(env, "SLURM_ARRAY_TASK_ID=3", "SLURM_ARRAY_JOB_ID=40", "SLURM_JOB_ID=43")
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

// The array's --mem counts a data set tested on (eval.test_on) on top of
// the run's own estimate, and says so when that data set cannot be read.
func TestSlurmMemoryCountsTestOn(t *testing.T) {
	data := shippedData(t, "umls")
	spec := grid.DefaultRunSpec()
	spec.Dataset, spec.Model, spec.Objective, spec.Rank, spec.BatchSize = "nations", "cp", "pll", 4, 10
	own, err := slurmRunBytes(spec, data)
	must(t, err)
	spec.Eval.TestOn = "umls"
	with, err := slurmRunBytes(spec, data)
	must(t, err)
	umls, err := resultsdir.LoadDataset(filepath.Join(data, "umls"))
	must(t, err)
	n := len(umls.Train) + len(umls.Valid) + len(umls.Test)
	if want := own + umls.Bytes() + 12*int64(n) + kg.FilterBytes(n, 14, 55); with != want {
		t.Errorf("tested on umls: %d bytes, want %d (%d of its own)", with, want, own)
	}
	spec.Eval.TestOn = "missing"
	g := &grid.Grid{Runs: []grid.Run{{ID: "r", Spec: spec}}}
	if mem, note := slurmMemory(g.Runs, data); mem != "16G" || !strings.Contains(note, "missing (eval.test_on) could not be read") {
		t.Errorf("a test_on data set that cannot be read: --mem %s, %q", mem, note)
	}
}

// A grid whose runs ask for several processes gets an array whose tasks
// each ask for that many SLURM tasks, build bin/gekc-mpi and launch it with
// srun; runs asking for different counts are refused together.
func TestSlurmEmitSharded(t *testing.T) {
	ts := newToySweep(t)
	runs, err := grid.Select("0-2", ts.g.Runs)
	must(t, err)
	for i := range runs {
		runs[i].Spec.Processes = 3
	}
	o := &Array{CPUs: 2, Time: "1:00:00", SignalBefore: time.Minute, Out: ts.out, DataRoot: ts.data, Repo: filepath.Dir(ts.out)}
	var out strings.Builder
	must(t, o.Emit(&out, io.Discard, ts.g, runs))
	data, err := os.ReadFile(filepath.Join(ts.out, "sbatch.sh"))
	must(t, err)
	script := string(data)
	if err := containsAll(script, "#SBATCH --ntasks=3\n", "NTASKS=3", "SRUN_MPI=pmix", `--ntasks="$NTASKS"`,
		"go build -tags mpi -o \"$BIN\" ./experiments", "BIN="+filepath.Join(filepath.Dir(ts.out), "gekc-mpi"),
		`srun --mpi="$SRUN_MPI" --ntasks="$NTASKS" --cpus-per-task="$CPUS_PER_TASK" --kill-on-bad-exit=1`, `-only "$SLURM_ARRAY_TASK_ID"`); err != nil {
		t.Errorf("%v\n%s", err, script)
	}
	if !strings.Contains(out.String(), "each 3 processes of 2 CPU(s) under srun") {
		t.Errorf("stdout: %s", out.String())
	}
	if bash, err := exec.LookPath("bash"); err == nil {
		if b, err := exec.Command(bash, "-n", filepath.Join(ts.out, "sbatch.sh")).CombinedOutput(); err != nil {
			t.Errorf("bash -n: %v\n%s", err, b)
		}
	}
	runs[1].Spec.Processes = 2
	if err := o.Emit(io.Discard, io.Discard, ts.g, runs); err == nil || !strings.Contains(err.Error(), "emit them apart with -only") {
		t.Errorf("runs asking for 3 and 2 processes: %v", err)
	}
}

// A search's script chains one array per rung, each after the promote step
// of the rung before; its array tasks train the rung's i-th run and its
// promote steps decide the rung. sbatch is a stub that records its
// arguments and answers job IDs 101, 102, ...
func TestSlurmScriptChainsRungs(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	ts := newSweepOf(t, `name = "toy"
[defaults]
dataset = "toy"
model = "cp2"
objective = "mle"
rank = 4
batch_size = 10
learning_rate = [0.1, 0.01, 0.001, 0.0001]
seed = [0, 1]
[search]
method = "halving"
min_epochs = 1
max_epochs = 4
eta = 2
`)
	o := &Array{CPUs: 1, Time: "1:00:00", SignalBefore: time.Minute, Out: ts.out, DataRoot: ts.data, Repo: filepath.Dir(ts.out)}
	var stdout strings.Builder
	must(t, o.Emit(&stdout, io.Discard, ts.g, ts.g.Runs))
	script := filepath.Join(ts.out, "sbatch.sh")
	if !strings.Contains(stdout.String(), "3 arrays of 8 4 2 tasks") {
		t.Errorf("Emit says %q", stdout.String())
	}
	dir := t.TempDir()
	stubs, record := filepath.Join(dir, "stubs"), filepath.Join(dir, "record")
	must(t, os.MkdirAll(stubs, 0o755))
	bin := filepath.Join(stubs, "gekc-experiments")
	stub := "#!/usr/bin/env bash\necho \"$(basename \"$0\") $* GEKC_RUNG=${GEKC_RUNG:-} GEKC_PROMOTE=${GEKC_PROMOTE:-}\" >> " + shellQuote(record) + "\n"
	sbatch := stub + "n=$(grep -c '^sbatch' " + shellQuote(record) + "); echo \"$((100 + n));cluster\"\n"
	must(t, os.WriteFile(bin, []byte(stub), 0o755))
	must(t, os.WriteFile(filepath.Join(stubs, "go"), []byte(stub), 0o755))
	must(t, os.WriteFile(filepath.Join(stubs, "sbatch"), []byte(sbatch), 0o755))
	env := stubScript(t, script, bin, stubs)

	for _, extra := range [][]string{
		{"SLURM_ARRAY_TASK_ID="},                                  // the login node
		{"SLURM_ARRAY_TASK_ID=3", "GEKC_RUNG=2"},                  // array task 3 of rung 2
		{"SLURM_ARRAY_TASK_ID=", "GEKC_RUNG=2", "GEKC_PROMOTE=1"}, // the promote step after rung 2
	} {
		cmd := exec.Command(bash, script)
		cmd.Env = append(env, extra...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", extra, err, out)
		}
	}
	got, err := os.ReadFile(record)
	must(t, err)
	lines := strings.Split(strings.TrimSpace(string(got)), "\n")
	if len(lines) != 1+6+2 {
		t.Fatalf("recorded calls:\n%s", got)
	}
	for i, want := range [][]string{
		{"--array=1-8", "--export=ALL,GEKC_RUNG=1"},
		{"--dependency=afterok:101", "--export=ALL,GEKC_RUNG=1,GEKC_PROMOTE=1"},
		{"--array=1-4", "--dependency=afterok:102", "--export=ALL,GEKC_RUNG=2"},
		{"--dependency=afterok:103", "--export=ALL,GEKC_RUNG=2,GEKC_PROMOTE=1"},
		{"--array=1-2", "--dependency=afterok:104", "--export=ALL,GEKC_RUNG=3"},
		{"--dependency=afterok:105", "--export=ALL,GEKC_RUNG=3,GEKC_PROMOTE=1"},
	} {
		if err := containsAll(lines[1+i], append(want, "sbatch --parsable", script)...); err != nil {
			t.Errorf("submission %d %q: %v", i+1, lines[1+i], err)
		}
	}
	copy := filepath.Join(ts.out, GridCopyName)
	if want := "gekc-experiments -grid " + copy + " -out " + ts.out + " -data " + ts.data + " -rung 2 -task 3 -v"; !strings.HasPrefix(lines[7], want) {
		t.Errorf("array task ran\n %q\nwant\n %q", lines[7], want)
	}
	if want := "gekc-experiments -grid " + copy + " -out " + ts.out + " -data " + ts.data + " -rung 2 -promote"; !strings.HasPrefix(lines[8], want) {
		t.Errorf("promote step ran\n %q\nwant\n %q", lines[8], want)
	}
}

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
