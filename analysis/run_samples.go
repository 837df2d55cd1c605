package analysis

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"gekc/kg"
	"gekc/query"
	"gekc/resultsdir"
	"gekc/train/ckpt"
)

// samples draws (or reads) each finished GeKC's samples and audits them
// against the parameters they come from: the rows of sample-audit.tsv
// (AuditTables). A run whose parameters are gone keeps its earlier row.
type samples struct {
	o     *Options
	rows  []AuditRow // the table as read at the start, for Skip
	fresh []AuditRow // the rows audited now
}

var auditTable = runTable[AuditRow]{tsv: AuditTSVName, md: AuditMarkdownName,
	read: ReadAuditTSV, render: AuditTables, run: func(r AuditRow) string { return r.Run.ID }}

func newSamples(o *Options) (Analysis, error) {
	rows, err := auditTable.readIn(o)
	return &samples{o: o, rows: rows}, err
}

func (a *samples) Skip(r *Selected) (bool, error) {
	if !a.o.finishedGeKC(r) {
		return true, nil
	}
	kept := ""
	if slices.ContainsFunc(a.rows, func(row AuditRow) bool { return row.Run.ID == r.ID }) {
		kept = "; its row is kept from " + AuditTSVName
	}
	if _, err := os.Stat(filepath.Join(r.Dir, ckpt.CheckpointName)); errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(a.o.Stderr, "%s: no %s: its samples are neither drawn nor audited%s\n", r.ID, ckpt.CheckpointName, kept)
		return true, nil
	}
	if !resultsdir.LLCheckpointMissing(r.Dir, r.Record) {
		return false, nil
	}
	stored := slices.ContainsFunc(resultsdir.SampleFiles(r.Dir), func(path string) bool {
		_, err := os.Stat(path)
		return err == nil
	})
	if stored {
		fmt.Fprintf(a.o.Stderr, "%s: no %s, the parameters its samples come from: not audited%s\n", r.ID, ckpt.CheckpointLLName, kept)
	} else {
		fmt.Fprintf(a.o.Stderr, "%s: no samples: sample_from = \"ll\", and the run kept no %s (its notes say why)%s\n", r.ID, ckpt.CheckpointLLName, kept)
	}
	return true, nil
}

func (a *samples) Compute(_ context.Context, r *Selected) error {
	fr, err := r.Open()
	if err != nil {
		return err
	}
	ts, err := runSamples(fr, a.o.Samples, a.o.Stderr)
	if err != nil {
		return fmt.Errorf("%s: %w", r.ID, err)
	}
	if len(ts) < 2 {
		fmt.Fprintf(a.o.Stderr, "%s: fewer than two samples (%d): not audited (the entropy's standard error needs two)\n", fr.ID, len(ts))
		return nil
	}
	row, err := auditRun(fr, ts)
	if err != nil {
		return fmt.Errorf("%s: %w", r.ID, err)
	}
	au := row.Audit
	fmt.Fprintf(a.o.Stderr, "%s: entropy %.3f nats; train mass %.4f, share %.4f (z %+.1f); relations: TV %.3f to the training frequencies, test LL of R %.3f (theirs %.3f)\n",
		fr.ID, au.Entropy, au.Splits[0].Mass, au.Splits[0].Share(au.Samples), au.Splits[0].Z(au.Samples),
		au.Relations.TV, au.Relations.TestLL, au.Relations.TestLLTrain)
	a.fresh = append(a.fresh, row)
	return nil
}

// Tables writes the audit when any run was audited, also after a failure:
// runs audited before it keep their rows.
func (a *samples) Tables(err error) (func() error, error) {
	if len(a.fresh) == 0 {
		return nil, err
	}
	return auditTable.rewrite(a.o, a.fresh), err
}

// runSamples returns n samples of a run, stored ones when there are
// enough (resultsdir.StoredSamples), else drawn and written to
// samples.tsv: from the parameters its spec's sample_from names, which a
// run trained with sample_from = "ll" kept in checkpoint-ll.npz (loaded
// into fr.Model).
func runSamples(fr *resultsdir.Finished, n int, log io.Writer) ([]kg.Triple, error) {
	if ts := resultsdir.StoredSamples(fr.Dir, fr.Data, n); ts != nil {
		return ts, nil
	}
	if err := fr.LoadSampledParameters(); err != nil {
		return nil, err
	}
	dom, err := fr.Constraint()
	if err != nil {
		return nil, err
	}
	ts, dt, err := resultsdir.Sample(fr.Model, dom, n, uint64(fr.Spec.Seed))
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(log, "%s: sampled %d triples in %.2fs\n", fr.ID, n, dt.Seconds())
	return ts, resultsdir.WriteSamples(filepath.Join(fr.Dir, resultsdir.SamplesName), fr.Data, ts)
}

// auditRun audits a run's samples under the parameters and constraint
// they were drawn from.
func auditRun(fr *resultsdir.Finished, ts []kg.Triple) (AuditRow, error) {
	if err := fr.LoadSampledParameters(); err != nil {
		return AuditRow{}, err
	}
	dom, err := fr.Constraint()
	if err != nil {
		return AuditRow{}, err
	}
	q, err := query.New(fr.Model, dom, fr.Spec.Eval.BatchSize)
	if err != nil {
		return AuditRow{}, err
	}
	au, err := AuditSamples(q, fr.Data, ts)
	if err != nil {
		return AuditRow{}, err
	}
	return AuditRow{Run: runOf(fr.ID, fr.Spec), SampledAt: fr.Record.SampledAt(), Audit: au}, nil
}
