package analysis

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"gekc/internal/atomicfile"
	"gekc/report"
	"gekc/resultsdir"
)

// tables writes results.tsv, results.md and, when the reference covers
// them, paper.md again from the records of every run in o.Out/runs, in the
// order the runs ended, whatever the selection. The records are the
// results directory's truth: a sweep started afresh elsewhere (on a
// machine that lost the others' outputs) knows only its own runs, and
// copying its tables over a committed directory would drop every other row
// (scripts/publish-results copies records, then runs this). The KTD tables
// get what their rows lack and the records say (fillKTD).
type tables struct{ o *Options }

func newTables(o *Options) (Analysis, error) { return &tables{o: o}, nil }

func (a *tables) Skip(*Selected) (bool, error)             { return true, nil }
func (a *tables) Compute(context.Context, *Selected) error { return nil }

func (a *tables) Tables(err error) (func() error, error) {
	if err != nil {
		return nil, err
	}
	recs, err := resultsdir.Records(a.o.Out)
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("%s: no run record (runs/*/%s)", a.o.Out, resultsdir.MetricsName)
	}
	table := &report.Table{}
	for _, rec := range recs {
		table.Upsert(resultsdir.Row(rec))
	}
	var ref *report.Reference
	if a.o.Reference != "" {
		if ref, err = report.ReadReference(a.o.Reference); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	return func() error {
		out := a.o.Out
		if err := atomicfile.WriteFile(filepath.Join(out, resultsdir.ResultsTSVName), table.TSV(), 0o644); err != nil {
			return err
		}
		if err := resultsdir.WriteReport(out, cmp.Or(a.o.Title, filepath.Base(out)), ref, table); err != nil {
			return err
		}
		fmt.Fprintf(a.o.Stderr, "wrote %s and %s from %d run records\n", filepath.Join(out, resultsdir.ResultsTSVName), resultsdir.ResultsMDName, len(recs))
		return a.fillKTD(recs)
	}, nil
}

// paper writes paper.md: the sweep's best configurations beside the
// reference table's rows for the same datasets. Every finished run of
// results.tsv counts, whatever the selection: the comparison is of the
// sweep's results, not of some runs. Only results.tsv is read, under the
// results lock, as a sweep writes it: a sweep running beside this must not
// interleave an older table.
type paper struct {
	o   *Options
	ref *report.Reference
}

func newPaper(o *Options) (Analysis, error) {
	if o.Reference == "" {
		return nil, errors.New("-analyze paper needs a reference table (-reference FILE)")
	}
	ref, err := report.ReadReference(o.Reference)
	return &paper{o: o, ref: ref}, err
}

func (a *paper) Skip(*Selected) (bool, error)             { return true, nil }
func (a *paper) Compute(context.Context, *Selected) error { return nil }

func (a *paper) Tables(err error) (func() error, error) {
	if err != nil {
		return nil, err
	}
	return a.write, nil
}

func (a *paper) write() error {
	tsv := filepath.Join(a.o.Out, resultsdir.ResultsTSVName)
	table, err := report.ReadTSV(tsv)
	if err != nil {
		return err
	}
	if len(table.Rows) == 0 {
		return fmt.Errorf("%s: no run has ended yet: nothing to compare", tsv)
	}
	md, err := report.CompareMarkdown(table, a.ref, report.DefaultTolerance)
	if err != nil {
		return err
	}
	path := filepath.Join(a.o.Out, resultsdir.PaperMDName)
	if err := atomicfile.WriteFile(path, md, 0o644); err != nil {
		return err
	}
	if _, err := a.o.Stdout.Write(md); err != nil {
		return err
	}
	fmt.Fprintf(a.o.Stderr, "wrote %s\n", path)
	return nil
}

// plots draws runs/<id>/curves.png again from metrics.json, for every
// selected run with a final record (finished or diverged); no checkpoint
// or dataset is read.
type plots struct {
	o *Options
	n int
}

func newPlots(o *Options) (Analysis, error) { return &plots{o: o}, nil }

func (a *plots) Skip(r *Selected) (bool, error) {
	if r.Err != nil {
		return false, fmt.Errorf("%s: %w", r.ID, r.Err)
	}
	return r.Record == nil || !resultsdir.Final(r.Record.Status), nil
}

func (a *plots) Compute(_ context.Context, r *Selected) error {
	rec := r.Record
	if err := resultsdir.WriteCurves(r.Dir, rec.Spec, rec.Epochs, rec.BestEpoch); err != nil {
		return fmt.Errorf("%s: %w", r.ID, err)
	}
	a.n++
	return nil
}

func (a *plots) Tables(err error) (func() error, error) {
	if err == nil {
		fmt.Fprintf(a.o.Stderr, "wrote %s of %d runs\n", resultsdir.CurvesName, a.n)
	}
	return nil, err
}

// fillKTD gives the rows of the KTD tables in o.Out (ktd*.tsv) what they
// lack and the run records say (see fillKTDRow; uniform's test LL from the
// data set's sizes, see uniformLLs), and writes those tables again; every
// ktd*.md is written again from its ktd*.tsv where it differs (a new
// reference, say). Tables that record no setting are left as they are.
func (a *tables) fillKTD(recs []*resultsdir.Record) error {
	ktdRef, err := a.o.readKTDReference()
	if err != nil {
		return err
	}
	byID := map[string]*resultsdir.Record{}
	for _, rec := range recs {
		byID[rec.ID] = rec
	}
	uniform := a.o.uniformLLs(recs)
	paths, err := filepath.Glob(filepath.Join(a.o.Out, "ktd*.tsv"))
	if err != nil {
		return err
	}
	for _, path := range paths {
		if err := a.fillKTDTable(path, byID, uniform, ktdRef); err != nil {
			return err
		}
	}
	return nil
}

// fillKTDTable fills the KTD table at path (see fillKTD).
func (a *tables) fillKTDTable(path string, byID map[string]*resultsdir.Record, uniform func(string) (float64, bool), ktdRef *KTDReference) error {
	rows, set, err := ReadKTDTSV(path)
	if err != nil || set == (KTDSetting{}) {
		return err
	}
	filled := 0
	for i, r := range rows {
		if r.Model == "uniform" && !r.HasLL {
			if rows[i].LL, rows[i].HasLL = uniform(r.Dataset); rows[i].HasLL {
				filled++
			}
		}
		if rec := byID[r.Run]; r.Run != "" && rec != nil && fillKTDRow(&rows[i], rec) {
			filled++
		}
	}
	tsv, md, err := KTDTables(rows, set, ktdRef)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	log := a.o.Stderr
	if filled > 0 {
		if err := atomicfile.WriteFile(path, tsv, 0o644); err != nil {
			return err
		}
		fmt.Fprintf(log, "%s: rows filled in from the run records (which parameters were sampled, or their test log-likelihood): %d\n", path, filled)
	}
	for _, r := range rows {
		switch {
		case r.HasLL:
		case r.Model == "uniform":
			fmt.Fprintf(log, "%s: %s uniform has no test log-likelihood: no record gives the data set's sizes, and -data has no %s\n", path, r.Dataset, r.Dataset)
		case r.Model == NNMFAugName:
			fmt.Fprintf(log, "%s: %s NNMFAug has no test log-likelihood: measured before it was kept; -analyze ktd -nnmfaug measures it again\n", path, r.Dataset)
		}
	}
	// ktd.md is written again when it changed, as with a new reference.
	mdPath := strings.TrimSuffix(path, ".tsv") + ".md"
	if old, err := os.ReadFile(mdPath); err == nil && bytes.Equal(old, md) {
		return nil
	}
	if err := atomicfile.WriteFile(mdPath, md, 0o644); err != nil {
		return err
	}
	if filled == 0 {
		fmt.Fprintf(log, "%s: written again from %s\n", mdPath, filepath.Base(path))
	}
	return nil
}

// fillKTDRow gives the KTD row r of rec's run what it lacks and rec says:
// which parameters were sampled, and their test log-likelihood, the latter
// only where the row names the parameters rec's run samples (a run
// trained again under the same ID may have sampled others). It says
// whether r changed.
func fillKTDRow(r *KTDRow, rec *resultsdir.Record) bool {
	at := rec.SampledAt()
	before := *r
	if r.Sampled == "" {
		r.Sampled = at
	}
	if !r.HasLL && r.Sampled == at {
		r.LL, r.HasLL = rec.SampledLL()
	}
	return *r != before
}

// uniformLLs returns uniform's test log-likelihood, −log(|E|²|R|), by data
// set: from the sizes a run record gives, else from the data set under
// DataRoot (read once); false when neither is at hand.
func (o *Options) uniformLLs(recs []*resultsdir.Record) func(dataset string) (float64, bool) {
	known := map[string]float64{}
	for _, rec := range recs {
		if d := rec.Data; d != nil && d.Entities > 0 && d.Relations > 0 {
			known[rec.Spec.Dataset] = UniformLL(d.Entities, d.Relations)
		}
	}
	tried := map[string]bool{}
	return func(dataset string) (float64, bool) {
		if ll, ok := known[dataset]; ok || tried[dataset] || o.DataRoot == "" {
			return ll, ok
		}
		tried[dataset] = true
		ds, err := resultsdir.LoadDataset(filepath.Join(o.DataRoot, dataset))
		if err != nil {
			return 0, false
		}
		known[dataset] = UniformLL(ds.Entities.Len(), ds.Relations.Len())
		return known[dataset], true
	}
}
