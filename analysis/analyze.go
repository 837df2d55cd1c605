package analysis

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"

	"flag"
	"gekc/grid"
	"gekc/internal/atomicfile"
	"gekc/models"
	"gekc/resultsdir"
	"gekc/train"
)

// Options are what the analyses of a results directory's finished runs
// take (Analyze); each kind reads the fields that name it.
type Options struct {
	Title    string // tables: the grid's name, results.md's title
	Features string // ktd and tsne: the ID or directory of the finished ComplEx run giving ψ
	// KTDTable names the KTD's tables, <KTDTable>.tsv and .md ("" is
	// "ktd"): a table of another ψ lives beside the first.
	KTDTable string
	// NNMFAug adds the NNMFAug baseline (Chauhan et al. 2021, the paper's
	// Table 3 and 4) to the KTD's rows, and says its test log-likelihood:
	// minutes of fitting on a benchmark's graph, so only when asked (a
	// later analysis without it keeps its row).
	NNMFAug bool
	// Reference is the reference table (report.ReadReference) that paper
	// compares with and tables writes paper.md from; "": none (tables
	// then writes no paper.md, paper fails).
	Reference string
	// KTDReference is the file of published KTDs the KTD tables set beside
	// their rows (ReadKTDReference); "" or a missing file: none.
	KTDReference string
	Samples      int    // samples per run; <= 0 means DefaultSamples
	Out          string // the results directory
	DataRoot     string
	Runs         []grid.Run // the runs to analyse; those not finished are passed over
	Stdout       io.Writer  // the markdown table of samples (their audit), ktd, calibration and paper
	Stderr       io.Writer  // a line per run
}

// An Analysis is one kind of post-hoc analysis of a results directory's
// finished runs, driven by Analyze: each selected run is offered to Skip,
// computed unless skipped, and the tables are written at the end.
type Analysis interface {
	// Skip reports whether run r is passed over: not the kind of run the
	// analysis takes, or one whose row stands (said on the log). An error
	// ends the analysis.
	Skip(r *Selected) (bool, error)
	// Compute analyses r and keeps its row. An error holding a
	// *resultsdir.BrokenRunError (from r.Open) passes r over; any other
	// ends the analysis.
	Compute(ctx context.Context, r *Selected) error
	// Tables ends the analysis: given the loop's error (nil when every
	// run was analysed or passed over) it returns the error to report and
	// the write of its tables (nil: none), which Analyze calls holding the
	// results lock.
	Tables(err error) (write func() error, _ error)
}

type registered struct {
	name string
	new  func(o *Options) (Analysis, error) // prepares the analysis: reads earlier tables, loads ψ
}

// kinds are the analyses by the names the command gives them, in the
// order its messages list them.
var kinds = []registered{
	{"samples", newSamples}, {"ktd", newKTD}, {"tsne", newTSNE}, {"calibration", newCalibration},
	{"plots", newPlots}, {"paper", newPaper}, {"tables", newTables},
}

// KindNames lists the analyses' names, for messages.
const KindNames = "samples, ktd, tsne, calibration, plots, paper or tables"

// ErrSkipped is returned by an analysis that wrote its tables without the
// runs it names above it (resultsdir.BrokenRunError), so that the
// command's exit status says the tables are incomplete.
var ErrSkipped = errors.New("some runs were skipped")

// A Selected is a run of the selection as Analyze offers it to an
// analysis, with its record read.
type Selected struct {
	grid.Run                    // as the grid has it now
	Dir      string             // <out>/runs/<ID>
	Record   *resultsdir.Record // nil: the run has none yet
	Err      error              // reading the record
	dataRoot string
}

// Open opens the finished run (resultsdir.LoadFinished).
func (r *Selected) Open() (*resultsdir.Finished, error) {
	return resultsdir.LoadFinished(r.Dir, r.dataRoot)
}

// Analyze runs the analysis kind over o.Runs, writing its files into the
// results directory o.Out: for each run in order it reads the record,
// skips or computes the run, then writes the tables under the results
// lock. Runs whose files are broken are named on o.Stderr and passed
// over; the error is then ErrSkipped.
func Analyze(ctx context.Context, kind string, o Options) error {
	i := slices.IndexFunc(kinds, func(k registered) bool { return k.name == kind })
	if i < 0 {
		return fmt.Errorf("-analyze %q: want %s", kind, KindNames)
	}
	if o.Samples <= 0 {
		o.Samples = DefaultSamples
	}
	a, err := kinds[i].new(&o)
	if err != nil {
		return err
	}
	var skipped []error
	err = each(ctx, &o, a, &skipped)
	write, err := a.Tables(err)
	if write != nil {
		if werr := resultsdir.WithLock(o.Out, write); werr != nil {
			err = errors.Join(err, werr)
		}
	}
	if err == nil && len(skipped) > 0 {
		return fmt.Errorf("%w: %d with broken files, the tables hold the others; first: %v", ErrSkipped, len(skipped), skipped[0])
	}
	return err
}

// each offers a every selected run, appending to skipped those whose
// files are broken.
func each(ctx context.Context, o *Options, a Analysis, skipped *[]error) error {
	for _, run := range o.Runs {
		if err := ctx.Err(); err != nil {
			return err
		}
		r := &Selected{Run: run, Dir: resultsdir.RunDir(o.Out, run.ID), dataRoot: o.DataRoot}
		r.Record, r.Err = resultsdir.ReadRecord(r.Dir)
		if skip, err := a.Skip(r); err != nil || skip {
			if err != nil {
				return err
			}
			continue
		}
		err := a.Compute(ctx, r)
		var broken *resultsdir.BrokenRunError
		if errors.As(err, &broken) {
			fmt.Fprintf(o.Stderr, "skipped: %v\n", broken)
			*skipped = append(*skipped, broken)
		} else if err != nil {
			return err
		}
	}
	return nil
}

// finishedGeKC says whether r is what the analyses of samples take: a
// finished GeKC (its record decides), noting where the grid asks for
// other parameters to sample from than the run kept.
func (o *Options) finishedGeKC(r *Selected) bool {
	rec := r.Record
	if r.Err != nil || rec == nil || rec.Status != train.Finished {
		return false
	}
	if _, sem, err := models.Lookup(rec.Spec.Model); err != nil || sem == models.Energy {
		return false
	}
	// The ID ignores sample_from: a grid may ask for what the run
	// trained without. The record decides; say so.
	if from := cmp.Or(r.Spec.SampleFrom, "select"); from != cmp.Or(rec.Spec.SampleFrom, "select") {
		fmt.Fprintf(o.Stderr, "%s: trained with sample_from = %q, not the grid's %q: its samples are of the parameters it kept for that\n",
			r.ID, cmp.Or(rec.Spec.SampleFrom, "select"), from)
	}
	return true
}

// writeTables writes an analysis's TSV and markdown tables next to
// results.tsv, atomically, and prints the markdown.
func (o *Options) writeTables(tsvName string, tsv []byte, mdName string, md []byte) error {
	if err := atomicfile.WriteFile(filepath.Join(o.Out, tsvName), tsv, 0o644); err != nil {
		return err
	}
	if err := atomicfile.WriteFile(filepath.Join(o.Out, mdName), md, 0o644); err != nil {
		return err
	}
	_, err := o.Stdout.Write(md)
	return err
}

// recordedRun looks a table row's run up by its ID in the results
// directory out: ok false when it has no metrics.json.
func recordedRun(out string) func(id string) (Run, bool, error) {
	return func(id string) (Run, bool, error) {
		rec, err := resultsdir.ReadRecord(resultsdir.RunDir(out, id))
		if err != nil || rec == nil {
			return Run{}, false, err
		}
		return runOf(id, rec.Spec), true, nil
	}
}

// upsertRow replaces the row of rows that has row's run, or appends it.
// runTable is an analysis's table of rows R, a row a run: its files, how
// it is read and rendered, and the run of a row.
type runTable[R any] struct {
	tsv, md string
	read    func(path string, lookup func(id string) (Run, bool, error)) ([]R, error)
	render  func([]R) (tsv, md []byte, err error)
	run     func(R) string
}

// readIn reads the table of the results directory o.Out.
func (t runTable[R]) readIn(o *Options) ([]R, error) {
	return t.read(filepath.Join(o.Out, t.tsv), recordedRun(o.Out))
}

// rewrite returns the write of fresh into the table as it is then, to
// call under the results lock (Analyze does): another analysis may have
// added rows since this one read it.
func (t runTable[R]) rewrite(o *Options, fresh []R) func() error {
	return func() error {
		rows, err := t.readIn(o)
		if err != nil {
			return err
		}
		for _, row := range fresh {
			rows = upsertRow(rows, row, t.run)
		}
		tsv, md, err := t.render(rows)
		if err != nil {
			return err
		}
		return o.writeTables(t.tsv, tsv, t.md, md)
	}
}

func upsertRow[R any](rows []R, row R, run func(R) string) []R {
	if i := slices.IndexFunc(rows, func(r R) bool { return run(r) == run(row) }); i >= 0 {
		rows[i] = row
		return rows
	}
	return append(rows, row)
}

// runOf describes a run to the tables.
func runOf(id string, s grid.RunSpec) Run {
	return Run{ID: id, Dataset: s.Dataset, Model: s.Model, Objective: s.Objective,
		Constraints: s.Constraints, Rank: s.Rank, Seed: s.Seed}
}

// Flags defines the analyses' own flags on fs (the command's analyze verb
// and its old form -analyze), each setting a field of o: -samples,
// -features, -ktd-table, -nnmfaug and -reference (the table as named, for
// the command to resolve).
func (o *Options) Flags(fs *flag.FlagSet) {
	fs.IntVar(&o.Samples, "samples", -1, "samples, ktd and tsne: the samples per run (default 25000)")
	fs.StringVar(&o.Features, "features", "", "ktd and tsne: ID or directory of the finished ComplEx `run` giving ψ")
	fs.StringVar(&o.KTDTable, "ktd-table", "", "ktd: write the tables as `name`.tsv and .md (default ktd), e.g. beside those of another ψ")
	fs.BoolVar(&o.NNMFAug, "nnmfaug", false, "ktd: also measure the NNMFAug baseline (Chauhan et al. 2021) and say its test log-likelihood; minutes on a benchmark")
	fs.StringVar(&o.Reference, "reference", "", "the reference `table` that paper.md compares with (default <repository>/results/paper-reference.tsv, the paper's; none for a grid with paper = false)")
}

// CheckFlags refuses an analysis of no samples (-samples 0).
func (o *Options) CheckFlags() error {
	if o.Samples == 0 {
		return errors.New("-samples 0 with -analyze: an analysis of samples needs some; give N > 0, or leave -samples out for 25000")
	}
	return nil
}
