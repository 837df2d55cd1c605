package slurm

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"text/template"
	"time"

	"gekc/grid"
	"gekc/internal/atomicfile"
	"gekc/kg"
	"gekc/models"
	"gekc/resultsdir"
)

// Array is a SLURM job array of a grid's runs, one array task per run,
// each running the command on its run (-only) into one results directory:
// the resources each task asks for (defaults the user can still change at
// the top of the script or with sbatch's own options), and where it runs.
type Array struct {
	CPUs         int           // per array task; GOMAXPROCS and OPENBLAS_NUM_THREADS follow it
	Mem          string        // per array task, e.g. "8G"; "" estimates it from the largest run
	Time         string        // time limit per array task, in sbatch's format
	Partition    string        // "" is the cluster's default
	SignalBefore time.Duration // how long before the time limit a task saves its state and requeues itself

	Out, DataRoot string   // the results directory and the data root, absolute
	Repo          string   // the repository the tasks build the command in
	Samples       int      // passed on to each task as -samples when > 0 (as sweep.Options.Samples)
	NoSamples     bool     // passed on as -samples=0 (as sweep.Options.NoSamples)
	Args          []string // the command line that emits the script, recorded in it
}

var (
	slurmTimeRE = regexp.MustCompile(`^(\d+-)?\d+(:\d+){0,2}$`)
	slurmMemRE  = regexp.MustCompile(`^\d+[KMGT]?$`)
)

// Check reports a resource the script cannot ask for, naming its flag.
func (o *Array) Check() error {
	switch {
	case o.CPUs < 1:
		return fmt.Errorf("-slurm-cpus %d: want at least 1", o.CPUs)
	case !slurmTimeRE.MatchString(o.Time):
		return fmt.Errorf("-slurm-time %q: want sbatch's format, e.g. 12:00:00, 2-00:00 or 90 (minutes)", o.Time)
	case o.Mem != "" && !slurmMemRE.MatchString(o.Mem):
		return fmt.Errorf("-slurm-mem %q: want a number of megabytes or one with a unit K, M, G or T, e.g. 8G", o.Mem)
	case o.SignalBefore < time.Second || o.SignalBefore > 65535*time.Second:
		return fmt.Errorf("-slurm-signal-before %v: want between 1s and 65535s (sbatch --signal's range)", o.SignalBefore)
	case strings.ContainsAny(o.Partition, " \t\n'\"$`\\"):
		return fmt.Errorf("-slurm-partition %q: not a partition name", o.Partition)
	}
	if limit, ok := slurmMinutes(o.Time); ok && o.SignalBefore >= time.Duration(limit)*time.Minute {
		return fmt.Errorf("-slurm-signal-before %v is not shorter than the time limit -slurm-time %s", o.SignalBefore, o.Time)
	}
	return nil
}

// slurmMinutes converts a time in sbatch's format to minutes (rounded down).
func slurmMinutes(s string) (int, bool) {
	days := 0
	if d, rest, ok := strings.Cut(s, "-"); ok {
		if _, err := fmt.Sscan(d, &days); err != nil {
			return 0, false
		}
		// With days, the fields are hours[:minutes[:seconds]].
		var f [3]int
		for i, x := range strings.Split(rest, ":") {
			fmt.Sscan(x, &f[i])
		}
		return days*24*60 + f[0]*60 + f[1], true
	}
	parts := strings.Split(s, ":")
	var f [3]int
	for i, x := range parts {
		fmt.Sscan(x, &f[i])
	}
	switch len(parts) {
	case 1: // minutes
		return f[0], true
	case 2: // minutes:seconds
		return f[0], true
	}
	return f[0]*60 + f[1], true // hours:minutes:seconds
}

// estimateMemoryBytes is a generous estimate of the peak memory of one run:
// the model's tables six times over (parameters, best parameters, Adam's two
// moments, gradients, the state being written), the scores of a training or
// evaluation batch against every entity several dozen times over (the
// circuits' intermediate tensors and their gradients; non-negative models,
// evaluated in log-space, need about twice as many), and 512 MiB for the
// data, the filter and the Go runtime. Measured peaks of the committed
// sweeps (results/*/results.tsv, peak_rss_mb) are below it.
func estimateMemoryBytes(spec grid.RunSpec, entities, relations int) (int64, error) {
	f, sem, err := models.Lookup(spec.Model)
	if err != nil {
		return 0, err
	}
	var params int64
	for _, t := range f.Layout(models.Sizes{Entities: entities, Relations: relations, Rank: spec.Rank, RelationRank: spec.RelationRank}).Tables {
		params += int64(t.Rows) * int64(t.Cols)
	}
	b := int64(4)
	if spec.DType == "float64" {
		b = 8
	}
	batch := int64(max(spec.BatchSize, spec.Eval.BatchSize, 1))
	copies := int64(32)
	if sem == models.NonNegative {
		copies = 64
	}
	return 512<<20 + 6*params*b + copies*batch*int64(entities+relations)*b, nil
}

// slurmMemory returns the --mem of an array over runs: the largest run's
// estimate in whole gigabytes, and how it was found.
func slurmMemory(runs []grid.Run, dataRoot string) (string, string) {
	var most int64
	var which string
	for _, r := range runs {
		m, err := slurmRunBytes(r.Spec, dataRoot)
		if err != nil {
			return "16G", fmt.Sprintf("a guess: %v", err)
		}
		// --mem is per node, the estimate per process: all of a run's
		// processes may share one node.
		m *= int64(max(r.Spec.Processes, 1))
		if m > most {
			most, which = m, r.ID
		}
	}
	return fmt.Sprintf("%dG", gibibytesUp(most)), fmt.Sprintf("estimated from the largest run, %s (-slurm-mem to set it)", which)
}

// gibibytesUp is n bytes in whole GiB, rounded up (a request rounded down
// gets the task killed), at least 1.
func gibibytesUp(n int64) int64 { return max((n+(1<<30)-1)>>30, 1) }

// slurmRunBytes is estimateMemoryBytes of a run on its data set, and a
// data set tested on (eval.test_on) on top of its 512 MiB: loaded, mapped
// and filtered.
func slurmRunBytes(spec grid.RunSpec, dataRoot string) (int64, error) {
	ds, err := resultsdir.LoadDataset(filepath.Join(dataRoot, spec.Dataset))
	if err != nil {
		return 0, fmt.Errorf("the data set %s could not be read here to estimate it (%v)", spec.Dataset, err)
	}
	m, err := estimateMemoryBytes(spec, ds.Entities.Len(), ds.Relations.Len())
	if err != nil {
		return 0, err
	}
	if name := spec.Eval.TestOn; name != "" {
		other, err := resultsdir.LoadDataset(filepath.Join(dataRoot, name))
		if err != nil {
			return 0, fmt.Errorf("the data set %s (eval.test_on) could not be read here to estimate it (%v)", name, err)
		}
		n := len(other.Train) + len(other.Valid) + len(other.Test)
		m += other.Bytes() + 12*int64(n) + kg.FilterBytes(n, ds.Entities.Len(), ds.Relations.Len())
	}
	return m, nil
}

// slurmParams fills the sbatch script template. Paths are absolute: the
// job runs on other machines, from whatever directory SLURM chooses.
type slurmParams struct {
	GridName     string
	NumRuns      int
	Array        string // run indices, e.g. "0-11" or "0-5,9"
	Repo         string // where `go build` runs
	Bin          string
	Out          string
	Data         string
	Grid         string // the copy in Out, so that editing the original grid cannot renumber queued tasks
	ExtraArgs    []string
	Command      string // the command that wrote the script
	CPUs         int
	Mem, MemNote string
	Time         string
	Partition    string
	SignalBefore int // seconds
	// Tasks is the processes each array task trains its run on (the
	// grid's processes key): above 1, the task asks for that many SLURM
	// tasks and launches bin/gekc-mpi with srun.
	Tasks int
	// Rungs, for a grid with [search], is the most runs each rung trains:
	// one array per rung, chained by a promote step.
	Rungs []int
}

var slurmTemplate = template.Must(template.New("sbatch").Funcs(template.FuncMap{"q": shellQuote}).Parse(`#!/usr/bin/env bash
# SLURM job array for the gekc sweep "{{.GridName}}": array task i trains run i
# (see -dry-run for the numbering) into {{.Out}}.
# Written by: {{.Command}}
#
# Submit from the login node with
#
#     bash {{q .Out}}/sbatch.sh [sbatch options]
#
# which builds the binary once and submits this file as an array job with the
# settings below; sbatch options given there (e.g. --time=2:00:00
# --partition=long) take precedence. "sbatch sbatch.sh" also works, with
# the #SBATCH lines, once the binary has been built.
#
# Submitting again is safe: finished runs are skipped, and a run that another
# task is training is left to it (runs are claimed with flock, which needs a
# file system with working locks, e.g. local disk, NFSv4 or Lustre with
# flock enabled). Results appear in results.tsv and results.md as runs end.
#
# Stopping: scancel, preemption and the time limit send SIGTERM; the run
# saves its resume state (runs/<id>/state.npz) at the next optimiser step
# and exits. Ahead of the time limit (--signal) this script is sent USR1:
# it has the run save its state the same way and requeues the task, which
# continues from that step when it starts again; a cancelled task continues
# from it when its index is submitted again. A task killed without warning
# (a node crash) continues from the last periodic state (-state-every).
# Each task logs to slurm/<job>_<index>.out, appended to across requeues.
{{- if .Rungs}}
#
# This grid is a successive-halving search ([search]): "bash sbatch.sh"
# submits one array per rung ({{range $i, $n := .Rungs}}{{if $i}}, {{end}}{{$n}}{{end}} tasks), each after
# a promote step that decides the rung before it (-rung K -promote) once
# all of that rung's tasks succeeded (afterok). Array task i of rung K
# trains the rung's i-th run (-rung K -task i). A failed task holds the
# chain (DependencyNeverSatisfied): submit again, and the rungs already
# decided are read back, their finished runs skipped.
{{- end}}
#
#SBATCH --job-name=gekc-{{.GridName}}
#SBATCH --array={{if .Rungs}}1-{{index .Rungs 0}}{{else}}{{.Array}}{{end}}
#SBATCH --cpus-per-task={{.CPUs}}
{{- if gt .Tasks 1}}
#SBATCH --ntasks={{.Tasks}}
{{- end}}
#SBATCH --mem={{.Mem}}
#SBATCH --time={{.Time}}
#SBATCH --output={{.Out}}/slurm/%A_%a.out
#SBATCH --open-mode=append
#SBATCH --requeue
#SBATCH --signal=B:USR1@{{.SignalBefore}}
{{- if .Partition}}
#SBATCH --partition={{.Partition}}
{{- end}}

# ---- edit these ------------------------------------------------------------
JOB_NAME={{q (printf "gekc-%s" .GridName)}}
ARRAY={{q .Array}}          # run indices; add %N to run at most N at once, e.g. 0-11%4
CPUS_PER_TASK={{.CPUs}}
MEM={{.Mem}}                  # {{.MemNote}}
TIME={{.Time}}               # per task, in sbatch's format (HH:MM:SS, D-HH:MM); a run longer than this is requeued and continues
SIGNAL_BEFORE={{.SignalBefore}}           # seconds before TIME at which the run saves its state and the task requeues itself
PARTITION={{q .Partition}}                  # empty: the cluster's default
SBATCH_EXTRA=()             # e.g. (--account=myproject --qos=normal)
{{- if gt .Tasks 1}}
NTASKS={{.Tasks}}                    # processes per run (the grid's processes), each with CPUS_PER_TASK CPUs
SRUN_MPI=pmix               # srun --mpi=$SRUN_MPI: the site's MPI plugin (srun --mpi=list), e.g. pmix_v4 or pmi2
{{- end}}

REPO={{q .Repo}}
BIN={{q .Bin}}              # built once by "go build -o"
OUT={{q .Out}}
DATA={{q .Data}}
GRID={{q .Grid}}
EXTRA_ARGS=({{range .ExtraArgs}}{{q .}} {{end}})
# ----------------------------------------------------------------------------

set -euo pipefail
{{- if .Rungs}}
RUNG_TASKS=({{range .Rungs}}{{.}} {{end}})

if [ -n "${GEKC_PROMOTE:-}" ]; then
	# The promote step after rung $GEKC_RUNG: decide which configurations go on.
	exec "$BIN" -grid "$GRID" -out "$OUT" -data "$DATA" -rung "$GEKC_RUNG" -promote ${EXTRA_ARGS[@]+"${EXTRA_ARGS[@]}"}
fi
{{- end}}

if [ -z "${SLURM_ARRAY_TASK_ID:-}" ]; then
	# On the login node: build once, then submit this file as the array job.
	mkdir -p "$OUT/slurm"
{{- if gt .Tasks 1}}
	(cd "$REPO" && go build -tags mpi -o "$BIN" ./experiments)
	args=(--job-name="$JOB_NAME" --cpus-per-task="$CPUS_PER_TASK" --ntasks="$NTASKS"
{{- else}}
	(cd "$REPO" && go build -o "$BIN" ./experiments)
	args=(--job-name="$JOB_NAME" --cpus-per-task="$CPUS_PER_TASK"
{{- end}}
		--mem="$MEM" --time="$TIME" --output="$OUT/slurm/%A_%a.out" --open-mode=append
		--requeue --signal="B:USR1@$SIGNAL_BEFORE")
	if [ -n "$PARTITION" ]; then args+=(--partition="$PARTITION"); fi
{{- if .Rungs}}
	after=()
	for i in "${!RUNG_TASKS[@]}"; do
		rung=$((i + 1))
		array=$(sbatch --parsable "${args[@]}" --array="1-${RUNG_TASKS[$i]}" --export="ALL,GEKC_RUNG=$rung" \
			${after[@]+"${after[@]}"} ${SBATCH_EXTRA[@]+"${SBATCH_EXTRA[@]}"} "$@" "${BASH_SOURCE[0]}")
		promote=$(sbatch --parsable "${args[@]}" --job-name="$JOB_NAME-promote" --output="$OUT/slurm/%j.out" \
			--dependency="afterok:${array%%;*}" --export="ALL,GEKC_RUNG=$rung,GEKC_PROMOTE=1" \
			${SBATCH_EXTRA[@]+"${SBATCH_EXTRA[@]}"} "$@" "${BASH_SOURCE[0]}")
		after=(--dependency="afterok:${promote%%;*}")
		echo "rung $rung: array job ${array%%;*} (${RUNG_TASKS[$i]} tasks), then promote step ${promote%%;*}"
	done
	exit 0
{{- else}}
	exec sbatch "${args[@]}" --array="$ARRAY" ${SBATCH_EXTRA[@]+"${SBATCH_EXTRA[@]}"} "$@" "${BASH_SOURCE[0]}"
{{- end}}
fi

# In array task $SLURM_ARRAY_TASK_ID.
if [ ! -x "$BIN" ]; then
	echo "no binary at $BIN: run 'bash sbatch.sh' on the login node, or build it with go build -o" >&2
	exit 2
fi
{{- if .Rungs}}
: "${GEKC_RUNG:?a search is submitted with bash sbatch.sh, which chains its rungs}"
select=(-rung "$GEKC_RUNG" -task "$SLURM_ARRAY_TASK_ID")
{{- else}}
select=(-only "$SLURM_ARRAY_TASK_ID")
{{- end}}
export GOMAXPROCS="${SLURM_CPUS_PER_TASK:-$CPUS_PER_TASK}"
export OPENBLAS_NUM_THREADS="$GOMAXPROCS"
echo "gekc: task ${SLURM_ARRAY_JOB_ID:-}_${SLURM_ARRAY_TASK_ID} (job ${SLURM_JOB_ID:-}, restart ${SLURM_RESTART_COUNT:-0}) on $(hostname) at $(date -u +%FT%TZ), CPUs $(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status 2>/dev/null)"

# The run is a child, not exec'd, so that this shell can requeue the task
# after it has saved. SIGTERM reaches the run from SLURM itself; this
# shell ignores it and waits.
requeue=0
# -v: a line per epoch in the task's log (a log is not a terminal, where
# the default would print one every 30 s).
{{- if gt .Tasks 1}}
# The run's $NTASKS processes: srun starts them, process 0 writes the
# records; srun passes SIGTERM on to all of them, which stop together, and
# ends them all when one dies.
srun --mpi="$SRUN_MPI" --ntasks="$NTASKS" --cpus-per-task="$CPUS_PER_TASK" --kill-on-bad-exit=1 \
	"$BIN" -grid "$GRID" -out "$OUT" -data "$DATA" "${select[@]}" -v ${EXTRA_ARGS[@]+"${EXTRA_ARGS[@]}"} &
{{- else}}
"$BIN" -grid "$GRID" -out "$OUT" -data "$DATA" "${select[@]}" -v ${EXTRA_ARGS[@]+"${EXTRA_ARGS[@]}"} &
{{- end}}
pid=$!
trap 'requeue=1; kill -TERM "$pid" 2>/dev/null || true' USR1
trap ':' TERM INT
while kill -0 "$pid" 2>/dev/null; do
	wait "$pid" || true # returns early when a trapped signal arrives
done
wait "$pid" && status=0 || status=$?
if [ "$requeue" = 1 ] && [ "$status" = 130 ]; then
	# 130: interrupted, state saved. The task starts again after SLURM's
	# requeue delay and continues from that state.
	echo "gekc: time limit near; state saved, requeueing task ${SLURM_ARRAY_JOB_ID:-}_${SLURM_ARRAY_TASK_ID} at $(date -u +%FT%TZ)"
	scontrol requeue "$SLURM_JOB_ID"
fi
exit "$status"
`))

func slurmScript(p slurmParams) (string, error) {
	var b bytes.Buffer
	if err := slurmTemplate.Execute(&b, p); err != nil {
		return "", fmt.Errorf("writing sbatch script: %w", err)
	}
	return b.String(), nil
}

// Emit writes <Out>/sbatch.sh for runs, a selection of g.Runs, and a copy
// of the grid the tasks read (<Out>/grid.toml), and tells stdout how to
// submit it; notes go to stderr.
func (o *Array) Emit(stdout, stderr io.Writer, g *grid.Grid, runs []grid.Run) error {
	mem, memNote := o.Mem, "set with -slurm-mem"
	if mem == "" {
		mem, memNote = slurmMemory(runs, o.DataRoot)
	}
	if err := os.MkdirAll(filepath.Join(o.Out, "slurm"), 0o755); err != nil {
		return err
	}
	if err := resultsdir.WithLock(o.Out, func() error { return resultsdir.SaveGridCopy(o.Out, g.Source, stderr) }); err != nil {
		return fmt.Errorf("saving the grid: %w", err)
	}
	indices := make([]int, len(runs))
	for i, r := range runs {
		indices[i] = r.Index
	}
	tasks, err := slurmTasks(runs)
	if err != nil {
		return err
	}
	bin := "gekc-experiments"
	if tasks > 1 {
		bin = "gekc-mpi"
	}
	var extra []string
	switch {
	case o.NoSamples:
		extra = append(extra, "-samples=0")
	case o.Samples > 0:
		extra = append(extra, fmt.Sprintf("-samples=%d", o.Samples))
	}
	rungs, err := slurmRungs(g, runs)
	if err != nil {
		return err
	}
	script, err := slurmScript(slurmParams{Rungs: rungs,
		GridName: g.Name, NumRuns: len(g.Runs), Array: grid.FormatIndexList(indices), Repo: o.Repo, Tasks: tasks,
		Bin: filepath.Join(o.Repo, bin), Out: o.Out, Data: o.DataRoot,
		Grid: filepath.Join(o.Out, resultsdir.GridCopyName), ExtraArgs: extra,
		Command: "go run ./experiments " + strings.Join(o.Args, " "),
		CPUs:    o.CPUs, Mem: mem, MemNote: memNote, Time: o.Time, Partition: o.Partition,
		SignalBefore: int(o.SignalBefore / time.Second),
	})
	if err != nil {
		return err
	}
	path := filepath.Join(o.Out, "sbatch.sh")
	if err := atomicfile.WriteFile(path, []byte(script), 0o755); err != nil {
		return err
	}
	each := fmt.Sprintf("each %d CPU(s)", o.CPUs)
	if tasks > 1 {
		each = fmt.Sprintf("each %d processes of %d CPU(s) under srun --mpi=pmix", tasks, o.CPUs)
	}
	arrays := fmt.Sprintf("%d array tasks", len(runs))
	if rungs != nil {
		arrays = fmt.Sprintf("a search: %d arrays of %s tasks, a promote step after each", len(rungs), strings.Trim(fmt.Sprint(rungs), "[]"))
	}
	fmt.Fprintf(stdout, "wrote %s (%s; %s, %s of memory, time limit %s). Edit the settings at its top, then submit with:\n    bash %s\n",
		path, arrays, each, mem, o.Time, shellQuote(path))
	return nil
}

// slurmTasks is the processes every selected run asks for (grid key
// processes; 1 when unset): one array has one task count, so runs that
// differ are emitted apart (-only).
func slurmTasks(runs []grid.Run) (int, error) {
	tasks := 0
	for _, r := range runs {
		p := max(r.Spec.Processes, 1)
		if tasks != 0 && p != tasks {
			return 0, fmt.Errorf("the selected runs ask for %d and %d processes (key processes), and one SLURM array has one task count: emit them apart with -only", tasks, p)
		}
		tasks = p
	}
	return max(tasks, 1), nil
}

// shellQuote quotes s for bash, leaving simple words as they are.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// slurmRungs is the most runs each rung of g's search trains (nil without
// one): the size of its array.
func slurmRungs(g *grid.Grid, runs []grid.Run) ([]int, error) {
	if g.Search == nil {
		return nil, nil
	}
	if len(runs) != len(g.Runs) {
		return nil, fmt.Errorf("a search ranks all of its grid's configurations: -only selected %d of %d runs", len(runs), len(g.Runs))
	}
	return g.Search.RunsPerRung(runs), nil
}
