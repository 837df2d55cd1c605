package sweep

import (
	"archive/zip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"gekc/graph"
	"gekc/grid"
	"gekc/internal/atomicfile"
	"gekc/internal/filelock"
	"gekc/internal/jsonfloat"
	"gekc/internal/procstat"
	"gekc/report"
	"gekc/resultsdir"
	"gekc/train"
	"gekc/train/ckpt"
)

// Sweep runs the selected runs of a grid into one output directory. Any
// number of sweeps, in this process (-j) or others (SLURM array tasks, a
// second terminal), may share the directory:
//
//   - a run is claimed by an exclusive flock on runs/<id>/lock, held while
//     it trains; a claimed run is skipped, not waited for;
//   - a run is finished when its metrics.json, written last and atomically,
//     says finished or diverged; it is then never run again;
//   - results.tsv and results.md are rewritten atomically under an
//     exclusive flock on results.lock, after checking whether the run
//     already has its row.
//
// So a SIGKILL at any moment loses no finished run and repeats none: a run
// killed before its metrics.json continues from its last resume state (or
// from scratch), one killed after it gets its row added on the next start.
type Sweep struct {
	grid       *grid.Grid
	runs       []grid.Run // the selection, in execution order
	out        string
	dataRoot   string
	jobs       int
	samples    int
	noSamples  bool
	stateEvery time.Duration
	run        RunFunc
	stdout     *lockedWriter
	stderr     *lockedWriter
	bars       bool
	quiet      bool
	verbose    bool
	command    []string
	reference  *report.Reference

	rung        *resultsdir.RungMark // the search rung being trained; nil without [search]
	onlyRung    int                  // Options.Rung
	rungTask    int                  // Options.RungTask counted from 0; -1 for all
	promoteOnly bool                 // Options.Promote
	fed         int                  // runs handed to runAll, over all rungs

	mu       sync.Mutex
	results  map[runResult]int
	problems []error                  // failures of the machinery itself, not of runs
	done     map[string]chan struct{} // closed when this process is done with a run (distill_from ordering)
}

// Options are how a Sweep runs; the zero value of each field is a usable
// default (nil writers discard).
type Options struct {
	Out      string // the results directory
	DataRoot string // holds one directory per data set
	Jobs     int    // runs trained at once; < 1 means 1
	// Samples, when > 0, is how many triples each run trained now samples
	// as it ends, in place of its grid's samples; <= 0 keeps the grid's.
	Samples int
	// NoSamples: runs trained now sample nothing, whatever the grid says
	// (-samples 0).
	NoSamples bool
	// StateEvery is how often a run saves its resume state, at most: after
	// an epoch or inside a long one (train.Config.StateEvery); 0: after
	// every epoch only; < 0: never.
	StateEvery time.Duration
	Run        RunFunc   // trains one run; nil means Train
	Stdout     io.Writer // the summary table (PrintSummary)
	Stderr     io.Writer // progress, one line per run, warnings
	Bars       bool      // progress bars (a terminal and one job) rather than plain lines
	Quiet      bool      // no per-epoch progress (-q)
	Verbose    bool      // a line for every epoch (-v)
	Command    []string  // the command line, recorded in each metrics.json
	// Reference, when it has values for a dataset and rank of the
	// results (report.Reference.Covers), makes every rewrite of
	// results.md also write paper.md, the best configurations beside the
	// reference's (see -analyze paper).
	Reference *report.Reference
	// Rung, when > 0, trains only that rung (counted from 1) of the
	// grid's [search], deciding the rung before it first if no process
	// has, and deciding it after when all its runs are final. RungTask,
	// when > 0, trains only that run of the rung, counted from 1 in grid
	// order (a SLURM array task);
	// Promote trains nothing and only decides the rung (the promote step
	// between two arrays).
	Rung     int
	RungTask int
	Promote  bool
}

// New returns a sweep of runs, a selection of g.Runs, reordered so that a
// run distilling from another selected run comes after it. Call Prepare,
// then Run, then PrintSummary.
func New(g *grid.Grid, runs []grid.Run, o Options) *Sweep {
	if o.Run == nil {
		o.Run = Train
	}
	if o.Stdout == nil {
		o.Stdout = io.Discard
	}
	if o.Stderr == nil {
		o.Stderr = io.Discard
	}
	return &Sweep{
		grid: g, runs: orderForDistill(runs), out: o.Out, dataRoot: o.DataRoot, jobs: max(o.Jobs, 1),
		samples: o.Samples, noSamples: o.NoSamples, stateEvery: o.StateEvery, run: o.Run,
		stdout: &lockedWriter{w: o.Stdout}, stderr: &lockedWriter{w: o.Stderr},
		bars: o.Bars, quiet: o.Quiet, verbose: o.Verbose, command: o.Command, reference: o.Reference,
		onlyRung: o.Rung, rungTask: max(o.RungTask, 0) - 1, promoteOnly: o.Promote,
	}
}

// Tally counts how the runs of a sweep ended.
type Tally struct {
	Finished    int // trained now, finished
	Diverged    int // trained now, diverged
	Failed      int // trained now (or tried to), failed
	AlreadyDone int // finished or diverged before this sweep
	// NoCheckpoint counts those of AlreadyDone that finished but whose
	// checkpoint is missing or unreadable: analyses pass them over.
	NoCheckpoint int
	Busy         int // being trained by another process
	Interrupted  int // stopped while training because the context was cancelled
	NotStarted   int // not started because the context was cancelled first
	// Problems counts failures of the machinery itself (a results table
	// that could not be written, say), not of runs.
	Problems int
}

// Run trains the selection and returns how the runs ended, once all are
// done or ctx is cancelled and the runs in flight have saved their state.
// It ends by regenerating results.md.
func (s *Sweep) Run(ctx context.Context) Tally {
	s.results = map[runResult]int{}
	if s.grid.Search != nil {
		s.runSearch(ctx)
	} else {
		s.runAll(ctx, s.runs)
	}
	if err := s.refreshReport(); err != nil {
		s.problem(fmt.Errorf("writing results.md: %w", err))
	}
	// The workers are done: s.results and s.problems are no longer written.
	r := s.results
	n := 0
	for _, v := range r {
		n += v
	}
	return Tally{Finished: r[resFinished], Diverged: r[resDiverged], Failed: r[resFailed],
		AlreadyDone: r[resAlreadyDone] + r[resDoneBroken], NoCheckpoint: r[resDoneBroken], Busy: r[resBusy], Interrupted: r[resInterrupted],
		NotStarted: r[resNotStarted] + s.fed - n,
		Problems:   len(s.problems)}
}

type runResult int

const (
	resFinished    runResult = iota // trained now, finished
	resDiverged                     // trained now, diverged
	resFailed                       // trained now (or tried to), failed
	resAlreadyDone                  // finished or diverged before this invocation
	resBusy                         // claimed by another process or goroutine
	resInterrupted                  // cancelled by SIGINT/SIGTERM; resumes next time
	resNotStarted                   // cancelled before it started
	resDoneBroken                   // finished before, its checkpoint missing or unreadable
)

// checkpointOpens reports why a checkpoint cannot serve a run's analyses:
// missing, or not a readable archive (a truncated file, say).
func checkpointOpens(path string) error {
	z, err := zip.OpenReader(path)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return z.Close()
}

func (s *Sweep) runDir(id string) string { return filepath.Join(s.out, resultsdir.RunsDirName, id) }
func (s *Sweep) path(name string) string { return filepath.Join(s.out, name) }

// Prepare creates the output directory, saves the grid, removes temporary
// files of killed writers, and repairs results.tsv: a run killed between
// writing metrics.json and its row gets its row now, without re-running.
func (s *Sweep) Prepare() error {
	if err := s.checkSearch(); err != nil {
		return err
	}
	if s.grid.Search != nil {
		for _, r := range s.grid.Search.Replaced {
			s.stderr.printf("note: %s is replaced by [search] max_epochs = %d, every run's epochs\n", r, s.grid.Search.MaxEpochs)
		}
	}
	if err := os.MkdirAll(filepath.Join(s.out, resultsdir.RunsDirName), 0o755); err != nil {
		return fmt.Errorf("creating results directory: %w", err)
	}
	return s.withResultsLock(func() error {
		if err := s.saveGridCopy(); err != nil {
			return err
		}
		// Every writer of these temporaries holds results.lock, so any
		// that exist now were left by a killed process.
		entries, err := os.ReadDir(s.out)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if atomicfile.IsTemp(e.Name()) {
				os.Remove(s.path(e.Name()))
			}
		}
		table, err := report.ReadTSV(s.path(resultsdir.ResultsTSVName))
		if err != nil {
			return err
		}
		changed := false
		for _, r := range s.runs {
			rec, err := resultsdir.ReadRecord(s.runDir(r.ID))
			if err != nil {
				s.stderr.printf("warning: %v; the run will be trained again\n", err)
				continue
			}
			if err := s.sameKind(rec); err != nil {
				return err
			}
			if rec != nil && final(rec.Status) && table.Upsert(resultsdir.Row(rec)) {
				changed = true
			}
		}
		if changed {
			if err := atomicfile.WriteFile(s.path(resultsdir.ResultsTSVName), table.TSV(), 0o644); err != nil {
				return err
			}
		}
		return s.writeReport(table)
	})
}

// saveGridCopy writes <out>/grid.toml (resultsdir.SaveGridCopy).
func (s *Sweep) saveGridCopy() error { return resultsdir.SaveGridCopy(s.out, s.grid.Source, s.stderr) }

// withResultsLock runs fn holding the results lock (resultsdir.WithLock).
func (s *Sweep) withResultsLock(fn func() error) error { return resultsdir.WithLock(s.out, fn) }

// recordRow gives a run its results.tsv row, unless it has one already, and
// regenerates results.md.
func (s *Sweep) recordRow(rec *resultsdir.Record) error {
	return s.withResultsLock(func() error {
		table, err := report.ReadTSV(s.path(resultsdir.ResultsTSVName))
		if err != nil {
			return err
		}
		if !table.Upsert(resultsdir.Row(rec)) {
			return nil
		}
		if err := atomicfile.WriteFile(s.path(resultsdir.ResultsTSVName), table.TSV(), 0o644); err != nil {
			return err
		}
		return s.writeReport(table)
	})
}

// refreshReport regenerates results.md from results.tsv.
func (s *Sweep) refreshReport() error {
	return s.withResultsLock(func() error {
		table, err := report.ReadTSV(s.path(resultsdir.ResultsTSVName))
		if err != nil {
			return err
		}
		return s.writeReport(table)
	})
}

func (s *Sweep) writeReport(table *report.Table) error {
	return resultsdir.WriteReport(s.out, s.grid.Name, s.reference, table)
}

// PrintSummary writes the best configuration of each model and objective
// among the selected runs to stdout, from results.tsv (so runs finished
// before this invocation count too).
func (s *Sweep) PrintSummary() error {
	table, err := report.ReadTSV(s.path(resultsdir.ResultsTSVName))
	if err != nil {
		return err
	}
	// Only the selected runs count, so runs of other grids sharing the
	// results directory stay out.
	ids := make(map[string]bool, len(s.runs))
	for _, r := range s.runs {
		ids[r.ID] = true
	}
	mine := &report.Table{}
	for _, r := range table.Rows {
		if ids[r["id"]] {
			mine.Rows = append(mine.Rows, r)
		}
	}
	fmt.Fprintf(s.stdout, "%s: best configuration per model and objective (test split; selected on validation %s; all columns in %s)\n\n",
		s.grid.Name, s.selectMetrics(), s.path(resultsdir.ResultsMDName))
	if err := report.Summary(s.stdout, mine); err != nil {
		return err
	}
	if s.grid.Search != nil {
		return s.printSearch()
	}
	return nil
}

// selectMetrics names the validation metrics the selected runs select on.
func (s *Sweep) selectMetrics() string {
	var sel []string
	for _, r := range s.runs {
		if !slices.Contains(sel, r.Spec.Eval.Select) {
			sel = append(sel, r.Spec.Eval.Select)
		}
	}
	return strings.Join(sel, ", ")
}

// runAll trains runs with s.jobs workers and returns when all are done or
// ctx is cancelled and the runs in flight have stopped.
func (s *Sweep) runAll(ctx context.Context, runs []grid.Run) {
	s.fed += len(runs)
	s.done = make(map[string]chan struct{}, len(runs))
	for _, r := range runs {
		s.done[r.ID] = make(chan struct{})
	}
	queue := make(chan grid.Run)
	var wg sync.WaitGroup
	for range max(s.jobs, 1) {
		wg.Go(func() {
			for r := range queue {
				res := s.runOne(ctx, r)
				close(s.done[r.ID])
				s.mu.Lock()
				s.results[res]++
				s.mu.Unlock()
			}
		})
	}
feed:
	for _, r := range runs {
		select {
		case queue <- r:
		case <-ctx.Done():
			break feed
		}
	}
	close(queue)
	wg.Wait()
}

func (s *Sweep) problem(err error) {
	s.mu.Lock()
	s.problems = append(s.problems, err)
	s.mu.Unlock()
	s.stderr.printf("error: %v\n", err)
}

func (s *Sweep) label(r grid.Run) string {
	return fmt.Sprintf("[%d/%d] %s", r.Index, len(s.grid.Runs), r.ID)
}

// runOne claims, trains and records one run.
func (s *Sweep) runOne(ctx context.Context, r grid.Run) runResult {
	if ctx.Err() != nil {
		return resNotStarted
	}
	dir := s.runDir(r.ID)
	unlock, res, ok := s.claim(r, dir)
	if !ok {
		return res
	}
	defer unlock()
	if res, done := s.finishedBefore(r, dir); done {
		return res
	}
	// Unfinished runs continue from their resume state, if they saved one;
	// whatever else a killed attempt left (a partial checkpoint, a failed
	// attempt's record) goes.
	if err := cleanRunDir(dir); err != nil {
		s.problem(fmt.Errorf("run %s: %w", r.ID, err))
		return resFailed
	}
	job, rec := s.newJob(r, dir)
	outcome, res, runErr := s.train(ctx, r, job, rec)
	if res != resFinished {
		return res
	}
	return s.record(r, job, rec, outcome, runErr)
}

// claim takes run r's lock in dir; ok is false, with how the run ends
// here, when another process holds it or it cannot be taken.
func (s *Sweep) claim(r grid.Run, dir string) (unlock func(), res runResult, ok bool) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		s.problem(fmt.Errorf("run %s: %w", r.ID, err))
		return nil, resFailed, false
	}
	lock, err := filelock.TryLock(filepath.Join(dir, resultsdir.RunLockName))
	if errors.Is(err, filelock.ErrLocked) {
		s.stderr.printf("%s is being trained by another process; skipped\n", s.label(r))
		return nil, resBusy, false
	}
	if err != nil {
		s.problem(fmt.Errorf("run %s: %w", r.ID, err))
		return nil, resFailed, false
	}
	return func() { lock.Unlock() }, 0, true
}

// finishedBefore looks at the run's record under its lock (another
// process may have finished it since this one looked): done reports a run
// that ends here, given its row; a search's run promoted since is
// trainable again.
func (s *Sweep) finishedBefore(r grid.Run, dir string) (res runResult, done bool) {
	prev, err := resultsdir.ReadRecord(dir)
	if err != nil {
		s.stderr.printf("warning: %v; training the run again\n", err)
	}
	if prev, err = s.advanceRung(dir, prev); err != nil {
		s.problem(fmt.Errorf("run %s: %w", r.ID, err))
		return resFailed, true
	}
	if prev == nil || !final(prev.Status) {
		return 0, false
	}
	if err := s.recordRow(prev); err != nil {
		s.problem(fmt.Errorf("run %s: recording its row: %w", r.ID, err))
	}
	if prev.Status == train.Finished {
		if err := checkpointOpens(filepath.Join(dir, ckpt.CheckpointName)); err != nil {
			s.stderr.printf("%s finished before, but %v: analyses, query and synth pass it over; restore the file, or remove its metrics.json to train it again\n", s.label(r), err)
			return resDoneBroken, true
		}
	}
	return resAlreadyDone, true
}

// newJob is run r's job in dir, with the -samples override and the
// current rung's epochs, and its record so far.
func (s *Sweep) newJob(r grid.Run, dir string) (Job, *resultsdir.Record) {
	spec := r.Spec.Clone()
	switch {
	case s.noSamples:
		spec.Samples = 0
	case s.samples > 0:
		spec.Samples = s.samples
	}
	job := Job{ID: r.ID, Spec: s.rungSpec(spec), DataRoot: s.dataRoot, RunDir: dir,
		StatePath: filepath.Join(dir, ckpt.StateName), StateEvery: s.stateEvery, SaveFinal: s.rung != nil && !s.rung.Last()}
	job.Observer = s.observer(r, job.Spec.Epochs)
	rec := s.newRecord(r, spec)
	rec.Rung = s.rung
	return job, rec
}

// train runs the job: res is resFinished when a record of outcome and
// runErr is to be written (whatever the run's outcome), else how the run
// ends here (interrupted, or a file that could not be written).
func (s *Sweep) train(ctx context.Context, r grid.Run, job Job, rec *resultsdir.Record) (outcome *Outcome, res runResult, runErr error) {
	job.DistillCheckpoint, runErr = s.resolveDistill(ctx, r)
	if runErr == nil {
		if err := resultsdir.WriteConfig(filepath.Join(job.RunDir, resultsdir.ConfigName), rec.Spec); err != nil {
			s.problem(fmt.Errorf("run %s: %w", r.ID, err))
			return nil, resFailed, nil
		}
		// Resetting VmHWM makes the peak this run's; with -j > 1 runs share
		// the process and the figure is the process's peak while the run
		// went. Without /proc it stays 0, "unknown".
		if err := procstat.ResetPeakRSS(); err != nil {
			rec.Notes = append(rec.Notes, "peak RSS not reset: "+err.Error())
		}
		outcome, runErr = callRun(ctx, s.run, job)
	}
	if runErr == nil || ctx.Err() == nil {
		return outcome, resFinished, runErr
	}
	// Interrupted: leave nothing behind that could pass for a result, but
	// keep the resume state.
	if err := cleanRunDir(job.RunDir); err != nil {
		s.problem(fmt.Errorf("run %s: cleaning up after interrupt: %w", r.ID, err))
	}
	if info, err := ckpt.ReadStateInfo(job.StatePath); err == nil {
		s.stderr.printf("%s interrupted; it will resume %s next time\n", s.label(r), info.ResumePoint())
	} else {
		s.stderr.printf("%s interrupted; it will start afresh next time\n", s.label(r))
	}
	return nil, resInterrupted, runErr
}

// record completes and writes the run's record and its row, and drops the
// state a final run no longer needs (unless a later rung may continue it).
func (s *Sweep) record(r grid.Run, job Job, rec *resultsdir.Record, outcome *Outcome, runErr error) runResult {
	s.completeRecord(rec, outcome, runErr)
	if err := resultsdir.WriteRecord(filepath.Join(job.RunDir, resultsdir.MetricsName), rec); err != nil {
		s.problem(fmt.Errorf("run %s: %w", r.ID, err))
		return resFailed
	}
	if final(rec.Status) && !(job.SaveFinal && rec.Status == train.Finished) {
		if err := os.Remove(job.StatePath); err != nil && !errors.Is(err, fs.ErrNotExist) {
			s.problem(fmt.Errorf("run %s: %w", r.ID, err))
		}
	}
	if err := s.recordRow(rec); err != nil {
		s.problem(fmt.Errorf("run %s: recording its row (metrics.json is safe; the next start adds the row): %w", r.ID, err))
	}
	// Progress, like the epochs: stdout is for the table the sweep ends with.
	s.stderr.printf("%s\n", summaryLine(s.label(r), rec))
	switch rec.Status {
	case train.Finished:
		return resFinished
	case train.Diverged:
		return resDiverged
	}
	return resFailed
}

func (s *Sweep) observer(r grid.Run, epochs int) train.Observer {
	if s.quiet {
		return nopObserver{}
	}
	return newProgressObserver(s.stderr, s.label(r), epochs, s.bars, s.verbose)
}

// callRun calls the run function, turning a panic into a failed run: one
// bad configuration must not take down a sweep left running overnight.
func callRun(ctx context.Context, fn RunFunc, job Job) (out *Outcome, err error) {
	defer func() {
		if p := recover(); p != nil {
			out, err = nil, fmt.Errorf("panic: %v\n%s", p, debug.Stack())
		}
	}()
	return fn(ctx, job)
}

// hostSgemm measures the host's Sgemm rate once per process (0.1 s).
var hostSgemm = sync.OnceValue(graph.SgemmRate)

func (s *Sweep) newRecord(r grid.Run, spec grid.RunSpec) *resultsdir.Record {
	p := thisProcess()
	return &resultsdir.Record{
		ID: r.ID, ConfigID: spec.ConfigID(), Spec: spec, StartedAt: time.Now().UTC(),
		Host: p.Host, GoVersion: runtime.Version(), GOMAXPROCS: p.GOMAXPROCS, CPU: p.CPU,
		SgemmGFLOPS: jsonfloat.Float(p.SgemmGFLOPS), BLASThreads: p.BLASThreads, Env: p.Env,
		PID: os.Getpid(), Command: s.command, Grid: s.grid.Path,
	}
}

// thisProcess describes this process as a share of a run's training
// (ckpt.Segment, without its times and epochs): its host, threads,
// matrix-product rate and the environment variables that change speed or
// numerics, as set ("" when unset).
func thisProcess() ckpt.Segment {
	host, _ := os.Hostname()
	env := map[string]string{}
	for _, k := range []string{"OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "OPENBLAS_NUM_THREADS", "GOMAXPROCS"} {
		env[k] = os.Getenv(k)
	}
	return ckpt.Segment{Host: host, CPU: procstat.CPU(), GOMAXPROCS: runtime.GOMAXPROCS(0),
		BLASThreads: graph.BLASThreads(), SgemmGFLOPS: hostSgemm(), Env: env}
}

// completeRecord fills rec from what the run function returned, measuring
// what it left zero.
func (s *Sweep) completeRecord(rec *resultsdir.Record, o *Outcome, runErr error) {
	rec.FinishedAt = time.Now().UTC()
	wall := rec.FinishedAt.Sub(rec.StartedAt).Seconds()
	switch {
	case runErr != nil:
		rec.Status, rec.Error = train.Failed, runErr.Error()
	case o == nil:
		rec.Status, rec.Error = train.Failed, "the run function returned neither an outcome nor an error"
	case o.Status == "" || o.Status == train.Finished:
		rec.Status = train.Finished
	case o.Status == train.Diverged:
		rec.Status = train.Diverged
	default:
		rec.Status, rec.Error = train.Failed, fmt.Sprintf("the run function returned status %q; want %q or %q", o.Status, train.Finished, train.Diverged)
	}
	rec.WallSeconds = jsonfloat.Float(wall)
	if o != nil {
		rec.Epochs = append([]train.EpochRecord{}, o.Epochs...) // [], not null, when there are none
		rec.BestEpoch, rec.LLEpoch = o.BestEpoch, o.LLEpoch
		rec.Valid, rec.Test = jsonfloat.Map(o.Valid), jsonfloat.Map(o.Test)
		rec.Notes = append(rec.Notes, o.Notes...)
		if o.WallSeconds > 0 {
			rec.WallSeconds = jsonfloat.Float(o.WallSeconds)
		}
		rec.SecondsPerEpoch = jsonfloat.Float(o.SecondsPerEpoch)
		rec.PeakRSSBytes = o.PeakRSSBytes
		rec.Memory, rec.Data = o.Memory, o.Data
		rec.Segments = o.Segments
		rec.Processes = o.Processes
	}
	if rec.SecondsPerEpoch == 0 && len(rec.Epochs) > 0 {
		var sum float64
		n := 0
		for _, e := range rec.Epochs {
			if e.Epoch > 0 { // epoch 0 is the validation of a distilled model before training
				sum += float64(e.Seconds)
				n++
			}
		}
		if n > 0 {
			rec.SecondsPerEpoch = jsonfloat.Float(sum / float64(n))
		}
	}
	if rec.PeakRSSBytes == 0 {
		if rss, err := procstat.PeakRSS(); err == nil {
			rec.PeakRSSBytes = rss
		}
	}
	if s.jobs > 1 {
		rec.Notes = append(rec.Notes, fmt.Sprintf("peak_rss_bytes is the peak of the whole process, which ran up to %d runs at once (-j)", s.jobs))
	}
}
