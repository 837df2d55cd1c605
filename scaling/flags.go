package scaling

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"context"
	"gekc/internal/procstat"
	"io"
	"os"
)

// Flags are the options of a study as the experiments command takes them
// (its scaling verb): the lists as typed, the rest set in place.
type Flags struct {
	enabled                   bool
	models, batches, entities string
	opts                      Options
}

// NewFlags defines the study's flags on fs (-scaling-models, ...; and
// -scaling, the verb's old form), their defaults the paper's benchmark
// (DefaultOptions).
func NewFlags(fs *flag.FlagSet) *Flags {
	d := DefaultOptions()
	o := &Flags{opts: d}
	fs.BoolVar(&o.enabled, "scaling", false, "old form of the scaling verb (accepted, no effect)")
	fs.StringVar(&o.models, "scaling-models", strings.Join(d.Models, ","), "comma-separated `models` of the scaling study")
	fs.StringVar(&o.batches, "scaling-batches", joinInts(d.Batches), "comma-separated batch `sizes` of the study by batch size (empty: skip it)")
	fs.StringVar(&o.entities, "scaling-entities", joinInts(d.Entities), "comma-separated entity `counts` of the study by entities (empty: skip it)")
	fs.IntVar(&o.opts.AllEntities, "scaling-all-entities", d.AllEntities, "entities of the study by batch size (ogbl-wikikg2's)")
	fs.IntVar(&o.opts.Batch, "scaling-batch", d.Batch, "batch size of the study by entities")
	fs.IntVar(&o.opts.Relations, "scaling-relations", d.Relations, "relations of the synthetic graph (ogbl-wikikg2's)")
	fs.IntVar(&o.opts.Rank, "scaling-rank", d.Rank, "embedding size d")
	fs.IntVar(&o.opts.Warm, "scaling-warm", d.Warm, "warm-up steps before timing, per point")
	fs.IntVar(&o.opts.Steps, "scaling-steps", d.Steps, "timed steps per point; the median is reported")
	fs.DurationVar(&o.opts.Timeout, "scaling-timeout", d.Timeout, "time limit of one point, model set-up included (0: none)")
	fs.Var(&o.opts.MaxMem, "scaling-max-mem", "resident memory `size` a point may use, e.g. 20GiB or 512MiB (0: no cap); a point needing more is stopped and recorded as oom")
	return o
}

// flagOf names the flag of each field of Options.
var flagOf = map[string]string{
	"Models": "-scaling-models", "Batches": "-scaling-batches", "Entities": "-scaling-entities",
	"AllEntities": "-scaling-all-entities", "Batch": "-scaling-batch", "Relations": "-scaling-relations",
	"Rank": "-scaling-rank", "Warm": "-scaling-warm", "Steps": "-scaling-steps",
	"Timeout": "-scaling-timeout", "MaxMem": "-scaling-max-mem",
}

// Options returns the study the flags describe, checked (Plan), with errors
// that name the flags. The models are reported first, then the lists, then
// the rest.
func (o *Flags) Options() (Options, error) {
	so := o.opts
	so.Models = splitList(o.models)
	var errLists error
	var err error
	if so.Batches, err = parsePositiveList("-scaling-batches", o.batches); err != nil {
		errLists = err
	}
	if so.Entities, err = parsePositiveList("-scaling-entities", o.entities); err != nil && errLists == nil {
		errLists = err
	}
	_, err = so.Plan()
	var oe *OptionError
	models := errors.As(err, &oe) && oe.Option == "Models"
	switch {
	case errLists != nil && !models:
		return so, errLists
	case errors.Is(err, ErrNoPoints):
		return so, errors.New("-scaling-batches and -scaling-entities are both empty: nothing to measure")
	case oe != nil:
		named := *oe
		named.Option = cmp.Or(flagOf[oe.Option], oe.Option)
		return so, &named
	}
	return so, err
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

// parsePositiveList parses a comma-separated list of positive integers,
// sorted and without repeats.
func parsePositiveList(flagName, s string) ([]int, error) {
	var out []int
	for _, f := range splitList(s) {
		n, err := strconv.Atoi(f)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%s: %q is not a positive integer", flagName, f)
		}
		out = append(out, n)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

// MemoryNotes are the command's notes on the cap -scaling-max-mem: not
// enforced off Linux, or above the memory available now.
func MemoryNotes(o Options) []string {
	var notes []string
	if o.MaxMem > 0 && !CapEnforced {
		notes = append(notes, fmt.Sprintf("note: -scaling-max-mem is enforced on Linux only: points are not stopped at %s", o.MaxMem))
	}
	if avail, err := procstat.MemAvailable(); err == nil && o.MaxMem > 0 && int64(o.MaxMem) > avail {
		notes = append(notes, fmt.Sprintf("note: -scaling-max-mem %s is more than the %.1f GiB of memory available now: a large point may make the machine swap or be killed by the kernel (recorded as oom)",
			o.MaxMem, float64(avail)/(1<<30)))
	}
	return notes
}

// Measure runs the study of o into the directory out, each point in a
// child process of this program (os.Executable), after MemoryNotes on
// log; it returns how many points timed out or failed (Study.Run).
func Measure(ctx context.Context, o Options, out string, log io.Writer) (failed int, err error) {
	exe, err := os.Executable()
	if err != nil {
		return 0, fmt.Errorf("finding the executable to measure points in: %v", err)
	}
	for _, n := range MemoryNotes(o) {
		fmt.Fprintln(log, n)
	}
	s := &Study{Options: o, Out: out, Exe: exe, Env: os.Environ(), Log: log}
	return s.Run(ctx)
}
