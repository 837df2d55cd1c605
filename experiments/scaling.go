package main

// The training-cost scaling study (paper, section "On the Training
// Efficiency of GeKCs", figure fig:pll-scaling, and appendix "Training
// Speed-up Benchmark Details"): the time and peak memory of one PLL
// training step, forward, backward and Adam update, of ComplEx, ComplEx+ and
// ComplEx² on random triples over a knowledge graph of ogbl-wikikg2's size,
// (a) with all entities and a growing batch, (b) with batch 500 and a
// growing number of entities.
//
// Every point is measured in a child process, the command itself
// re-executed with the point in $GEKC_SCALING_POINT: the child's high-water
// RSS is then the point's peak memory alone, and a point that needs more
// memory than -scaling-max-mem is stopped, and recorded as out of memory,
// without bringing down the study. Points are written to <out>/scaling.tsv
// as they end, so that the study can be stopped and started again;
// scaling.md and scaling.png are drawn from it.
//
// The cap is a watchdog on the child's resident memory, not RLIMIT_AS. Under
// an address-space limit, OpenBLAS (0.3.21 here), which mallocs its work
// buffers on first use, kept retrying a failed malloc instead of failing, so
// the point hung until its timeout; and address space counts the Go
// runtime's reservations and the threads' stacks, which are never touched.

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"gekc/kg"
	"gekc/models"
	"gekc/objectives"
	"gekc/train"

	"gorgonia.org/tensor"
)

const (
	scalingTSVName  = "scaling.tsv"
	scalingMDName   = "scaling.md"
	scalingPNGName  = "scaling.png"
	scalingLockName = "scaling.lock"

	// scalingChildEnv holds the JSON scalingJob of a child process; its
	// presence is what makes the command a child.
	scalingChildEnv = "GEKC_SCALING_POINT"

	scalingStudyBatch    = "batch"    // all entities, growing batch
	scalingStudyEntities = "entities" // fixed batch, growing |E|

	scalingStatusOK      = "ok"
	scalingStatusOOM     = "oom"
	scalingStatusTimeout = "timeout"
	scalingStatusError   = "error"

	scalingSeed = 1
	scalingLR   = 1e-3
)

// scalingOptions are the -scaling flags.
type scalingOptions struct {
	enabled     bool
	models      string
	batches     string
	entities    string
	allEntities int
	batch       int
	relations   int
	rank        int
	warm, steps int
	timeout     time.Duration
	maxMem      byteSize
}

// addScalingFlags defines the -scaling flags on fs. The defaults are the
// paper's benchmark: ogbl-wikikg2 (2,500,604 entities, 535 relations), d =
// 100.
func addScalingFlags(fs *flag.FlagSet) *scalingOptions {
	o := &scalingOptions{maxMem: 20 << 30}
	fs.BoolVar(&o.enabled, "scaling", false, "run the training-cost scaling study instead of a grid (see -scaling-* and the README)")
	fs.StringVar(&o.models, "scaling-models", "complex,complex+,complex2", "comma-separated `models` of the scaling study")
	fs.StringVar(&o.batches, "scaling-batches", "100,200,500,1000,2000,5000", "comma-separated batch `sizes` of the study by batch size (empty: skip it)")
	fs.StringVar(&o.entities, "scaling-entities", "300000,500000,1000000,1500000,2000000,2500000", "comma-separated entity `counts` of the study by entities (empty: skip it)")
	fs.IntVar(&o.allEntities, "scaling-all-entities", 2500604, "entities of the study by batch size (ogbl-wikikg2's)")
	fs.IntVar(&o.batch, "scaling-batch", 500, "batch size of the study by entities")
	fs.IntVar(&o.relations, "scaling-relations", 535, "relations of the synthetic graph (ogbl-wikikg2's)")
	fs.IntVar(&o.rank, "scaling-rank", 100, "embedding size d")
	fs.IntVar(&o.warm, "scaling-warm", 2, "warm-up steps before timing, per point")
	fs.IntVar(&o.steps, "scaling-steps", 5, "timed steps per point; the median is reported")
	fs.DurationVar(&o.timeout, "scaling-timeout", 30*time.Minute, "time limit of one point, model set-up included (0: none)")
	fs.Var(&o.maxMem, "scaling-max-mem", "resident memory `size` a point may use, e.g. 20GiB or 512MiB (0: no cap); a point needing more is stopped and recorded as oom")
	return o
}

// byteSize is a flag.Value for amounts of memory: a number and a unit, B,
// KiB, MiB, GiB, TiB or KB, MB, GB, TB.
type byteSize int64

var byteUnits = []struct {
	suffix string
	size   float64
}{
	// Longest suffixes first, so that "GiB" is not read as "B".
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
	{"B", 1},
}

func (b *byteSize) String() string {
	n := int64(*b)
	for _, u := range []struct {
		suffix string
		shift  uint
	}{{"TiB", 40}, {"GiB", 30}, {"MiB", 20}, {"KiB", 10}} {
		if n != 0 && n%(1<<u.shift) == 0 {
			return strconv.FormatInt(n>>u.shift, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10) + "B"
}

func (b *byteSize) Set(s string) error {
	s = strings.TrimSpace(s)
	num, mult := s, 1.0
	for _, u := range byteUnits {
		if rest, ok := strings.CutSuffix(s, u.suffix); ok {
			num, mult = strings.TrimSpace(rest), u.size
			break
		}
	}
	x, err := strconv.ParseFloat(num, 64)
	if err != nil || x < 0 || math.IsInf(x, 0) || x*mult >= math.MaxInt64 {
		return fmt.Errorf("%q is not an amount of memory such as 20GiB, 512MiB or 0", s)
	}
	if x > 0 && num == s && x < 1<<20 {
		// A bare small number is more likely a forgotten unit than a cap
		// of a few bytes that no point could ever meet.
		return fmt.Errorf("%q has no unit: write e.g. %sGiB", s, num)
	}
	*b = byteSize(x * mult)
	return nil
}

// scalingPoint identifies one measurement: a row of scaling.tsv.
type scalingPoint struct {
	Study     string `json:"study"`
	Model     string `json:"model"`
	Entities  int    `json:"entities"`
	Relations int    `json:"relations"`
	Rank      int    `json:"rank"`
	Batch     int    `json:"batch"`
}

func (p scalingPoint) String() string {
	return fmt.Sprintf("%s %s |E|=%d |R|=%d d=%d B=%d", p.Study, p.Model, p.Entities, p.Relations, p.Rank, p.Batch)
}

// scalingJob is what a child process measures.
type scalingJob struct {
	scalingPoint
	Warm  int    `json:"warm"`
	Steps int    `json:"steps"`
	Seed  uint64 `json:"seed"`
}

// scalingReport is what a child process that measured its point prints.
type scalingReport struct {
	StepMS     []float64 `json:"step_ms"`  // every timed step
	PeakRSS    int64     `json:"peak_rss"` // bytes; VmHWM at the end
	GOMAXPROCS int       `json:"gomaxprocs"`
}

// scalingRow is a point with its outcome.
type scalingRow struct {
	scalingPoint
	StepMS    float64 // median over the timed steps; NaN unless ok
	PeakRSSMB float64 // NaN if unknown
	Status    string  // ok, oom, timeout or "error: <first line>"
	MaxMemMB  float64 // the cap it was measured under; 0: none
	Coretype  string  // $OPENBLAS_CORETYPE
	Procs     int     // GOMAXPROCS of the child
}

func (r scalingRow) ok() bool { return r.Status == scalingStatusOK }

// ---------------------------------------------------------------------------
// The command.

// runScaling runs the study as the -scaling mode of the command; fs has
// been parsed.
func runScaling(ctx context.Context, fs *flag.FlagSet, o *scalingOptions, env cliEnv) int {
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(env.stderr, "experiments: "+format+"\n", a...)
		return code
	}
	var stray []string
	fs.Visit(func(f *flag.Flag) {
		if f.Name != "out" && f.Name != "scaling" && !strings.HasPrefix(f.Name, "scaling-") {
			stray = append(stray, "-"+f.Name)
		}
	})
	if len(stray) > 0 {
		return fail(exitUsage, "%s cannot be used with -scaling, which takes only -out and -scaling-* flags", strings.Join(stray, ", "))
	}
	plan, err := o.plan()
	if err != nil {
		return fail(exitUsage, "%v", err)
	}

	wd := env.dir
	if wd == "" {
		if wd, err = os.Getwd(); err != nil {
			return fail(exitUsage, "%v", err)
		}
	}
	out := fs.Lookup("out").Value.String()
	if out == "" {
		base := findRepoRoot(wd)
		if base == "" {
			base = wd
		}
		out = filepath.Join(base, "results", "scaling")
	}
	if !filepath.IsAbs(out) {
		out = filepath.Join(wd, out)
	}
	exe, err := os.Executable()
	if err != nil {
		return fail(exitRunsFailed, "finding the executable to measure points in: %v", err)
	}
	if o.maxMem > 0 && !scalingCapEnforced {
		fmt.Fprintf(env.stderr, "note: -scaling-max-mem is enforced on Linux only: points are not stopped at %s\n", o.maxMem.String())
	}
	if avail, err := memAvailable(); err == nil && o.maxMem > 0 && int64(o.maxMem) > avail {
		fmt.Fprintf(env.stderr, "note: -scaling-max-mem %s is more than the %.1f GiB of memory available now: a large point may make the machine swap or be killed by the kernel (recorded as oom)\n",
			o.maxMem.String(), float64(avail)/(1<<30))
	}
	s := &scalingStudy{opts: o, plan: plan, out: out, exe: exe, environ: os.Environ(), stderr: env.stderr}
	failed, err := s.run(ctx)
	switch {
	case ctx.Err() != nil:
		fmt.Fprintln(env.stderr, "interrupted: the points measured so far are in "+filepath.Join(out, scalingTSVName)+"; starting the study again measures the rest")
		return exitInterrupted
	case err != nil:
		return fail(exitRunsFailed, "%v", err)
	case failed > 0:
		// Running out of memory is a result; a timeout or an error is not.
		return fail(exitRunsFailed, "%d points timed out or failed (status in %s); starting the study again retries them",
			failed, filepath.Join(out, scalingTSVName))
	}
	return exitOK
}

// plan checks the options and lists the points of the study: by batch
// size, then by entities, each ordered by size with the models
// interleaved, so that a slowly drifting machine disturbs every model alike.
func (o *scalingOptions) plan() ([]scalingPoint, error) {
	names := splitList(o.models)
	if len(names) == 0 {
		return nil, errors.New("-scaling-models: no model given")
	}
	for _, n := range names {
		if _, _, err := models.Lookup(n); err != nil {
			return nil, fmt.Errorf("-scaling-models: %v", err)
		}
	}
	batches, err := parsePositiveList("-scaling-batches", o.batches)
	if err != nil {
		return nil, err
	}
	entities, err := parsePositiveList("-scaling-entities", o.entities)
	if err != nil {
		return nil, err
	}
	for _, c := range []struct {
		name string
		v    int
	}{{"-scaling-all-entities", o.allEntities}, {"-scaling-batch", o.batch}, {"-scaling-relations", o.relations},
		{"-scaling-rank", o.rank}, {"-scaling-steps", o.steps}} {
		if c.v <= 0 {
			return nil, fmt.Errorf("%s %d: want a positive number", c.name, c.v)
		}
	}
	switch {
	case o.warm < 0:
		return nil, fmt.Errorf("-scaling-warm %d: want 0 or more", o.warm)
	case o.timeout < 0:
		return nil, fmt.Errorf("-scaling-timeout %v: want 0 (none) or more", o.timeout)
	case len(batches) == 0 && len(entities) == 0:
		return nil, errors.New("-scaling-batches and -scaling-entities are both empty: nothing to measure")
	}
	var plan []scalingPoint
	for _, b := range batches {
		for _, m := range names {
			plan = append(plan, scalingPoint{Study: scalingStudyBatch, Model: m, Entities: o.allEntities, Relations: o.relations, Rank: o.rank, Batch: b})
		}
	}
	for _, e := range entities {
		for _, m := range names {
			plan = append(plan, scalingPoint{Study: scalingStudyEntities, Model: m, Entities: e, Relations: o.relations, Rank: o.rank, Batch: o.batch})
		}
	}
	return plan, nil
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

// memAvailable returns MemAvailable of /proc/meminfo in bytes.
func memAvailable() (int64, error) {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	return procStatusBytes(data, "MemAvailable:")
}

// procStatusBytes returns the value of a "<key> <n> kB" line of a /proc
// file, in bytes.
func procStatusBytes(data []byte, key string) (int64, error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), key)
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) != 2 || fields[1] != "kB" {
			return 0, fmt.Errorf("unexpected line %q", sc.Text())
		}
		kb, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("unexpected line %q: %w", sc.Text(), err)
		}
		return kb << 10, nil
	}
	return 0, fmt.Errorf("no %s line", strings.TrimSuffix(key, ":"))
}

// ---------------------------------------------------------------------------
// The parent: one child process per point.

// scalingStudy measures the points of plan that scaling.tsv in out does not
// hold yet, one child process at a time so that points do not compete for
// cores or memory.
type scalingStudy struct {
	opts    *scalingOptions
	plan    []scalingPoint
	out     string
	exe     string   // the command, re-executed for each point
	environ []string // the children's environment, without scalingChildEnv
	stderr  io.Writer
}

// run measures the points and draws the report; failed counts the planned
// points that timed out or failed, now or before. Interrupted by ctx, it
// still draws what was measured.
func (s *scalingStudy) run(ctx context.Context) (failed int, err error) {
	if err := os.MkdirAll(s.out, 0o755); err != nil {
		return 0, err
	}
	lock, err := tryLock(filepath.Join(s.out, scalingLockName))
	if errors.Is(err, errLocked) {
		return 0, fmt.Errorf("another scaling study is running in %s: two at once would disturb each other's timings", s.out)
	}
	if err != nil {
		return 0, err
	}
	defer lock.unlock()

	tsvPath := filepath.Join(s.out, scalingTSVName)
	rows, err := readScalingTSV(tsvPath)
	if err != nil {
		return 0, err
	}
	done := 0
	for i, p := range s.plan {
		if ctx.Err() != nil {
			break
		}
		prefix := fmt.Sprintf("scaling [%d/%d] %s", i+1, len(s.plan), p)
		if j := findScalingRow(rows, p); j >= 0 && s.finished(rows[j]) {
			fmt.Fprintf(s.stderr, "%s: %s already\n", prefix, describeScalingRow(rows[j]))
			done++
			continue
		}
		fmt.Fprintf(s.stderr, "%s: measuring\n", prefix)
		row, err := s.measure(ctx, p)
		if ctx.Err() != nil {
			// Interrupted: the point is not measured, and not recorded.
			break
		}
		if err != nil {
			return 0, err
		}
		fmt.Fprintf(s.stderr, "%s: %s\n", prefix, describeScalingRow(row))
		if j := findScalingRow(rows, p); j >= 0 {
			rows[j] = row
		} else {
			rows = append(rows, row)
		}
		if err := WriteFileAtomic(tsvPath, encodeScalingTSV(rows), 0o644); err != nil {
			return 0, err
		}
	}
	// The tables and the figure show the planned points: scaling.tsv may
	// hold others, from earlier studies with other flags.
	var shown []scalingRow
	for _, p := range s.plan {
		if j := findScalingRow(rows, p); j >= 0 {
			shown = append(shown, rows[j])
			if !rows[j].ok() && rows[j].Status != scalingStatusOOM {
				failed++
			}
		}
	}
	md, err := renderScalingMD(s.opts, shown)
	if err != nil {
		return failed, fmt.Errorf("rendering %s: %w", scalingMDName, err)
	}
	if err := WriteFileAtomic(filepath.Join(s.out, scalingMDName), md, 0o644); err != nil {
		return failed, err
	}
	png, err := renderScalingPlot(s.opts, shown)
	if err != nil {
		return failed, fmt.Errorf("drawing %s: %w", scalingPNGName, err)
	}
	if err := WriteFileAtomic(filepath.Join(s.out, scalingPNGName), png, 0o644); err != nil {
		return failed, err
	}
	if ctx.Err() == nil {
		fmt.Fprintf(s.stderr, "scaling: %d points, %d of them measured before; results in %s, %s and %s\n",
			len(s.plan), done, tsvPath, scalingMDName, scalingPNGName)
	}
	return failed, nil
}

// finished reports whether a row of an earlier study stands: measured, or
// out of memory under a cap no smaller than the current one. Timeouts and
// errors are measured again.
func (s *scalingStudy) finished(r scalingRow) bool {
	switch {
	case r.ok():
		return true
	case r.Status != scalingStatusOOM:
		return false
	case r.MaxMemMB == 0: // out of memory with no cap: the machine's memory
		return true
	}
	return s.opts.maxMem > 0 && float64(s.opts.maxMem)/(1<<20) <= r.MaxMemMB+0.5
}

func findScalingRow(rows []scalingRow, p scalingPoint) int {
	return slices.IndexFunc(rows, func(r scalingRow) bool { return r.scalingPoint == p })
}

func describeScalingRow(r scalingRow) string {
	if !r.ok() {
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
func (s *scalingStudy) measure(ctx context.Context, p scalingPoint) (scalingRow, error) {
	job := scalingJob{scalingPoint: p, Warm: s.opts.warm, Steps: s.opts.steps, Seed: scalingSeed}
	spec, err := json.Marshal(job)
	if err != nil {
		return scalingRow{}, err
	}
	// A child that fails reports nothing: its GOMAXPROCS is taken to be
	// ours, as it runs on the same machine with the same environment.
	row := scalingRow{scalingPoint: p, StepMS: math.NaN(), PeakRSSMB: math.NaN(),
		MaxMemMB: float64(s.opts.maxMem) / (1 << 20), Procs: runtime.GOMAXPROCS(0)}
	for _, kv := range s.environ {
		if v, ok := strings.CutPrefix(kv, "OPENBLAS_CORETYPE="); ok {
			row.Coretype = v
		}
	}

	pctx, cancel := ctx, context.CancelFunc(func() {})
	if s.opts.timeout > 0 {
		pctx, cancel = context.WithTimeout(ctx, s.opts.timeout)
	}
	defer cancel()
	cmd := exec.CommandContext(pctx, s.exe)
	cmd.Env = append(slices.DeleteFunc(slices.Clone(s.environ), func(kv string) bool {
		return strings.HasPrefix(kv, scalingChildEnv+"=")
	}), scalingChildEnv+"="+string(spec))
	var stdout bytes.Buffer
	stderr := &headWriter{max: 64 << 10}
	cmd.Stdout, cmd.Stderr = &stdout, stderr
	cmd.SysProcAttr = scalingChildAttr()
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Start(); err != nil {
		row.Status = scalingStatusError + ": " + firstLine(err.Error())
		return row, nil
	}
	overCap := make(chan int64, 1) // the RSS that made the watchdog stop the child
	exited, watched := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(watched)
		if s.opts.maxMem > 0 {
			watchRSS(cmd.Process, int64(s.opts.maxMem), exited, overCap)
		}
	}()
	runErr := cmd.Wait()
	close(exited)
	<-watched // so that a kill by the watchdog is known below
	if ctx.Err() != nil {
		return scalingRow{}, ctx.Err()
	}
	row.PeakRSSMB = childMaxRSSMB(cmd.ProcessState)
	select {
	case rss := <-overCap:
		row.Status, row.PeakRSSMB = scalingStatusOOM, float64(rss)/(1<<20)
		return row, nil
	default:
	}
	if runErr == nil {
		var rep scalingReport
		if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil || len(rep.StepMS) == 0 {
			row.Status = scalingStatusError + ": unreadable report from the child: " + firstLine(stdout.String())
			return row, nil
		}
		row.Status, row.StepMS, row.Procs = scalingStatusOK, median(rep.StepMS), rep.GOMAXPROCS
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
		hwm, err := procStatusBytes(status, "VmHWM:")
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
		return scalingStatusTimeout
	}
	low := strings.ToLower(stderr)
	for _, sign := range []string{"out of memory", "cannot allocate memory", "memory allocation failed"} {
		if strings.Contains(low, sign) {
			return scalingStatusOOM
		}
	}
	if ps != nil {
		if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
			return scalingStatusOOM
		}
	}
	msg := firstLine(stderr)
	if msg == "" && runErr != nil {
		msg = runErr.Error()
	}
	return scalingStatusError + ": " + msg
}

// firstLine returns the first non-blank line of s, trimmed and shortened to
// fit a table cell.
func firstLine(s string) string {
	for line := range strings.Lines(s) {
		if line = strings.TrimSpace(line); line != "" {
			if len(line) > 200 {
				line = line[:200] + "…"
			}
			return tsvClean(line)
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

// ---------------------------------------------------------------------------
// The child: one point.

// runScalingChild measures the point of the JSON job spec and prints a
// scalingReport on stdout.
func runScalingChild(spec string, stdout, stderr io.Writer) int {
	var job scalingJob
	if err := json.Unmarshal([]byte(spec), &job); err != nil {
		fmt.Fprintf(stderr, "$%s: %v\n", scalingChildEnv, err)
		return exitUsage
	}
	rep, err := measureScalingJob(job)
	if err != nil {
		fmt.Fprintf(stderr, "%v\n", err)
		return exitRunsFailed
	}
	if err := json.NewEncoder(stdout).Encode(rep); err != nil {
		fmt.Fprintf(stderr, "%v\n", err)
		return exitRunsFailed
	}
	return exitOK
}

// measureScalingJob times job.Warm+job.Steps training steps of a fresh
// model on random triples, reporting the last job.Steps: the first steps
// allocate the program's buffers and warm the caches.
func measureScalingJob(job scalingJob) (*scalingReport, error) {
	if job.Batch <= 0 || job.Steps <= 0 || job.Warm < 0 {
		return nil, fmt.Errorf("scaling point %v: %d steps after %d warm-up: want a positive batch and steps, and warm-up 0 or more",
			job.scalingPoint, job.Steps, job.Warm)
	}
	m, err := models.New(job.Model, models.Sizes{Entities: job.Entities, Relations: job.Relations, Rank: job.Rank},
		models.Options{Seed: job.Seed, Dtype: tensor.Float32})
	if err != nil {
		return nil, err
	}
	st, err := train.NewStepper(m, objectives.PLL{Weights: objectives.Uniform}, job.Batch, scalingLR)
	if err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(job.Seed, 0))
	triples := make([]kg.Triple, job.Batch)
	rep := &scalingReport{GOMAXPROCS: runtime.GOMAXPROCS(0)}
	for i := range job.Warm + job.Steps {
		for k := range triples {
			triples[k] = kg.Triple{S: int32(rng.IntN(job.Entities)), R: int32(rng.IntN(job.Relations)), O: int32(rng.IntN(job.Entities))}
		}
		start := time.Now()
		// A diverged step (train.ErrDiverged) is an error too: it skips
		// the Adam update, so it is not the step to time.
		if _, err := st.Step(triples); err != nil {
			return nil, fmt.Errorf("step %d: %w", i+1, err)
		}
		elapsed := time.Since(start)
		if i >= job.Warm {
			rep.StepMS = append(rep.StepMS, float64(elapsed)/float64(time.Millisecond))
		}
	}
	if rep.PeakRSS, err = peakRSSBytes(); err != nil {
		rep.PeakRSS = 0 // unknown; the parent falls back on rusage
	}
	return rep, nil
}

// ---------------------------------------------------------------------------
// scaling.tsv

var scalingColumns = []string{"study", "model", "entities", "relations", "rank", "batch", "step_ms", "peak_rss_mb",
	"status", "max_mem_mb", "openblas_coretype", "gomaxprocs"}

func encodeScalingTSV(rows []scalingRow) []byte {
	var b bytes.Buffer
	b.WriteString(strings.Join(scalingColumns, "\t"))
	b.WriteByte('\n')
	num := func(x float64, prec int) string {
		if math.IsNaN(x) {
			return ""
		}
		return strconv.FormatFloat(x, 'f', prec, 64)
	}
	for _, r := range rows {
		fields := []string{r.Study, r.Model, strconv.Itoa(r.Entities), strconv.Itoa(r.Relations), strconv.Itoa(r.Rank),
			strconv.Itoa(r.Batch), num(r.StepMS, 3), num(r.PeakRSSMB, 1), r.Status, num(r.MaxMemMB, 0), r.Coretype,
			strconv.Itoa(r.Procs)}
		for i := range fields {
			fields[i] = tsvClean(fields[i])
		}
		b.WriteString(strings.Join(fields, "\t"))
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// readScalingTSV reads the rows of scaling.tsv; none if it does not exist.
// Columns are found by name, so that rows survive a change of column order.
func readScalingTSV(path string) ([]scalingRow, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return parseScalingTSV(path, data)
}

func parseScalingTSV(path string, data []byte) ([]scalingRow, error) {
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) == 0 || lines[0] == "" {
		return nil, nil
	}
	col := map[string]int{}
	for i, h := range strings.Split(lines[0], "\t") {
		col[h] = i
	}
	for _, c := range []string{"study", "model", "entities", "relations", "rank", "batch", "status"} {
		if _, ok := col[c]; !ok {
			return nil, fmt.Errorf("%s:1: no %s column", path, c)
		}
	}
	var rows []scalingRow
	for n, line := range lines[1:] {
		if line == "" {
			continue
		}
		fields := strings.Split(line, "\t")
		get := func(c string) string {
			if i, ok := col[c]; ok && i < len(fields) {
				return fields[i]
			}
			return ""
		}
		bad := func(c string) error {
			return fmt.Errorf("%s:%d: bad %s %q", path, n+2, c, get(c))
		}
		r := scalingRow{scalingPoint: scalingPoint{Study: get("study"), Model: get("model")}, Status: get("status"),
			Coretype: get("openblas_coretype")}
		for _, f := range []struct {
			c   string
			dst *int
		}{{"entities", &r.Entities}, {"relations", &r.Relations}, {"rank", &r.Rank}, {"batch", &r.Batch}} {
			v, err := strconv.Atoi(get(f.c))
			if err != nil || v <= 0 {
				return nil, bad(f.c)
			}
			*f.dst = v
		}
		for _, f := range []struct {
			c   string
			dst *float64
		}{{"step_ms", &r.StepMS}, {"peak_rss_mb", &r.PeakRSSMB}, {"max_mem_mb", &r.MaxMemMB}} {
			*f.dst = math.NaN()
			if s := get(f.c); s != "" {
				v, err := strconv.ParseFloat(s, 64)
				if err != nil {
					return nil, bad(f.c)
				}
				*f.dst = v
			}
		}
		if math.IsNaN(r.MaxMemMB) {
			r.MaxMemMB = 0
		}
		if s := get("gomaxprocs"); s != "" {
			v, err := strconv.Atoi(s)
			if err != nil {
				return nil, bad("gomaxprocs")
			}
			r.Procs = v
		}
		switch {
		case r.Study != scalingStudyBatch && r.Study != scalingStudyEntities:
			return nil, bad("study")
		case r.Model == "":
			return nil, bad("model")
		case r.Status == "":
			return nil, bad("status")
		case r.ok() && !(r.StepMS > 0):
			return nil, bad("step_ms")
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// ---------------------------------------------------------------------------
// scaling.md

// renderScalingMD tabulates the rows, one table per study with a row per
// batch size or entity count and a column per model.
func renderScalingMD(o *scalingOptions, rows []scalingRow) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("# Training-cost scaling\n\n")
	fmt.Fprintf(&b, "One PLL training step (forward, backward and Adam update, float32) on random triples, "+
		"|R| = %d, d = %d. Time: the median of the timed steps (%d, after %d warm-up); memory: the peak RSS of the process that "+
		"measured it (start-up included), each point in a process of its own. "+
		"oom: the point's resident memory passed %s. "+
		"Paper: figure fig:pll-scaling and appendix app:training-benchmark-details.\n\n",
		o.relations, o.rank, o.steps, o.warm, capText(o.maxMem))
	env := map[string]bool{}
	for _, r := range rows {
		env[fmt.Sprintf("GOMAXPROCS %d, OPENBLAS_CORETYPE %s", r.Procs, cmp.Or(r.Coretype, "unset"))] = true
	}
	if len(env) > 0 {
		fmt.Fprintf(&b, "Environment: %s.\n\n", strings.Join(slices.Sorted(maps.Keys(env)), "; "))
	}
	for _, st := range []struct {
		study, title, xname string
		x                   func(scalingRow) int
	}{
		{scalingStudyBatch, fmt.Sprintf("By batch size, |E| = %d", o.allEntities), "batch", func(r scalingRow) int { return r.Batch }},
		{scalingStudyEntities, fmt.Sprintf("By number of entities, batch %d", o.batch), "entities", func(r scalingRow) int { return r.Entities }},
	} {
		var xs []int
		var names []string
		cells := map[string]string{}
		for _, r := range rows {
			if r.Study != st.study {
				continue
			}
			x := st.x(r)
			if !slices.Contains(xs, x) {
				xs = append(xs, x)
			}
			if !slices.Contains(names, r.Model) {
				names = append(names, r.Model)
			}
			cells[r.Model+"\x00"+strconv.Itoa(x)] = scalingCell(r)
		}
		if len(xs) == 0 {
			continue
		}
		slices.Sort(xs)
		fmt.Fprintf(&b, "## %s\n\nEach cell: time per step, peak RSS.\n\n", st.title)
		table := newMarkdownTable(&b)
		table.Header(append([]string{st.xname}, names...))
		for _, x := range xs {
			line := []string{strconv.Itoa(x)}
			for _, n := range names {
				line = append(line, strings.ReplaceAll(cmp.Or(cells[n+"\x00"+strconv.Itoa(x)], "–"), "|", `\|`))
			}
			if err := table.Append(line); err != nil {
				return nil, err
			}
		}
		if err := table.Render(); err != nil {
			return nil, err
		}
		b.WriteString("\n")
	}
	return b.Bytes(), nil
}

func scalingCell(r scalingRow) string {
	switch {
	case r.ok():
		return formatStepTime(r.StepMS) + ", " + formatMiB(r.PeakRSSMB)
	case r.Status == scalingStatusOOM:
		return "**OOM**"
	}
	return "**" + r.Status + "**"
}

func capText(b byteSize) string {
	if b == 0 {
		return "the machine's memory"
	}
	return b.String()
}

func formatStepTime(ms float64) string {
	switch {
	case math.IsNaN(ms):
		return "–"
	case ms < 1000:
		return strconv.FormatFloat(ms, 'f', 1, 64) + " ms"
	}
	return strconv.FormatFloat(ms/1000, 'f', 2, 64) + " s"
}

func formatMiB(mb float64) string {
	switch {
	case math.IsNaN(mb):
		return "? GiB"
	case mb < 1024:
		return strconv.FormatFloat(mb, 'f', 0, 64) + " MiB"
	}
	return strconv.FormatFloat(mb/1024, 'f', 2, 64) + " GiB"
}
