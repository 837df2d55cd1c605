package analysis

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"gekc/kg"
	"gekc/metrics"
	"gekc/models"
	"gekc/resultsdir"
	"gekc/train"
	"gekc/train/ckpt"
)

// ktd is the kernel triple distance of each finished GeKC's samples to the
// test triples, with ψ from the ComplEx run o.Features, beside the test LL
// of the distribution sampled and the paper's KTD: ktd.tsv and ktd.md
// (KTDTables) next to results.tsv.
//
// The table is updated, not replaced: runs analysed before keep their
// rows when those were computed with the same ψ (run ID and digest of its
// parameters) and sizes, also where their checkpoints are gone (as on a
// fresh clone or a new machine). A run whose checkpoint is gone is
// measured on its stored samples (published ones included), else keeps
// its row.
type ktd struct {
	o               *Options
	ref             *resultsdir.Finished // ψ's run
	psi             metrics.TripleFeatures
	size            int
	set             KTDSetting
	tsvName, mdName string
	old             []KTDRow // the table as it was
	oldSet          KTDSetting
	adopted         bool // the old table, recording no digest, is of this ψ
	ktdRef          *KTDReference
	rows            []KTDRow
	rowErr          error // of a run measured on its stored samples
}

func newKTD(o *Options) (Analysis, error) {
	ref, err := o.features("ktd")
	if err != nil {
		return nil, err
	}
	a := &ktd{o: o, ref: ref, size: KTDSize(len(ref.Data.Test), o.Samples)}
	if a.psi, err = metrics.ProductUnitFeatures(ref.Model); err != nil {
		return nil, err
	}
	digest, err := paramsDigest(ref.Model)
	if err != nil {
		return nil, fmt.Errorf("ψ %s: %w", ref.ID, err)
	}
	a.set = KTDSetting{Features: ref.ID, Digest: digest, DrawSize: a.size, Samples: o.Samples}
	if a.tsvName, a.mdName, err = ktdTableNames(o.KTDTable); err != nil {
		return nil, err
	}
	if a.old, a.oldSet, err = ReadKTDTSV(a.tsvPath()); err != nil {
		return nil, err
	}
	if a.ktdRef, err = o.readKTDReference(); err != nil {
		return nil, err
	}
	return a, a.baselines()
}

// features opens the run o.Features names, whose product units give ψ.
func (o *Options) features(kind string) (*resultsdir.Finished, error) {
	if o.Features == "" {
		return nil, fmt.Errorf("-analyze %s needs -features: the ID or directory of a finished ComplEx run whose product units give ψ", kind)
	}
	dir, err := resultsdir.ResolveRun(o.Out, o.Features)
	if err != nil {
		return nil, err
	}
	return resultsdir.LoadFinished(dir, o.DataRoot)
}

// ktdTableNames are the KTD's tables, named by -ktd-table.
func ktdTableNames(table string) (tsv, md string, err error) {
	if table == "" {
		return KTDTSVName, KTDMarkdownName, nil
	}
	if table != filepath.Base(table) || strings.HasSuffix(table, ".tsv") || strings.HasSuffix(table, ".md") {
		return "", "", fmt.Errorf("-ktd-table %q: want a file name without directory or extension, e.g. ktd-d1000", table)
	}
	return table + ".tsv", table + ".md", nil
}

func (a *ktd) tsvPath() string { return filepath.Join(a.o.Out, a.tsvName) }

// finished says whether run id is a finished run of the results directory.
func (a *ktd) finished(id string) bool {
	rec, err := resultsdir.ReadRecord(resultsdir.RunDir(a.o.Out, id))
	return err == nil && rec != nil && rec.Status == train.Finished
}

// baselines measures the baselines first (seconds): they tell whether a
// table from before ψ's digest was recorded is of this ψ. The analysis is
// refused before any sampling when the selection alone shows that it would
// drop rows; the merge under the lock decides (Tables).
func (a *ktd) baselines() error {
	ds, o := a.ref.Data, a.o
	rows, err := KTDBaselines(a.psi, a.ref.Spec.Dataset, ds, a.size, o.Samples, rand.New(rand.NewPCG(1, 0x7d)))
	if err != nil {
		return err
	}
	planned := slices.Clone(rows)
	for _, r := range o.Runs {
		planned = append(planned, KTDRow{Run: r.ID})
	}
	pre := MergeKTDRows(planned, a.set, a.old, a.oldSet, a.finished)
	if len(pre.Other) > 0 {
		return refuseKTDDrop(a.tsvPath(), pre.Other, a.oldSet, a.set)
	}
	a.rows, a.adopted = rows, pre.Adopted
	if !o.NNMFAug {
		return nil
	}
	start := time.Now()
	rep, err := NNMFAugBaseline(a.psi, a.ref.Spec.Dataset, ds, a.size, o.Samples, rand.New(rand.NewPCG(2, 0x7d)))
	if err != nil {
		return err
	}
	a.rows = append(a.rows, rep.Row)
	fmt.Fprintf(o.Stderr, "NNMFAug (%d NMF iterations, relative error %.3f; %d clusters; %s): KTD %.4f ± %.4f; test LL %.3f as the paper's code computes it, "+
		"but %d of the %d test triples lie across clusters, where the sampler's probability is zero\n",
		rep.Model.NMFIterations, rep.Model.NMFError, rep.Model.Clusters(), time.Since(start).Round(time.Second),
		rep.Row.Stat.Mean, rep.Row.Stat.Std, rep.PaperLL, rep.Row.Across, rep.Row.Tests)
	return nil
}

// row measures the KTD of rec's run on its samples ts.
func (a *ktd) row(rec *resultsdir.Record, ts []kg.Triple) error {
	id, spec := rec.ID, rec.Spec
	st, err := RunKTD(a.psi, id, ts, a.ref.Data.Test, a.size)
	ll, hasLL := rec.SampledLL()
	a.rows = append(a.rows, KTDRow{Dataset: spec.Dataset, Model: spec.Model, Objective: spec.Objective, Run: id, Sampled: rec.SampledAt(), Stat: st, LL: ll, HasLL: hasLL})
	fmt.Fprintf(a.o.Stderr, "%s: KTD %.4f ± %.4f\n", id, st.Mean, st.Std)
	return err
}

// Skip passes over a run whose checkpoint is gone, measured here on its
// stored samples or keeping its row.
func (a *ktd) Skip(r *Selected) (bool, error) {
	if !a.o.finishedGeKC(r) {
		return true, nil
	}
	id, dir, rec, log := r.ID, r.Dir, r.Record, a.o.Stderr
	_, statErr := os.Stat(filepath.Join(dir, ckpt.CheckpointName))
	if !errors.Is(statErr, fs.ErrNotExist) && !resultsdir.LLCheckpointMissing(dir, rec) {
		return false, nil
	}
	switch {
	case rec.Spec.Dataset != a.ref.Spec.Dataset: // another data set's run: not in this table
	case a.storedRow(rec, dir):
	case a.hasOldRow(id):
		fmt.Fprintf(log, "%s: no checkpoint; its row is kept from %s\n", id, a.tsvName)
	case resultsdir.LLCheckpointMissing(dir, rec):
		fmt.Fprintf(log, "%s: no row: sample_from = \"ll\", and the run kept no %s (its notes say why)\n", id, ckpt.CheckpointLLName)
	default:
		// Nothing to measure (a published record alone, as most on a fresh
		// clone): said, not fatal, so one such run does not cost the others.
		fmt.Fprintf(log, "%s: no row: no checkpoint, no stored samples and no earlier row\n", id)
	}
	return true, nil
}

// storedRow measures a run without its checkpoint on its stored samples,
// if it has enough, and says whether it did.
func (a *ktd) storedRow(rec *resultsdir.Record, dir string) bool {
	ts := resultsdir.StoredSamples(dir, a.ref.Data, a.o.Samples)
	if ts == nil {
		return false
	}
	fmt.Fprintf(a.o.Stderr, "%s: no checkpoint; measured on its stored samples\n", rec.ID)
	if err := a.row(rec, ts); err != nil && a.rowErr == nil {
		a.rowErr = fmt.Errorf("%s: %w", rec.ID, err)
	}
	return true
}

// hasOldRow says whether run id has a row in the table as it was, of the
// same ψ and sizes.
func (a *ktd) hasOldRow(id string) bool {
	return (a.oldSet == a.set || a.adopted) && slices.ContainsFunc(a.old, func(r KTDRow) bool { return r.Run == id })
}

func (a *ktd) Compute(_ context.Context, r *Selected) error {
	fr, err := r.Open()
	if err != nil {
		return err
	}
	if fr.Spec.Dataset != a.ref.Spec.Dataset {
		return nil
	}
	ts, err := runSamples(fr, a.o.Samples, a.o.Stderr)
	if err == nil {
		err = a.row(fr.Record, ts)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", r.ID, err)
	}
	return nil
}

func (a *ktd) Tables(err error) (func() error, error) {
	if err == nil {
		err = a.rowErr
	}
	if err != nil {
		return nil, err
	}
	return a.merge, nil
}

// merge merges the rows into the table as it is now and writes it: under
// the results lock, so that two analyses of one directory do not lose
// each other's rows.
func (a *ktd) merge() error {
	old, oldSet, err := ReadKTDTSV(a.tsvPath())
	if err != nil {
		return err
	}
	m := MergeKTDRows(a.rows, a.set, old, oldSet, a.finished)
	if len(m.Other) > 0 {
		return refuseKTDDrop(a.tsvPath(), m.Other, oldSet, a.set)
	}
	log := a.o.Stderr
	if m.Kept > 0 {
		fmt.Fprintf(log, "kept the KTD of %d runs not analysed now from %s (same ψ and sizes)\n", m.Kept, a.tsvName)
	}
	if m.Adopted {
		fmt.Fprintf(log, "%s recorded no digest of ψ's parameters; its baselines are those of %s now, so its rows are taken as of this ψ (%s)\n", a.tsvName, a.set.Features, a.set.Digest)
	}
	if m.Gone > 0 {
		fmt.Fprintf(log, "dropped the KTD of %d runs from %s: they are no longer finished runs of %s\n", m.Gone, a.tsvName, a.o.Out)
	}
	for i, r := range m.Rows { // kept rows of a table from before their LL was
		if r.Run != "" && (!r.HasLL || r.Sampled == "") {
			if rec, err := resultsdir.ReadRecord(resultsdir.RunDir(a.o.Out, r.Run)); err == nil && rec != nil {
				fillKTDRow(&m.Rows[i], rec)
			}
		}
	}
	tsv, md, err := KTDTables(m.Rows, a.set, a.ktdRef)
	if err != nil {
		return err
	}
	return a.o.writeTables(a.tsvName, tsv, a.mdName, md)
}

// readKTDReference reads o.KTDReference; nil when there is none.
func (o *Options) readKTDReference() (*KTDReference, error) {
	if o.KTDReference == "" {
		return nil, nil
	}
	ref, err := ReadKTDReference(o.KTDReference)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return ref, err
}

// refuseKTDDrop is the error of a KTD analysis that would drop the rows
// of runs other, computed in another setting than set: their checkpoints
// may be gone, so never drop what may not be computed again.
func refuseKTDDrop(tsvPath string, other []string, oldSet, set KTDSetting) error {
	was := fmt.Sprintf("ψ %q%s, %d triples per draw and %d samples", oldSet.Features, digestNote(oldSet.Digest), oldSet.DrawSize, oldSet.Samples)
	switch {
	case oldSet == (KTDSetting{}):
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
