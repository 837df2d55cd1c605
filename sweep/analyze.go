package sweep

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"gekc/analysis"
	"gekc/grid"
	"gekc/internal/atomicfile"
	"gekc/kg"
	"gekc/metrics"
	"gekc/models"
	"gekc/query"
	"gekc/report"
	"gekc/train"
	"gekc/train/ckpt"
)

// Post-hoc analyses of finished runs, from their checkpoints: no run is
// trained again.
//
//	-analyze samples          write runs/<id>/samples.tsv (-samples N, default 25000)
//	                          and audit them against the model's exact
//	                          probabilities (mass and share of each split,
//	                          entropy); writes sample-audit.tsv and
//	                          sample-audit.md next to results.tsv
//	-analyze ktd -features R  kernel triple distance of each run's samples to the
//	                          test triples, with ψ from the ComplEx run R, beside
//	                          the test LL of the distribution sampled and the
//	                          paper's KTD (results/paper-ktd-reference.tsv); writes
//	                          ktd.tsv and ktd.md next to results.tsv
//	-analyze tsne -features R the paper's t-SNE figure of each run: the product
//	                          units of R's model for 1000 test and 1000 sampled
//	                          triples in the plane; writes runs/<id>/tsne.png
//	-analyze calibration      ECE of every finished run (energy-based ones too) on
//	                          the test triples and hard negatives, under both
//	                          mappings; writes runs/<id>/calibration.png, and
//	                          calibration.tsv and calibration.md next to results.tsv
//	-analyze plots            draw runs/<id>/curves.png again from metrics.json,
//	                          for every finished or diverged run; no checkpoint
//	                          or dataset is read
//	-analyze paper            set the best configurations of results.tsv beside a
//	                          published table (-reference, default the paper's,
//	                          results/paper-reference.tsv, but none for a grid
//	                          with paper = false); writes paper.md; only
//	                          results.tsv is read

// The analyses themselves are package analysis; this file finds the runs
// and their checkpoints in -out and passes them in.

const (
	samplesName     = analysis.SamplesName
	calTSVName      = analysis.CalibrationTSVName
	calMarkdownName = analysis.CalibrationMarkdownName
	auditTSVName    = analysis.AuditTSVName
	auditMDName     = analysis.AuditMarkdownName
	// PaperMDName is what -analyze paper writes next to results.md.
	PaperMDName = "paper.md"
)

// Finished is a finished run loaded back from its directory.
type Finished struct {
	ID     string
	Dir    string // the run's directory, <out>/runs/<ID>
	Spec   grid.RunSpec
	Record *Record // its metrics.json
	Data   *kg.Dataset
	Model  *models.Model // with the parameters of its checkpoint
}

// LoadFinished loads a finished run's spec, dataset and best parameters
// from its directory dir; the data set is read from dataRoot.
func LoadFinished(dir, dataRoot string) (*Finished, error) {
	rec, err := readRecord(filepath.Join(dir, metricsName))
	if err != nil {
		return nil, err
	}
	if rec == nil || rec.Status != train.Finished {
		return nil, fmt.Errorf("%s: not a finished run", dir)
	}
	spec := rec.Spec
	ds, err := loadDataset(filepath.Join(dataRoot, spec.Dataset))
	if err != nil {
		return nil, err
	}
	cfg, err := TrainConfig(spec)
	if err != nil {
		return nil, err
	}
	m, err := train.NewModel(cfg, ds.Entities.Len(), ds.Relations.Len())
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, ckpt.CheckpointName)
	if err := ckpt.Load(path, m); err != nil {
		return nil, &BrokenRunError{ID: rec.ID, Path: path, Err: err}
	}
	return &Finished{ID: rec.ID, Dir: dir, Spec: spec, Record: rec, Data: ds, Model: m}, nil
}

// BrokenRunError is a finished run whose checkpoint is missing or cannot
// be read: analyses pass it over (ErrSkipped), the others say how to mend it.
type BrokenRunError struct {
	ID, Path string
	Err      error
}

func (e *BrokenRunError) Error() string {
	return fmt.Sprintf("run %s: %s: %v; restore the file, or train the run again (remove its metrics.json and run the sweep)", e.ID, e.Path, e.Err)
}

func (e *BrokenRunError) Unwrap() error { return e.Err }

// ErrSkipped is returned by an analysis that wrote its tables without the
// runs it names above it (BrokenRunError), so that the command's exit
// status says the tables are incomplete.
var ErrSkipped = errors.New("some runs were skipped")

// skip reports a broken run passed over, or returns any other error.
func (a *Analysis) skip(err error) error {
	var broken *BrokenRunError
	if !errors.As(err, &broken) {
		return err
	}
	fmt.Fprintf(a.Stderr, "skipped: %v\n", err)
	a.skipped = append(a.skipped, err)
	return nil
}

// done returns ErrSkipped, with the count and the first, when runs were
// passed over.
func (a *Analysis) done(err error) error {
	if err == nil && len(a.skipped) > 0 {
		return fmt.Errorf("%w: %d with broken files, the tables hold the others; first: %v", ErrSkipped, len(a.skipped), a.skipped[0])
	}
	return err
}

// LoadSampledParameters loads into fr.Model the parameters the run's
// samples come from: those of its best validation log-likelihood
// (checkpoint-ll.npz) for a run trained with sample_from = "ll", else the
// selected ones it already holds.
func (fr *Finished) LoadSampledParameters() error {
	if !samplesFromLL(fr.Spec) {
		return nil
	}
	if err := ckpt.Load(filepath.Join(fr.Dir, ckpt.CheckpointLLName), fr.Model); err != nil {
		return fmt.Errorf("%s: sample_from = \"ll\" needs the parameters of the best validation log-likelihood: %w", fr.ID, err)
	}
	return nil
}

// ResolveRun finds a run named by a directory path or by an ID (or unique
// ID prefix) under out/runs.
func ResolveRun(out, ref string) (string, error) {
	if st, err := os.Stat(ref); err == nil && st.IsDir() {
		return ref, nil
	}
	runs := filepath.Join(out, runsDirName)
	if st, err := os.Stat(filepath.Join(runs, ref)); err == nil && st.IsDir() {
		return filepath.Join(runs, ref), nil
	}
	entries, err := os.ReadDir(runs)
	if err != nil {
		return "", fmt.Errorf("run %q: %w", ref, err)
	}
	var match []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ref) {
			match = append(match, e.Name())
		}
	}
	if len(match) != 1 {
		return "", fmt.Errorf("run %q: %d runs in %s match", ref, len(match), runs)
	}
	return filepath.Join(runs, match[0]), nil
}

// storedSamples returns n samples of the run in dir as stored by an
// earlier analysis, in samples.tsv or as published (samples.tsv.gz), or nil
// when neither holds that many. They are the ones sampling would draw
// again: the seed is the run's.
func storedSamples(dir string, ds *kg.Dataset, n int) []kg.Triple {
	for _, path := range sampleFiles(dir) {
		if ts, err := analysis.ReadSamples(path, ds); err == nil && len(ts) >= n {
			return ts[:n]
		}
	}
	return nil
}

// sampleFiles are where a run's samples may be stored: samples.tsv as an
// analysis writes it, samples.tsv.gz as published.
func sampleFiles(dir string) []string {
	return []string{filepath.Join(dir, samplesName), filepath.Join(dir, samplesName+".gz")}
}

// runSamples returns n samples of a run, stored ones when there are
// enough (storedSamples), else drawn and written to samples.tsv: from the
// parameters its spec's sample_from names, which a run trained with
// sample_from = "ll" kept in checkpoint-ll.npz (loaded into fr.Model).
func runSamples(fr *Finished, n int, log io.Writer) ([]kg.Triple, error) {
	if ts := storedSamples(fr.Dir, fr.Data, n); ts != nil {
		return ts, nil
	}
	if err := fr.LoadSampledParameters(); err != nil {
		return nil, err
	}
	path := filepath.Join(fr.Dir, samplesName)
	dom, err := Constraint(fr.Spec, fr.Data)
	if err != nil {
		return nil, err
	}
	ts, dt, err := analysis.Sample(fr.Model, dom, n, uint64(fr.Spec.Seed))
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(log, "%s: sampled %d triples in %.2fs\n", fr.ID, n, dt.Seconds())
	return ts, analysis.WriteSamples(path, fr.Data, ts)
}

// sampledAt says which parameters a run's samples come from, for the KTD
// table: "best valid MRR, epoch 17", "best valid LL, epoch 5" (epochs
// unknown to records from before they were kept are left out).
func sampledAt(rec *Record) string {
	metric, epoch := cmp.Or(rec.Spec.Eval.Select, "mrr"), &rec.BestEpoch // "": a record from before the key
	if samplesFromLL(rec.Spec) {
		metric, epoch = "ll", rec.LLEpoch
	}
	s := "best valid " + strings.ToUpper(metric)
	if epoch != nil {
		s += fmt.Sprintf(", epoch %d", *epoch)
	}
	return s
}

// sampledLL is the test log-likelihood of the parameters a run's samples
// come from (as sampledAt names them), for the KTD table; false when the
// record has none (an energy-based run, or a record from before the LL at
// the best validation LL was kept).
func sampledLL(rec *Record) (float64, bool) {
	key := "ll"
	if samplesFromLL(rec.Spec) {
		key = "ll_at_best_ll"
	}
	ll, ok := rec.Test[key]
	if !ok || !(ll <= 0) { // NaN, or +Inf of an underflowing Z: none
		return 0, false
	}
	return float64(ll), true
}

// llCheckpointMissing says whether a run whose samples come from the
// parameters of its best validation log-likelihood (sample_from = "ll")
// lacks checkpoint-ll.npz: a run resumed from a state that did not keep
// them has none, and its record's notes say so.
func llCheckpointMissing(dir string, rec *Record) bool {
	if rec == nil || !samplesFromLL(rec.Spec) {
		return false
	}
	_, err := os.Stat(filepath.Join(dir, ckpt.CheckpointLLName))
	return errors.Is(err, fs.ErrNotExist)
}

// Analysis is a post-hoc analysis of the finished runs of a results
// directory (see the list above).
type Analysis struct {
	Kind     string // "samples", "ktd", "tsne", "calibration", "plots", "paper" or "tables"
	Title    string // for tables: the grid's name, results.md's title
	Features string // for ktd and tsne: the ID or directory of the finished ComplEx run giving ψ
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
	// their rows (analysis.ReadKTDReference); "" or a missing file: none.
	KTDReference string
	Samples      int    // samples per run; <= 0 means analysis.DefaultSamples
	Out          string // the results directory
	DataRoot     string
	Runs         []grid.Run // the runs to analyse; those not finished are passed over
	Stdout       io.Writer  // the markdown table of samples (their audit), ktd and calibration
	Stderr       io.Writer  // a line per run

	skipped []error // runs passed over, their files broken
}

// Run runs the analysis, writing its files into the results directory.
func (a *Analysis) Run(ctx context.Context) error {
	if a.Samples <= 0 {
		a.Samples = analysis.DefaultSamples
	}
	a.skipped = nil
	switch a.Kind {
	case "samples":
		return a.done(a.samples(ctx))
	case "ktd":
		return a.done(a.ktd(ctx))
	case "tsne":
		return a.done(a.tsne(ctx))
	case "calibration":
		return a.done(a.calibration(ctx))
	case "plots":
		return a.plots(ctx)
	case "paper":
		return a.paper()
	case "tables":
		return a.tables()
	}
	return fmt.Errorf("-analyze %q: want %s", a.Kind, analyzeKinds)
}

// analyzeKinds lists the -analyze modes, for messages.
const analyzeKinds = "samples, ktd, tsne, calibration, plots, paper or tables"

// tables writes results.tsv, results.md and, when the reference covers
// them, paper.md again from the records of every run in Out/runs, in the
// order the runs ended. The records are the results directory's truth: a
// sweep started afresh elsewhere (on a machine that lost the others'
// outputs) knows only its own runs, and copying its tables over a
// committed directory would drop every other row (scripts/publish-results
// copies records, then runs this).
func (a *Analysis) tables() error {
	dirs, err := filepath.Glob(filepath.Join(a.Out, runsDirName, "*", metricsName))
	if err != nil {
		return err
	}
	var recs []*Record
	for _, path := range dirs {
		rec, err := readRecord(path)
		if err != nil {
			return err
		}
		if rec != nil {
			recs = append(recs, rec)
		}
	}
	if len(recs) == 0 {
		return fmt.Errorf("%s: no run record (runs/*/%s)", a.Out, metricsName)
	}
	slices.SortStableFunc(recs, func(x, y *Record) int { return x.FinishedAt.Compare(y.FinishedAt) })
	table := &report.Table{}
	for _, rec := range recs {
		table.Upsert(rowFromRecord(rec))
	}
	var ref *report.Reference
	if a.Reference != "" {
		if ref, err = report.ReadReference(a.Reference); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return withResultsLock(a.Out, func() error {
		if err := atomicfile.WriteFile(filepath.Join(a.Out, resultsTSVName), table.TSV(), 0o644); err != nil {
			return err
		}
		if err := writeReport(a.Out, cmp.Or(a.Title, filepath.Base(a.Out)), ref, table); err != nil {
			return err
		}
		fmt.Fprintf(a.Stderr, "wrote %s and %s from %d run records\n", filepath.Join(a.Out, resultsTSVName), ResultsMDName, len(recs))
		return a.fillKTDFromRecords(recs)
	})
}

// fillKTDFromRecords gives the rows of the KTD tables in Out (ktd*.tsv)
// what they lack and the run records say (see fillKTDRow; uniform's test
// LL from the data set's sizes, see uniformLLs), and writes those tables
// again; every ktd*.md is written again from its ktd*.tsv where it
// differs (a new reference, say). Tables that record no setting are left
// as they are.
func (a *Analysis) fillKTDFromRecords(recs []*Record) error {
	ktdRef, err := a.readKTDReference()
	if err != nil {
		return err
	}
	byID := map[string]*Record{}
	for _, rec := range recs {
		byID[rec.ID] = rec
	}
	uniform := a.uniformLLs(recs)
	paths, err := filepath.Glob(filepath.Join(a.Out, "ktd*.tsv"))
	if err != nil {
		return err
	}
	for _, path := range paths {
		rows, set, err := analysis.ReadKTDTSV(path)
		if err != nil {
			return err
		}
		if set == (analysis.KTDSetting{}) {
			continue
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
		tsv, md, err := analysis.KTDTables(rows, set, ktdRef)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if filled > 0 {
			if err := atomicfile.WriteFile(path, tsv, 0o644); err != nil {
				return err
			}
			fmt.Fprintf(a.Stderr, "%s: rows filled in from the run records (which parameters were sampled, or their test log-likelihood): %d\n", path, filled)
		}
		for _, r := range rows {
			switch {
			case r.HasLL:
			case r.Model == "uniform":
				fmt.Fprintf(a.Stderr, "%s: %s uniform has no test log-likelihood: no record gives the data set's sizes, and -data has no %s\n", path, r.Dataset, r.Dataset)
			case r.Model == analysis.NNMFAugName:
				fmt.Fprintf(a.Stderr, "%s: %s NNMFAug has no test log-likelihood: measured before it was kept; -analyze ktd -nnmfaug measures it again\n", path, r.Dataset)
			}
		}
		// ktd.md is written again when it changed, as with a new reference.
		mdPath := strings.TrimSuffix(path, ".tsv") + ".md"
		if old, err := os.ReadFile(mdPath); err != nil || !bytes.Equal(old, md) {
			if err := atomicfile.WriteFile(mdPath, md, 0o644); err != nil {
				return err
			}
			if filled == 0 {
				fmt.Fprintf(a.Stderr, "%s: written again from %s\n", mdPath, filepath.Base(path))
			}
		}
	}
	return nil
}

// fillKTDRow gives the KTD row r of rec's run what it lacks and rec says:
// which parameters were sampled, and their test log-likelihood, the latter
// only where the row names the parameters rec's run samples (a run
// trained again under the same ID may have sampled others). It says
// whether r changed.
func fillKTDRow(r *analysis.KTDRow, rec *Record) bool {
	at := sampledAt(rec)
	before := *r
	if r.Sampled == "" {
		r.Sampled = at
	}
	if !r.HasLL && r.Sampled == at {
		r.LL, r.HasLL = sampledLL(rec)
	}
	return *r != before
}

// uniformLLs returns uniform's test log-likelihood, −log(|E|²|R|), by data
// set: from the sizes a run record gives, else from the data set under
// DataRoot (read once); false when neither is at hand.
func (a *Analysis) uniformLLs(recs []*Record) func(dataset string) (float64, bool) {
	known := map[string]float64{}
	for _, rec := range recs {
		if d := rec.Data; d != nil && d.Entities > 0 && d.Relations > 0 {
			known[rec.Spec.Dataset] = analysis.UniformLL(d.Entities, d.Relations)
		}
	}
	tried := map[string]bool{}
	return func(dataset string) (float64, bool) {
		if ll, ok := known[dataset]; ok || tried[dataset] || a.DataRoot == "" {
			return ll, ok
		}
		tried[dataset] = true
		ds, err := loadDataset(filepath.Join(a.DataRoot, dataset))
		if err != nil {
			return 0, false
		}
		known[dataset] = analysis.UniformLL(ds.Entities.Len(), ds.Relations.Len())
		return known[dataset], true
	}
}

// each calls f on every selected finished GeKC run, but those for which
// skip (if not nil) holds; skip gets the run's record, read once here.
func (a *Analysis) each(ctx context.Context, skip func(id, dir string, rec *Record) bool, f func(*Finished) error) error {
	for _, r := range a.Runs {
		if err := ctx.Err(); err != nil {
			return err
		}
		dir := filepath.Join(a.Out, runsDirName, r.ID)
		rec, err := readRecord(filepath.Join(dir, metricsName))
		if err != nil || rec == nil || rec.Status != train.Finished {
			continue
		}
		if _, sem, err := models.Lookup(rec.Spec.Model); err != nil || sem == models.Energy {
			continue
		}
		// The ID ignores sample_from: a grid may ask for what the run
		// trained without. The record decides; say so.
		if from := cmp.Or(r.Spec.SampleFrom, "select"); from != cmp.Or(rec.Spec.SampleFrom, "select") {
			fmt.Fprintf(a.Stderr, "%s: trained with sample_from = %q, not the grid's %q: its samples are of the parameters it kept for that\n",
				r.ID, cmp.Or(rec.Spec.SampleFrom, "select"), from)
		}
		if skip != nil && skip(r.ID, dir, rec) {
			continue
		}
		fr, err := LoadFinished(dir, a.DataRoot)
		if err != nil {
			if err := a.skip(err); err != nil {
				return err
			}
			continue
		}
		if err := f(fr); err != nil {
			return fmt.Errorf("%s: %w", r.ID, err)
		}
	}
	return nil
}

// features loads the run -features names and its product units, ψ.
func (a *Analysis) features() (*Finished, metrics.TripleFeatures, error) {
	if a.Features == "" {
		return nil, nil, fmt.Errorf("-analyze %s needs -features: the ID or directory of a finished ComplEx run whose product units give ψ", a.Kind)
	}
	dir, err := ResolveRun(a.Out, a.Features)
	if err != nil {
		return nil, nil, err
	}
	ref, err := LoadFinished(dir, a.DataRoot)
	if err != nil {
		return nil, nil, err
	}
	psi, err := metrics.ProductUnitFeatures(ref.Model)
	return ref, psi, err
}

func (a *Analysis) ktd(ctx context.Context) error {
	ref, psi, err := a.features()
	if err != nil {
		return err
	}
	ds := ref.Data
	size := analysis.KTDSize(len(ds.Test), a.Samples)
	digest, err := paramsDigest(ref.Model)
	if err != nil {
		return fmt.Errorf("ψ %s: %w", ref.ID, err)
	}
	set := analysis.KTDSetting{Features: ref.ID, Digest: digest, DrawSize: size, Samples: a.Samples}
	// The table is updated, not replaced: runs analysed before keep their
	// rows when those were computed with the same ψ (run ID and digest of
	// its parameters) and sizes, also where their checkpoints are gone (as
	// on a fresh clone or a new machine).
	tsvName, mdName := analysis.KTDTSVName, analysis.KTDMarkdownName
	if a.KTDTable != "" {
		if a.KTDTable != filepath.Base(a.KTDTable) || strings.HasSuffix(a.KTDTable, ".tsv") || strings.HasSuffix(a.KTDTable, ".md") {
			return fmt.Errorf("-ktd-table %q: want a file name without directory or extension, e.g. ktd-d1000", a.KTDTable)
		}
		tsvName, mdName = a.KTDTable+".tsv", a.KTDTable+".md"
	}
	tsvPath := filepath.Join(a.Out, tsvName)
	old, oldSet, err := analysis.ReadKTDTSV(tsvPath)
	if err != nil {
		return err
	}
	ktdRef, err := a.readKTDReference()
	if err != nil {
		return err
	}
	finished := func(id string) bool {
		rec, err := readRecord(filepath.Join(a.Out, runsDirName, id, metricsName))
		return err == nil && rec != nil && rec.Status == train.Finished
	}
	// The baselines first (seconds): they tell whether a table from before
	// ψ's digest was recorded is of this ψ.
	rows, err := analysis.KTDBaselines(psi, ref.Spec.Dataset, ds, size, a.Samples, rand.New(rand.NewPCG(1, 0x7d)))
	if err != nil {
		return err
	}
	// Refused before any sampling when the selection alone shows that the
	// analysis would drop rows; the merge under the lock below decides.
	planned := slices.Clone(rows)
	for _, r := range a.Runs {
		planned = append(planned, analysis.KTDRow{Run: r.ID})
	}
	pre := analysis.MergeKTDRows(planned, set, old, oldSet, finished)
	if len(pre.Other) > 0 {
		return refuseKTDDrop(tsvPath, pre.Other, oldSet, set)
	}
	hasOldRow := func(id string) bool {
		return (oldSet == set || pre.Adopted) && slices.ContainsFunc(old, func(r analysis.KTDRow) bool { return r.Run == id })
	}
	if a.NNMFAug {
		start := time.Now()
		rep, err := analysis.NNMFAugBaseline(psi, ref.Spec.Dataset, ds, size, a.Samples, rand.New(rand.NewPCG(2, 0x7d)))
		if err != nil {
			return err
		}
		rows = append(rows, rep.Row)
		fmt.Fprintf(a.Stderr, "NNMFAug (%d NMF iterations, relative error %.3f; %d clusters; %s): KTD %.4f ± %.4f; test LL %.3f as the paper's code computes it, "+
			"but %d of the %d test triples lie across clusters, where the sampler's probability is zero\n",
			rep.Model.NMFIterations, rep.Model.NMFError, rep.Model.Clusters(), time.Since(start).Round(time.Second),
			rep.Row.Stat.Mean, rep.Row.Stat.Std, rep.PaperLL, rep.Row.Across, rep.Row.Tests)
	}
	row := func(rec *Record, ts []kg.Triple) error {
		id, spec := rec.ID, rec.Spec
		st, err := analysis.RunKTD(psi, id, ts, ds.Test, size)
		ll, hasLL := sampledLL(rec)
		rows = append(rows, analysis.KTDRow{Dataset: spec.Dataset, Model: spec.Model, Objective: spec.Objective, Run: id, Sampled: sampledAt(rec), Stat: st, LL: ll, HasLL: hasLL})
		fmt.Fprintf(a.Stderr, "%s: KTD %.4f ± %.4f\n", id, st.Mean, st.Std)
		return err
	}
	// A run whose checkpoint is gone is measured on its stored samples
	// (published ones included), else keeps its row.
	var rowErr error
	noCheckpoint := func(id, dir string, rec *Record) bool {
		_, statErr := os.Stat(filepath.Join(dir, ckpt.CheckpointName))
		if !errors.Is(statErr, fs.ErrNotExist) && !llCheckpointMissing(dir, rec) {
			return false
		}
		if rec.Spec.Dataset != ref.Spec.Dataset {
			return true // another data set's run: not in this table
		}
		if ts := storedSamples(dir, ds, a.Samples); ts != nil {
			fmt.Fprintf(a.Stderr, "%s: no checkpoint; measured on its stored samples\n", id)
			if err := row(rec, ts); err != nil && rowErr == nil {
				rowErr = fmt.Errorf("%s: %w", id, err)
			}
			return true
		}
		if hasOldRow(id) {
			fmt.Fprintf(a.Stderr, "%s: no checkpoint; its row is kept from %s\n", id, tsvName)
			return true
		}
		if llCheckpointMissing(dir, rec) {
			fmt.Fprintf(a.Stderr, "%s: no row: sample_from = \"ll\", and the run kept no %s (its notes say why)\n", id, ckpt.CheckpointLLName)
			return true
		}
		// Nothing to measure (a published record alone, as most on a fresh
		// clone): said, not fatal, so one such run does not cost the others.
		fmt.Fprintf(a.Stderr, "%s: no row: no checkpoint, no stored samples and no earlier row\n", id)
		return true
	}
	err = a.each(ctx, noCheckpoint, func(fr *Finished) error {
		if fr.Spec.Dataset != ref.Spec.Dataset {
			return nil
		}
		ts, err := runSamples(fr, a.Samples, a.Stderr)
		if err != nil {
			return err
		}
		return row(fr.Record, ts)
	})
	if err == nil {
		err = rowErr
	}
	if err != nil {
		return err
	}
	// Merged and written under the results lock, from the table as it is
	// then: two analyses of one directory must not lose each other's rows.
	return withResultsLock(a.Out, func() error {
		old, oldSet, err := analysis.ReadKTDTSV(tsvPath)
		if err != nil {
			return err
		}
		m := analysis.MergeKTDRows(rows, set, old, oldSet, finished)
		if len(m.Other) > 0 {
			return refuseKTDDrop(tsvPath, m.Other, oldSet, set)
		}
		if m.Kept > 0 {
			fmt.Fprintf(a.Stderr, "kept the KTD of %d runs not analysed now from %s (same ψ and sizes)\n", m.Kept, tsvName)
		}
		if m.Adopted {
			fmt.Fprintf(a.Stderr, "%s recorded no digest of ψ's parameters; its baselines are those of %s now, so its rows are taken as of this ψ (%s)\n", tsvName, set.Features, set.Digest)
		}
		if m.Gone > 0 {
			fmt.Fprintf(a.Stderr, "dropped the KTD of %d runs from %s: they are no longer finished runs of %s\n", m.Gone, tsvName, a.Out)
		}
		for i, r := range m.Rows { // kept rows of a table from before their LL was
			if r.Run != "" && (!r.HasLL || r.Sampled == "") {
				if rec, err := readRecord(filepath.Join(a.Out, runsDirName, r.Run, metricsName)); err == nil && rec != nil {
					fillKTDRow(&m.Rows[i], rec)
				}
			}
		}
		tsv, md, err := analysis.KTDTables(m.Rows, set, ktdRef)
		if err != nil {
			return err
		}
		return a.writeTables(tsvName, tsv, mdName, md)
	})
}

// readKTDReference reads a.KTDReference; nil when there is none.
func (a *Analysis) readKTDReference() (*analysis.KTDReference, error) {
	if a.KTDReference == "" {
		return nil, nil
	}
	ref, err := analysis.ReadKTDReference(a.KTDReference)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return ref, err
}

// refuseKTDDrop is the error of a KTD analysis that would drop the rows
// of runs other, computed in another setting than set: their checkpoints
// may be gone, so never drop what may not be computed again.
func refuseKTDDrop(tsvPath string, other []string, oldSet, set analysis.KTDSetting) error {
	was := fmt.Sprintf("ψ %q%s, %d triples per draw and %d samples", oldSet.Features, digestNote(oldSet.Digest), oldSet.DrawSize, oldSet.Samples)
	switch {
	case oldSet == (analysis.KTDSetting{}):
		was = "a ψ and sizes the table does not record (it predates them)"
	case oldSet.Digest == "" && oldSet.Features == set.Features && oldSet.DrawSize == set.DrawSize && oldSet.Samples == set.Samples:
		was += " (no digest: ψ's baselines then differ from those drawn now, so ψ or the code measuring it changed)"
	}
	return fmt.Errorf("%s holds the KTD of %d runs not analysed now (%s) computed with %s, not this analysis's ψ %q%s, %d and %d: "+
		"analyse them too, write this analysis's table beside it (-ktd-table, e.g. ktd-%s) or move %s away to start a new table",
		tsvPath, len(other), strings.Join(other, ", "), was, set.Features, digestNote(set.Digest), set.DrawSize, set.Samples, set.Features, filepath.Base(tsvPath))
}

// digestNote is " (parameters D)", or nothing where no digest is known.
func digestNote(d string) string {
	if d == "" {
		return ""
	}
	return " (parameters " + d + ")"
}

// paramsDigest identifies a model's parameters: the first 12 hexadecimal
// digits of a SHA-256 of its name and of each table's name, shape and
// values (as the float64 a checkpoint stores). A KTD table records it for
// ψ, so that a ψ trained again under the same run ID is not taken for the
// one that gave the table's rows.
func paramsDigest(m *models.Model) (string, error) {
	h := sha256.New()
	w := bufio.NewWriterSize(h, 1<<16) // a hash.Hash never fails a write
	fmt.Fprintf(w, "%s\n", m.Name)
	var b [8]byte
	for _, name := range m.ParamNames() {
		p := m.Param(name)
		fmt.Fprintf(w, "%s %v\n", name, p.Shape())
		put := func(x float64) {
			binary.LittleEndian.PutUint64(b[:], math.Float64bits(x))
			w.Write(b[:])
		}
		switch d := p.Data().(type) {
		case []float32:
			for _, x := range d {
				put(float64(x))
			}
		case []float64:
			for _, x := range d {
				put(x)
			}
		default:
			return "", fmt.Errorf("parameter %s holds %T, not floats", name, d)
		}
	}
	w.Flush()
	return hex.EncodeToString(h.Sum(nil))[:12], nil
}

// plots draws curves.png again for every selected run with a final record.
func (a *Analysis) plots(ctx context.Context) error {
	n := 0
	for _, r := range a.Runs {
		if err := ctx.Err(); err != nil {
			return err
		}
		dir := filepath.Join(a.Out, runsDirName, r.ID)
		rec, err := readRecord(filepath.Join(dir, metricsName))
		if err != nil {
			return fmt.Errorf("%s: %w", r.ID, err)
		}
		if rec == nil || !final(rec.Status) {
			continue
		}
		if err := writeCurves(dir, rec.Spec, rec.Epochs, rec.BestEpoch); err != nil {
			return fmt.Errorf("%s: %w", r.ID, err)
		}
		n++
	}
	fmt.Fprintf(a.Stderr, "wrote %s of %d runs\n", curvesName, n)
	return nil
}

// paper writes paper.md: the sweep's best configurations beside the
// reference table's rows for the same datasets. Every finished run of
// results.tsv counts, whatever -only selects: the comparison is of the
// sweep's results, not of some runs.
func (a *Analysis) paper() error {
	if a.Reference == "" {
		return errors.New("-analyze paper needs a reference table (-reference FILE)")
	}
	ref, err := report.ReadReference(a.Reference)
	if err != nil {
		return err
	}
	// Under the results lock, as a sweep writes its tables: a sweep
	// running beside this must not interleave an older table.
	var path string
	err = withResultsLock(a.Out, func() error {
		table, err := report.ReadTSV(filepath.Join(a.Out, resultsTSVName))
		if err != nil {
			return err
		}
		if len(table.Rows) == 0 {
			return fmt.Errorf("%s: no run has ended yet: nothing to compare", filepath.Join(a.Out, resultsTSVName))
		}
		md, err := report.CompareMarkdown(table, ref, report.DefaultTolerance)
		if err != nil {
			return err
		}
		path = filepath.Join(a.Out, PaperMDName)
		if err := atomicfile.WriteFile(path, md, 0o644); err != nil {
			return err
		}
		_, err = a.Stdout.Write(md)
		return err
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(a.Stderr, "wrote %s\n", path)
	return nil
}

// calibration computes the ECE of every selected finished run from its
// checkpoint, with the negatives the run drew if it had "ece" in its
// metrics (train.Calibrate seeded by the run), so that both agree.
//
// The tables are updated, not replaced: rows of runs outside the selection
// (-only), and of selected runs whose checkpoint is absent (checkpoints are
// not committed, so a fresh clone has only those it trained), are kept from
// the existing calibration.tsv.
func (a *Analysis) calibration(ctx context.Context) error {
	filters := map[string]*kg.Filter{} // by dataset: runs share few of them
	rows, err := readCalibrationTSV(filepath.Join(a.Out, calTSVName), filepath.Join(a.Out, runsDirName))
	if err != nil {
		return err
	}
	calRun := func(r analysis.CalibrationRow) string { return r.Run.ID }
	rowOf := func(id string) int {
		return slices.IndexFunc(rows, func(r analysis.CalibrationRow) bool { return calRun(r) == id })
	}
	computed := 0
	for _, r := range a.Runs {
		if err := ctx.Err(); err != nil {
			return err
		}
		dir := filepath.Join(a.Out, runsDirName, r.ID)
		rec, err := readRecord(filepath.Join(dir, metricsName))
		if err != nil {
			return fmt.Errorf("%s: %w", r.ID, err)
		}
		if rec == nil || rec.Status != train.Finished {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, ckpt.CheckpointName)); errors.Is(err, fs.ErrNotExist) && rowOf(r.ID) >= 0 {
			fmt.Fprintf(a.Stderr, "%s: no checkpoint; its row is kept from %s\n", r.ID, calTSVName)
			continue
		}
		if r.Spec.Eval.TestOn != "" {
			// Its test metrics are another data set's; calibrating it on
			// its own would disagree with its metrics.json.
			fmt.Fprintf(a.Stderr, "%s: tested on %s (eval.test_on): not calibrated here\n", r.ID, r.Spec.Eval.TestOn)
			continue
		}
		fr, err := LoadFinished(dir, a.DataRoot)
		if err != nil {
			if err := a.skip(err); err != nil {
				return fmt.Errorf("%s: %w", r.ID, err)
			}
			continue
		}
		dom, err := Constraint(fr.Spec, fr.Data)
		if err != nil {
			return err
		}
		ds := fr.Data
		filter := filters[fr.Spec.Dataset]
		if filter == nil {
			filter = kg.NewFilter(ds.Train, ds.Valid, ds.Test)
			filters[fr.Spec.Dataset] = filter
		}
		c, err := analysis.Calibrate(fr.Model, dom, fr.Spec.Eval.BatchSize, ds, filter, uint64(fr.Spec.Seed))
		if err != nil {
			return fmt.Errorf("%s: %w", r.ID, err)
		}
		if err := writeCalibrationPlot(dir, fr.Spec, c); err != nil {
			return fmt.Errorf("%s: %w", r.ID, err)
		}
		fmt.Fprintf(a.Stderr, "%s: ECE %.4f (logistic), %.4f (min-max)\n", r.ID, c.Logistic.ECE, c.MinMax.ECE)
		rows = upsertRow(rows, analysis.CalibrationRow{Run: runOf(fr.ID, fr.Spec), Cal: c}, calRun)
		computed++
	}
	if computed == 0 {
		return fmt.Errorf("no finished run with a checkpoint in %s to calibrate", a.Out)
	}

	tsv, md, err := analysis.CalibrationTables(rows)
	if err != nil {
		return err
	}
	return a.writeTables(calTSVName, tsv, calMarkdownName, md)
}

// samples draws (or reads) each run's samples and audits them against the
// parameters they come from: the rows of sample-audit.tsv. A run whose
// parameters are gone keeps its earlier row.
func (a *Analysis) samples(ctx context.Context) error {
	rows, err := readAuditTSV(filepath.Join(a.Out, auditTSVName), filepath.Join(a.Out, runsDirName))
	if err != nil {
		return err
	}
	kept := func(id string) string {
		if slices.ContainsFunc(rows, func(r analysis.AuditRow) bool { return r.Run.ID == id }) {
			return "; its row is kept from " + auditTSVName
		}
		return ""
	}
	stored := func(dir string) bool {
		return slices.ContainsFunc(sampleFiles(dir), func(path string) bool {
			_, err := os.Stat(path)
			return err == nil
		})
	}
	skip := func(id, dir string, rec *Record) bool {
		if _, err := os.Stat(filepath.Join(dir, ckpt.CheckpointName)); errors.Is(err, fs.ErrNotExist) {
			fmt.Fprintf(a.Stderr, "%s: no %s: its samples are neither drawn nor audited%s\n", id, ckpt.CheckpointName, kept(id))
			return true
		}
		if !llCheckpointMissing(dir, rec) {
			return false
		}
		if stored(dir) {
			fmt.Fprintf(a.Stderr, "%s: no %s, the parameters its samples come from: not audited%s\n", id, ckpt.CheckpointLLName, kept(id))
		} else {
			fmt.Fprintf(a.Stderr, "%s: no samples: sample_from = \"ll\", and the run kept no %s (its notes say why)%s\n", id, ckpt.CheckpointLLName, kept(id))
		}
		return true
	}
	audited := 0
	err = a.each(ctx, skip, func(fr *Finished) error {
		ts, err := runSamples(fr, a.Samples, a.Stderr)
		if err != nil {
			return err
		}
		if len(ts) < 2 {
			fmt.Fprintf(a.Stderr, "%s: fewer than two samples (%d): not audited (the entropy's standard error needs two)\n", fr.ID, len(ts))
			return nil
		}
		row, err := auditRun(fr, ts)
		if err != nil {
			return err
		}
		au := row.Audit
		fmt.Fprintf(a.Stderr, "%s: entropy %.3f nats; train mass %.4f, share %.4f (z %+.1f); relations: TV %.3f to the training frequencies, test LL of R %.3f (theirs %.3f)\n",
			fr.ID, au.Entropy, au.Splits[0].Mass, au.Splits[0].Share(au.Samples), au.Splits[0].Z(au.Samples),
			au.Relations.TV, au.Relations.TestLL, au.Relations.TestLLTrain)
		rows = upsertRow(rows, row, func(r analysis.AuditRow) string { return r.Run.ID })
		audited++
		return nil
	})
	if audited == 0 {
		return err
	}
	// Runs audited before a failure keep their rows.
	tsv, md, werr := analysis.AuditTables(rows)
	if werr == nil {
		werr = a.writeTables(auditTSVName, tsv, auditMDName, md)
	}
	return errors.Join(err, werr)
}

// auditRun audits a run's samples under the parameters and constraint
// they were drawn from.
func auditRun(fr *Finished, ts []kg.Triple) (analysis.AuditRow, error) {
	if err := fr.LoadSampledParameters(); err != nil {
		return analysis.AuditRow{}, err
	}
	dom, err := Constraint(fr.Spec, fr.Data)
	if err != nil {
		return analysis.AuditRow{}, err
	}
	q, err := query.New(fr.Model, dom, fr.Spec.Eval.BatchSize)
	if err != nil {
		return analysis.AuditRow{}, err
	}
	au, err := analysis.AuditSamples(q, fr.Data, ts)
	if err != nil {
		return analysis.AuditRow{}, err
	}
	return analysis.AuditRow{Run: runOf(fr.ID, fr.Spec), SampledAt: sampledAt(fr.Record), Audit: au}, nil
}

// readAuditTSV reads the rows an earlier audit wrote, each with its run's
// spec from runs/<id>/metrics.json; a row whose run is gone is dropped.
func readAuditTSV(path, runsDir string) ([]analysis.AuditRow, error) {
	return analysis.ReadAuditTSV(path, recordedRun(runsDir))
}

// recordedRun looks a table row's run up by its ID in runsDir: ok false
// when it has no metrics.json.
func recordedRun(runsDir string) func(id string) (analysis.Run, bool, error) {
	return func(id string) (analysis.Run, bool, error) {
		rec, err := readRecord(filepath.Join(runsDir, id, metricsName))
		if err != nil || rec == nil {
			return analysis.Run{}, false, err
		}
		return runOf(id, rec.Spec), true, nil
	}
}

// upsertRow replaces the row of rows that has row's run, or appends it.
func upsertRow[R any](rows []R, row R, run func(R) string) []R {
	if i := slices.IndexFunc(rows, func(r R) bool { return run(r) == run(row) }); i >= 0 {
		rows[i] = row
		return rows
	}
	return append(rows, row)
}

// readCalibrationTSV reads the rows an earlier calibration wrote, each
// with its run's spec from runs/<id>/metrics.json; a row whose run is gone
// is dropped.
func readCalibrationTSV(path, runsDir string) ([]analysis.CalibrationRow, error) {
	return analysis.ReadCalibrationTSV(path, recordedRun(runsDir))
}

// runOf describes a run to package analysis.
func runOf(id string, s grid.RunSpec) analysis.Run {
	return analysis.Run{ID: id, Dataset: s.Dataset, Model: s.Model, Objective: s.Objective,
		Constraints: s.Constraints, Rank: s.Rank, Seed: s.Seed}
}

// writeTables writes an analysis's TSV and markdown tables next to
// results.tsv, atomically, and prints the markdown.
func (a *Analysis) writeTables(tsvName string, tsv []byte, mdName string, md []byte) error {
	if err := atomicfile.WriteFile(filepath.Join(a.Out, tsvName), tsv, 0o644); err != nil {
		return err
	}
	if err := atomicfile.WriteFile(filepath.Join(a.Out, mdName), md, 0o644); err != nil {
		return err
	}
	_, err := a.Stdout.Write(md)
	return err
}
