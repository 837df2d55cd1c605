package main

import (
	"bytes"
	"fmt"
	"strings"
	"text/template"
)

// slurmParams fills the sbatch script template. Paths are absolute: the
// job runs on other machines, from whatever directory SLURM chooses.
type slurmParams struct {
	GridName  string
	NumRuns   int
	Array     string // run indices, e.g. "0-11" or "0-5,9"
	Repo      string // where `go build` runs
	Bin       string
	Out       string
	Data      string
	Grid      string // the copy in Out, so that editing the original grid cannot renumber queued tasks
	ExtraArgs []string
	Command   string // the command that wrote the script
}

var slurmTemplate = template.Must(template.New("sbatch").Funcs(template.FuncMap{"q": shellQuote}).Parse(`#!/usr/bin/env bash
# SLURM job array for the gekc sweep "{{.GridName}}": array task i trains run i
# (see -dry-run for the numbering) into {{.Out}}.
# Written by: {{.Command}}
#
# Submit from the login node with
#
#     bash {{q .Out}}/sbatch.sh
#
# which builds the binary once and submits this file as an array job with the
# settings below (sbatch's command-line options take precedence over the
# #SBATCH lines). "sbatch sbatch.sh" also works, with the #SBATCH lines,
# once the binary has been built.
#
# Submitting again is safe: finished runs are skipped, and a run that another
# task is training is left to it (runs are claimed with flock, which needs a
# file system with working locks, e.g. local disk, NFSv4 or Lustre with
# flock enabled). Results appear in results.tsv and results.md as runs end.
#
#SBATCH --job-name=gekc-{{.GridName}}
#SBATCH --array={{.Array}}
#SBATCH --cpus-per-task=4
#SBATCH --mem=16G
#SBATCH --time=12:00:00
#SBATCH --output={{.Out}}/slurm/%A_%a.out

# ---- edit these ------------------------------------------------------------
JOB_NAME={{q (printf "gekc-%s" .GridName)}}
ARRAY={{q .Array}}          # run indices; add %N to run at most N at once, e.g. 0-11%4
CPUS_PER_TASK=4
MEM=16G
TIME=12:00:00               # per run, HH:MM:SS
PARTITION=                  # empty: the cluster's default
SBATCH_EXTRA=()             # e.g. (--account=myproject --qos=normal)

REPO={{q .Repo}}
BIN={{q .Bin}}              # built once by "go build -o"
OUT={{q .Out}}
DATA={{q .Data}}
GRID={{q .Grid}}
EXTRA_ARGS=({{range .ExtraArgs}}{{q .}} {{end}})
# ----------------------------------------------------------------------------

set -euo pipefail

if [ -z "${SLURM_ARRAY_TASK_ID:-}" ]; then
	# On the login node: build once, then submit this file as the array job.
	mkdir -p "$OUT/slurm"
	(cd "$REPO" && go build -o "$BIN" ./experiments)
	args=(--job-name="$JOB_NAME" --array="$ARRAY" --cpus-per-task="$CPUS_PER_TASK"
		--mem="$MEM" --time="$TIME" --output="$OUT/slurm/%A_%a.out")
	if [ -n "$PARTITION" ]; then args+=(--partition="$PARTITION"); fi
	exec sbatch "${args[@]}" ${SBATCH_EXTRA[@]+"${SBATCH_EXTRA[@]}"} "${BASH_SOURCE[0]}"
fi

# In array task $SLURM_ARRAY_TASK_ID.
if [ ! -x "$BIN" ]; then
	echo "no binary at $BIN: run 'bash sbatch.sh' on the login node, or build it with go build -o" >&2
	exit 2
fi
export GOMAXPROCS="${SLURM_CPUS_PER_TASK:-$CPUS_PER_TASK}"
exec "$BIN" -grid "$GRID" -out "$OUT" -data "$DATA" -only "$SLURM_ARRAY_TASK_ID" ${EXTRA_ARGS[@]+"${EXTRA_ARGS[@]}"}
`))

func slurmScript(p slurmParams) (string, error) {
	var b bytes.Buffer
	if err := slurmTemplate.Execute(&b, p); err != nil {
		return "", fmt.Errorf("writing sbatch script: %w", err)
	}
	return b.String(), nil
}

// shellQuote quotes s for bash, leaving simple words as they are.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
