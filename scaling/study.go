package scaling

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"gekc/internal/atomicfile"
	"gekc/internal/filelock"
	"gekc/internal/procstat"
	"gekc/report"
)

// The files of a study in its output directory.
const (
	TSVName      = "scaling.tsv" // every point measured, as it ends
	MarkdownName = "scaling.md"  // the planned points' tables
	PNGName      = "scaling.png" // the planned points' figure
)

// lockName is the lock that keeps two studies from sharing a directory.
const lockName = "scaling.lock"

// ChildEnv is the environment variable that holds a child process's point;
// its presence is what makes a program a child of a Study (see RunChild).
const ChildEnv = "GEKC_SCALING_POINT"

const (
	seed = 1
	lr   = 1e-3
)

// A Study measures the points of Options that scaling.tsv in Out does not
// hold yet, one child process at a time so that points do not compete for
// cores or memory.
type Study struct {
	Options Options   // the study
	Out     string    // output directory, created if need be
	Exe     string    // the program re-executed for each point, with ChildEnv set
	Env     []string  // the children's environment; a ChildEnv in it is replaced
	Log     io.Writer // a line per point and one at the end; nil discards them
}

// Run measures the points and writes the tables and the figure; failed
// counts the planned points that timed out or failed, now or before
// (running out of memory is a result, not a failure). Interrupted by ctx,
// it still draws what was measured and returns no error: the caller checks
// ctx. A point that was being measured is then not recorded.
func (s *Study) Run(ctx context.Context) (failed int, err error) {
	plan, err := s.Options.Plan()
	if err != nil {
		return 0, err
	}
	log := s.Log
	if log == nil {
		log = io.Discard
	}
	if err := os.MkdirAll(s.Out, 0o755); err != nil {
		return 0, err
	}
	lock, err := filelock.TryLock(filepath.Join(s.Out, lockName))
	if errors.Is(err, filelock.ErrLocked) {
		return 0, fmt.Errorf("another scaling study is running in %s: two at once would disturb each other's timings", s.Out)
	}
	if err != nil {
		return 0, err
	}
	defer lock.Unlock()

	tsvPath := filepath.Join(s.Out, TSVName)
	rows, err := ReadTSV(tsvPath)
	if err != nil {
		return 0, err
	}
	done := 0
	for i, p := range plan {
		if ctx.Err() != nil {
			break
		}
		prefix := fmt.Sprintf("scaling [%d/%d] %s", i+1, len(plan), p)
		if j := findRow(rows, p); j >= 0 && s.finished(rows[j]) {
			fmt.Fprintf(log, "%s: %s already\n", prefix, describeRow(rows[j]))
			done++
			continue
		}
		fmt.Fprintf(log, "%s: measuring\n", prefix)
		row, err := s.measure(ctx, p)
		if ctx.Err() != nil {
			// Interrupted: the point is not measured, and not recorded.
			break
		}
		if err != nil {
			return 0, err
		}
		fmt.Fprintf(log, "%s: %s\n", prefix, describeRow(row))
		if j := findRow(rows, p); j >= 0 {
			rows[j] = row
		} else {
			rows = append(rows, row)
		}
		if err := atomicfile.WriteFile(tsvPath, EncodeTSV(rows), 0o644); err != nil {
			return 0, err
		}
	}
	// The tables and the figure show the planned points: scaling.tsv may
	// hold others, from earlier studies with other options.
	shown := Planned(rows, plan)
	for _, r := range shown {
		if !r.OK() && r.Status != StatusOOM {
			failed++
		}
	}
	md, err := RenderMarkdown(s.Options, shown)
	if err != nil {
		return failed, fmt.Errorf("rendering %s: %w", MarkdownName, err)
	}
	if err := atomicfile.WriteFile(filepath.Join(s.Out, MarkdownName), md, 0o644); err != nil {
		return failed, err
	}
	png, err := RenderPlot(s.Options, shown)
	if err != nil {
		return failed, fmt.Errorf("drawing %s: %w", PNGName, err)
	}
	if err := atomicfile.WriteFile(filepath.Join(s.Out, PNGName), png, 0o644); err != nil {
		return failed, err
	}
	if ctx.Err() == nil {
		fmt.Fprintf(log, "scaling: %d points, %d of them measured before; results in %s, %s and %s\n",
			len(plan), done, tsvPath, MarkdownName, PNGName)
	}
	return failed, nil
}

// finished reports whether a row of an earlier study stands: measured, or
// out of memory under a cap no smaller than the current one. Timeouts and
// errors are measured again.
func (s *Study) finished(r Row) bool {
	switch {
	case r.OK():
		return true
	case r.Status != StatusOOM:
		return false
	case r.MaxMemMB == 0: // out of memory with no cap: the machine's memory
		return true
	}
	return s.Options.MaxMem > 0 && float64(s.Options.MaxMem)/(1<<20) <= r.MaxMemMB+0.5
}

// Planned returns the rows of the points of plan, in its order: the rows
// to render of a scaling.tsv that may hold others, from earlier studies
// with other options.
func Planned(rows []Row, plan []Point) []Row {
	var out []Row
	for _, p := range plan {
		if j := findRow(rows, p); j >= 0 {
			out = append(out, rows[j])
		}
	}
	return out
}

func findRow(rows []Row, p Point) int {
	return slices.IndexFunc(rows, func(r Row) bool { return r.Point == p })
}

func describeRow(r Row) string {
	if !r.OK() {
		return r.Status
	}
	return fmt.Sprintf("%s per step, peak RSS %s", formatStepTime(r.StepMS), formatMiB(r.PeakRSSMB))
}

// rssPollInterval is how often the watchdog reads a child's memory. At a
// few GB/s of page faults, a child overshoots the cap by at most a few
// hundred MB before it is stopped.
const rssPollInterval = 20 * time.Millisecond

// measure runs a child process on point p and turns its end into a row:
// the child's failures are outcomes, not errors. It returns an error only
// when ctx ends, the point unmeasured.
func (s *Study) measure(ctx context.Context, p Point) (Row, error) {
	spec, err := json.Marshal(job{Point: p, Warm: s.Options.Warm, Steps: s.Options.Steps, Seed: seed})
	if err != nil {
		return Row{}, err
	}
	// A child that fails reports nothing: its GOMAXPROCS is taken to be
	// ours, as it runs on the same machine with the same environment.
	row := Row{Point: p, StepMS: math.NaN(), PeakRSSMB: math.NaN(),
		MaxMemMB: float64(s.Options.MaxMem) / (1 << 20), Procs: runtime.GOMAXPROCS(0)}
	for _, kv := range s.Env {
		if v, ok := strings.CutPrefix(kv, "OPENBLAS_CORETYPE="); ok {
			row.Coretype = v
		}
	}

	pctx, cancel := ctx, context.CancelFunc(func() {})
	if s.Options.Timeout > 0 {
		pctx, cancel = context.WithTimeout(ctx, s.Options.Timeout)
	}
	defer cancel()
	cmd := exec.CommandContext(pctx, s.Exe)
	cmd.Env = append(slices.DeleteFunc(slices.Clone(s.Env), func(kv string) bool {
		return strings.HasPrefix(kv, ChildEnv+"=")
	}), ChildEnv+"="+string(spec))
	var stdout bytes.Buffer
	stderr := &headWriter{max: 64 << 10}
	cmd.Stdout, cmd.Stderr = &stdout, stderr
	cmd.SysProcAttr = childAttr()
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Start(); err != nil {
		row.Status = StatusError + ": " + firstLine(err.Error())
		return row, nil
	}
	overCap := make(chan int64, 1) // the RSS that made the watchdog stop the child
	exited, watched := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(watched)
		if s.Options.MaxMem > 0 {
			watchRSS(cmd.Process, int64(s.Options.MaxMem), exited, overCap)
		}
	}()
	runErr := cmd.Wait()
	close(exited)
	<-watched // so that a kill by the watchdog is known below
	if ctx.Err() != nil {
		return Row{}, ctx.Err()
	}
	row.PeakRSSMB = childMaxRSSMB(cmd.ProcessState)
	select {
	case rss := <-overCap:
		row.Status, row.PeakRSSMB = StatusOOM, float64(rss)/(1<<20)
		return row, nil
	default:
	}
	if runErr == nil {
		var rep childReport
		if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil || len(rep.StepMS) == 0 {
			row.Status = StatusError + ": unreadable report from the child: " + firstLine(stdout.String())
			return row, nil
		}
		row.Status, row.StepMS, row.Procs = StatusOK, median(rep.StepMS), rep.GOMAXPROCS
		if rep.PeakRSS > 0 {
			// The child's own high-water mark, not rusage's: Linux carries
			// the parent's into a child across exec.
			row.PeakRSSMB = float64(rep.PeakRSS) / (1 << 20)
		}
		return row, nil
	}
	row.Status = classifyChildFailure(pctx.Err() != nil, cmd.ProcessState, stderr.String(), runErr)
	return row, nil
}

// watchRSS kills p as soon as its resident memory, or its high-water mark
// (which catches a peak between two reads), passes limit, and then sends
// that figure on over. It returns when exited is closed.
func watchRSS(p *os.Process, limit int64, exited <-chan struct{}, over chan<- int64) {
	path := fmt.Sprintf("/proc/%d/status", p.Pid)
	tick := time.NewTicker(rssPollInterval)
	defer tick.Stop()
	for {
		select {
		case <-exited:
			return
		case <-tick.C:
		}
		// A zombie's status has no memory lines, and after the child is
		// reaped exited is closed: errors mean it is ending.
		status, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		hwm, err := procstat.Field(status, "VmHWM:")
		if err != nil || hwm <= limit {
			continue
		}
		// Kill goes through the process's handle, never to a reused PID.
		if p.Kill() == nil {
			over <- hwm
		}
		return
	}
}

// classifyChildFailure names the way a child failed: timeout when it was
// killed for taking too long, oom when it ran out of memory (the Go
// runtime's and the C allocators' messages, or SIGKILL from someone else
// than us, which on Linux is the kernel's OOM killer), else "error: " and
// the first line of what it printed.
func classifyChildFailure(timedOut bool, ps *os.ProcessState, stderr string, runErr error) string {
	if timedOut {
		return StatusTimeout
	}
	low := strings.ToLower(stderr)
	for _, sign := range []string{"out of memory", "cannot allocate memory", "memory allocation failed"} {
		if strings.Contains(low, sign) {
			return StatusOOM
		}
	}
	if ps != nil {
		if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
			return StatusOOM
		}
	}
	msg := firstLine(stderr)
	if msg == "" && runErr != nil {
		msg = runErr.Error()
	}
	return StatusError + ": " + msg
}

// firstLine returns the first non-blank line of s, trimmed and shortened to
// fit a table cell.
func firstLine(s string) string {
	for line := range strings.Lines(s) {
		if line = strings.TrimSpace(line); line != "" {
			if len(line) > 200 {
				line = line[:200] + "…"
			}
			return report.TSVCell(line)
		}
	}
	return ""
}

// headWriter keeps the first max bytes written to it: the start of a
// crash report names the cause, and a goroutine dump can be long.
type headWriter struct {
	buf bytes.Buffer
	max int
}

func (w *headWriter) Write(p []byte) (int, error) {
	if room := w.max - w.buf.Len(); room > 0 {
		w.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (w *headWriter) String() string { return w.buf.String() }

// median of xs, which it sorts; NaN for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}
