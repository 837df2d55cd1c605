package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"gekc/kg"
	"gekc/metrics"
	"gekc/models"
	"gekc/report"
	"gekc/train"
	"gekc/train/ckpt"
)

// Post-hoc analyses of finished runs, from their checkpoints: no run is
// trained again.
//
//	-analyze samples          write runs/<id>/samples.tsv (-samples N, default 25000)
//	-analyze ktd -features R  kernel triple distance of each run's samples to the
//	                          test triples, with ψ from the ComplEx run R; writes
//	                          ktd.tsv and ktd.md next to results.tsv
//	-analyze calibration      ECE of every finished run (energy-based ones too) on
//	                          the test triples and hard negatives, under both
//	                          mappings; writes runs/<id>/calibration.png, and
//	                          calibration.tsv and calibration.md next to results.tsv
//	-analyze plots            draw runs/<id>/curves.png again from metrics.json,
//	                          for every finished or diverged run; no checkpoint
//	                          or dataset is read

const (
	samplesName     = "samples.tsv"
	defaultSamples  = 25000
	ktdDraws        = 100
	ktdDrawSize     = 1000
	ktdTSVName      = "ktd.tsv"
	ktdMarkdownName = "ktd.md"
	calTSVName      = "calibration.tsv"
	calMarkdownName = "calibration.md"
)

// finishedRun is a run loaded back from its directory.
type finishedRun struct {
	ID    string
	Dir   string
	Spec  RunSpec
	Data  *kg.Dataset
	Model *models.Model
}

// loadFinished loads a finished run's spec, dataset and best parameters.
func loadFinished(dir, dataRoot string) (*finishedRun, error) {
	rec, err := readRecord(filepath.Join(dir, metricsName))
	if err != nil {
		return nil, err
	}
	if rec == nil || rec.Status != StatusFinished {
		return nil, fmt.Errorf("%s: not a finished run", dir)
	}
	spec := rec.Spec
	ds, err := loadDataset(filepath.Join(dataRoot, spec.Dataset))
	if err != nil {
		return nil, err
	}
	cfg, err := trainConfig(spec)
	if err != nil {
		return nil, err
	}
	sz := models.Sizes{Entities: ds.Entities.Len(), Relations: ds.Relations.Len(), Rank: spec.Rank, RelationRank: spec.RelationRank}
	m, err := models.New(spec.Model, sz, models.Options{Seed: uint64(spec.Seed), Dtype: cfg.Dtype})
	if err != nil {
		return nil, err
	}
	if err := ckpt.Load(filepath.Join(dir, ckpt.CheckpointName), m); err != nil {
		return nil, err
	}
	return &finishedRun{ID: rec.ID, Dir: dir, Spec: spec, Data: ds, Model: m}, nil
}

// resolveRun finds a run named by a directory path or by an ID (or unique
// ID prefix) under out/runs.
func resolveRun(out, ref string) (string, error) {
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

// sampleTriples draws n triples from a GeKC, seeded by the run.
// A constrained run (d not nil) samples only consistent triples.
func sampleTriples(m *models.Model, d *models.Domain, n int, seed uint64) ([]kg.Triple, time.Duration, error) {
	start := time.Now()
	s, err := models.NewConstrainedSampler(m, d, 1000)
	if err != nil {
		return nil, 0, err
	}
	ts, err := s.Sample(n, rand.New(rand.NewPCG(seed, 0x5a3b1e)))
	return ts, time.Since(start), err
}

// writeSamples writes triples with entity and relation names, TSV.
func writeSamples(path string, ds *kg.Dataset, ts []kg.Triple) error {
	var buf bytes.Buffer
	for _, t := range ts {
		fmt.Fprintf(&buf, "%s\t%s\t%s\n", ds.Entities.Name(t.S), ds.Relations.Name(t.R), ds.Entities.Name(t.O))
	}
	return WriteFileAtomic(path, buf.Bytes(), 0o644)
}

// readSamples reads a samples.tsv back into ids.
func readSamples(path string, ds *kg.Dataset) ([]kg.Triple, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []kg.Triple
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for line := 1; sc.Scan(); line++ {
		p := strings.Split(sc.Text(), "\t")
		if len(p) != 3 {
			return nil, fmt.Errorf("%s:%d: expected 3 tab-separated fields", path, line)
		}
		s, ok1 := ds.Entities.Index(p[0])
		r, ok2 := ds.Relations.Index(p[1])
		o, ok3 := ds.Entities.Index(p[2])
		if !ok1 || !ok2 || !ok3 {
			return nil, fmt.Errorf("%s:%d: unknown entity or relation", path, line)
		}
		out = append(out, kg.Triple{S: s, R: r, O: o})
	}
	return out, sc.Err()
}

// runSamples returns n samples of a run, read from samples.tsv when it
// holds enough, else drawn and written.
func runSamples(fr *finishedRun, n int, log io.Writer) ([]kg.Triple, error) {
	path := filepath.Join(fr.Dir, samplesName)
	if ts, err := readSamples(path, fr.Data); err == nil && len(ts) >= n {
		return ts[:n], nil
	}
	dom, err := constraintOf(fr.Spec, fr.Data)
	if err != nil {
		return nil, err
	}
	ts, dt, err := sampleTriples(fr.Model, dom, n, uint64(fr.Spec.Seed))
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(log, "%s: sampled %d triples in %.2fs\n", fr.ID, n, dt.Seconds())
	return ts, writeSamples(path, fr.Data, ts)
}

type analysis struct {
	kind, features string
	samples        int
	out, dataRoot  string
	runs           []Run
	stdout, stderr io.Writer
}

func (a *analysis) run(ctx context.Context) error {
	if a.samples <= 0 {
		a.samples = defaultSamples
	}
	switch a.kind {
	case "samples":
		return a.each(ctx, func(fr *finishedRun) error {
			_, err := runSamples(fr, a.samples, a.stderr)
			return err
		})
	case "ktd":
		return a.ktd(ctx)
	case "calibration":
		return a.calibration(ctx)
	case "plots":
		return a.plots(ctx)
	}
	return fmt.Errorf("-analyze %q: want %s", a.kind, analyzeKinds)
}

// analyzeKinds lists the -analyze modes, for messages.
const analyzeKinds = "samples, ktd, calibration or plots"

// each calls f on every selected finished GeKC run.
func (a *analysis) each(ctx context.Context, f func(*finishedRun) error) error {
	for _, r := range a.runs {
		if err := ctx.Err(); err != nil {
			return err
		}
		dir := filepath.Join(a.out, runsDirName, r.ID)
		rec, err := readRecord(filepath.Join(dir, metricsName))
		if err != nil || rec == nil || rec.Status != StatusFinished {
			continue
		}
		if _, sem, err := models.Lookup(rec.Spec.Model); err != nil || sem == models.Energy {
			continue
		}
		fr, err := loadFinished(dir, a.dataRoot)
		if err != nil {
			return err
		}
		if err := f(fr); err != nil {
			return fmt.Errorf("%s: %w", r.ID, err)
		}
	}
	return nil
}

type ktdRow struct {
	dataset, model, objective, id string
	stat                          metrics.KTDStat
}

func (a *analysis) ktd(ctx context.Context) error {
	if a.features == "" {
		return errors.New("-analyze ktd needs -features: the ID or directory of a finished ComplEx run whose product units give ψ")
	}
	dir, err := resolveRun(a.out, a.features)
	if err != nil {
		return err
	}
	ref, err := loadFinished(dir, a.dataRoot)
	if err != nil {
		return err
	}
	psi, err := metrics.ProductUnitFeatures(ref.Model)
	if err != nil {
		return err
	}
	ds := ref.Data
	rng := rand.New(rand.NewPCG(1, 0x7d))
	// Draws of 1000 as in the paper, fewer when the test split is smaller.
	size := min(ktdDrawSize, len(ds.Test), a.samples)
	var rows []ktdRow
	baseline := func(name string, ts []kg.Triple) error {
		st, err := metrics.KTDDraws(psi, ts, ds.Test, size, ktdDraws, rng)
		rows = append(rows, ktdRow{dataset: ref.Spec.Dataset, model: name, stat: st})
		return err
	}
	if err := baseline("training set", ds.Train); err != nil {
		return err
	}
	if err := baseline("uniform", metrics.UniformTriples(a.samples, ds.Entities.Len(), ds.Relations.Len(), rng)); err != nil {
		return err
	}
	err = a.each(ctx, func(fr *finishedRun) error {
		if fr.Spec.Dataset != ref.Spec.Dataset {
			return nil
		}
		ts, err := runSamples(fr, a.samples, a.stderr)
		if err != nil {
			return err
		}
		st, err := metrics.KTDDraws(psi, ts, ds.Test, size, ktdDraws, rng)
		rows = append(rows, ktdRow{dataset: fr.Spec.Dataset, model: fr.Spec.Model, objective: fr.Spec.Objective, id: fr.ID, stat: st})
		fmt.Fprintf(a.stderr, "%s: KTD %.4f ± %.4f\n", fr.ID, st.Mean, st.Std)
		return err
	})
	if err != nil {
		return err
	}
	var tsv, md bytes.Buffer
	fmt.Fprintf(&tsv, "dataset\tmodel\tobjective\trun\tktd_mean\tktd_std\tdraws\n")
	for _, r := range rows {
		fmt.Fprintf(&tsv, "%s\t%s\t%s\t%s\t%.6g\t%.6g\t%d\n", r.dataset, r.model, r.objective, r.id, r.stat.Mean, r.stat.Std, r.stat.Draws)
	}
	fmt.Fprintf(&md, "# Kernel triple distance to the test triples\n\nψ: product units of `%s`; k(x,y) = (xᵀy+1)³; unbiased MMD² over %d draws of %d sampled and %d test triples (mean ± std); %d samples per model. Lower is better.\n\n",
		ref.ID, ktdDraws, size, size, a.samples)
	var cells [][]string
	for _, r := range rows {
		cells = append(cells, []string{r.dataset, r.model, r.objective, fmt.Sprintf("%.3f ± %.3f", r.stat.Mean, r.stat.Std), r.id})
	}
	if err := report.MarkdownTable(&md, []string{"dataset", "model", "objective", "KTD", "run"}, cells); err != nil {
		return err
	}
	return a.writeTables(ktdTSVName, tsv.Bytes(), ktdMarkdownName, md.Bytes())
}

// plots draws curves.png again for every selected run with a final record.
func (a *analysis) plots(ctx context.Context) error {
	n := 0
	for _, r := range a.runs {
		if err := ctx.Err(); err != nil {
			return err
		}
		dir := filepath.Join(a.out, runsDirName, r.ID)
		rec, err := readRecord(filepath.Join(dir, metricsName))
		if err != nil {
			return fmt.Errorf("%s: %w", r.ID, err)
		}
		if rec == nil || !rec.Status.final() {
			continue
		}
		if err := writeCurves(dir, rec.Spec, epochsOf(rec), rec.BestEpoch); err != nil {
			return fmt.Errorf("%s: %w", r.ID, err)
		}
		n++
	}
	fmt.Fprintf(a.stderr, "wrote %s of %d runs\n", curvesName, n)
	return nil
}

type calibrationRow struct {
	spec RunSpec
	id   string
	cal  *metrics.Calibration
}

// calibration computes the ECE of every selected finished run from its
// checkpoint, with the negatives the run drew if it had "ece" in its
// metrics (train.Calibrate seeded by the run), so that both agree.
//
// The tables are updated, not replaced: rows of runs outside the selection
// (-only), and of selected runs whose checkpoint is absent (checkpoints are
// not committed, so a fresh clone has only those it trained), are kept from
// the existing calibration.tsv.
func (a *analysis) calibration(ctx context.Context) error {
	filters := map[string]*kg.Filter{} // by dataset: runs share few of them
	rows, err := readCalibrationTSV(filepath.Join(a.out, calTSVName), filepath.Join(a.out, runsDirName))
	if err != nil {
		return err
	}
	rowOf := func(id string) int { return slices.IndexFunc(rows, func(r calibrationRow) bool { return r.id == id }) }
	put := func(row calibrationRow) {
		if i := rowOf(row.id); i >= 0 {
			rows[i] = row
		} else {
			rows = append(rows, row)
		}
	}
	computed := 0
	for _, r := range a.runs {
		if err := ctx.Err(); err != nil {
			return err
		}
		dir := filepath.Join(a.out, runsDirName, r.ID)
		rec, err := readRecord(filepath.Join(dir, metricsName))
		if err != nil {
			return fmt.Errorf("%s: %w", r.ID, err)
		}
		if rec == nil || rec.Status != StatusFinished {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, ckpt.CheckpointName)); errors.Is(err, fs.ErrNotExist) && rowOf(r.ID) >= 0 {
			fmt.Fprintf(a.stderr, "%s: no checkpoint; its row is kept from %s\n", r.ID, calTSVName)
			continue
		}
		fr, err := loadFinished(dir, a.dataRoot)
		if err != nil {
			return fmt.Errorf("%s: %w", r.ID, err)
		}
		batch := fr.Spec.Eval.BatchSize
		if batch <= 0 {
			batch = 1000
		}
		dom, err := constraintOf(fr.Spec, fr.Data)
		if err != nil {
			return err
		}
		ev, err := metrics.NewConstrainedEvaluator(fr.Model, dom, batch)
		if err != nil {
			return fmt.Errorf("%s: %w", r.ID, err)
		}
		ds := fr.Data
		filter := filters[fr.Spec.Dataset]
		if filter == nil {
			filter = kg.NewFilter(ds.Train, ds.Valid, ds.Test)
			filters[fr.Spec.Dataset] = filter
		}
		c, err := train.Calibrate(ev, ds, filter, uint64(fr.Spec.Seed))
		if err != nil {
			return fmt.Errorf("%s: %w", r.ID, err)
		}
		if err := writeCalibrationPlot(dir, fr.Spec, c); err != nil {
			return fmt.Errorf("%s: %w", r.ID, err)
		}
		fmt.Fprintf(a.stderr, "%s: ECE %.4f (logistic), %.4f (min-max)\n", r.ID, c.Logistic.ECE, c.MinMax.ECE)
		put(calibrationRow{spec: fr.Spec, id: fr.ID, cal: c})
		computed++
	}
	if computed == 0 {
		return fmt.Errorf("no finished run with a checkpoint in %s to calibrate", a.out)
	}

	var tsv, md bytes.Buffer
	fmt.Fprintf(&tsv, "dataset\tmodel\tobjective\tconstraints\tseed\trun\tece_logistic\tece_minmax\tpositives\tnegatives\ttrain_min\ttrain_max\n")
	for _, r := range rows {
		c := r.cal
		fmt.Fprintf(&tsv, "%s\t%s\t%s\t%s\t%d\t%s\t%.6g\t%.6g\t%d\t%d\t%.6g\t%.6g\n", r.spec.Dataset, r.spec.Model, r.spec.Objective,
			r.spec.Constraints, r.spec.Seed, r.id, c.Logistic.ECE, c.MinMax.ECE, c.Positives, c.Negatives, c.TrainMin, c.TrainMax)
	}
	fmt.Fprintf(&md, "# Empirical calibration error on the test triples\n\n"+
		"Each test triple (s, r, o) is true; one hard negative (s, r, o′) per test triple is false, o′ drawn among the objects of r in training and unknown for (s, r) (test triples without such an o′ get none). "+
		"Probabilities are σ(log-score) (logistic) or the log-score min-max normalised by the training triples' range (min-max); "+
		"log-score is log φ for a GeKC and the score φ for an energy-based model. "+
		"ECE is the mean |mean probability − fraction true| over the non-empty of %d uniform bins. Lower is better. "+
		"Diagrams: runs/<id>/%s.\n\n", metrics.CalibrationBins, calibrationPlotName)
	var cells [][]string
	for _, r := range rows {
		c := r.cal
		cells = append(cells, []string{r.spec.Dataset, displayModel(r.spec), r.spec.Objective, fmt.Sprint(r.spec.Rank), fmt.Sprint(r.spec.Seed),
			fmt.Sprintf("%.4f", c.Logistic.ECE), fmt.Sprintf("%.4f", c.MinMax.ECE),
			fmt.Sprintf("%d / %d", c.Positives, c.Negatives), "`" + r.id + "`"})
	}
	header := []string{"dataset", "model", "objective", "rank", "seed", "ECE logistic", "ECE min-max", "true / negatives", "run"}
	if err := report.MarkdownTable(&md, header, cells); err != nil {
		return err
	}
	return a.writeTables(calTSVName, tsv.Bytes(), calMarkdownName, md.Bytes())
}

// readCalibrationTSV reads the rows an earlier calibration wrote, in their
// order, each with its run's spec from runs/<id>/metrics.json; a row whose
// run is gone is dropped. A missing file is no rows.
func readCalibrationTSV(path, runsDir string) ([]calibrationRow, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var rows []calibrationRow
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	for i, line := range lines[1:] {
		f := strings.Split(line, "\t")
		bad := func(what string, err error) error {
			return fmt.Errorf("%s:%d: %s: %v", path, i+2, what, err)
		}
		if len(f) != 12 {
			return nil, bad("fields", fmt.Errorf("%d, want 12", len(f)))
		}
		var c metrics.Calibration
		floats := []struct {
			col int
			dst *float64
		}{{6, &c.Logistic.ECE}, {7, &c.MinMax.ECE}, {10, &c.TrainMin}, {11, &c.TrainMax}}
		for _, x := range floats {
			if *x.dst, err = strconv.ParseFloat(f[x.col], 64); err != nil {
				return nil, bad("column "+strconv.Itoa(x.col+1), err)
			}
		}
		if c.Positives, err = strconv.Atoi(f[8]); err != nil {
			return nil, bad("positives", err)
		}
		if c.Negatives, err = strconv.Atoi(f[9]); err != nil {
			return nil, bad("negatives", err)
		}
		id := f[5]
		if id == "" || id == "." || id == ".." || strings.ContainsAny(id, `/\`) {
			return nil, bad("run", fmt.Errorf("%q is not a run ID", id))
		}
		rec, err := readRecord(filepath.Join(runsDir, id, metricsName))
		if err != nil {
			return nil, err
		}
		if rec == nil {
			continue
		}
		rows = append(rows, calibrationRow{spec: rec.Spec, id: id, cal: &c})
	}
	return rows, nil
}

// writeTables writes an analysis's TSV and markdown tables next to
// results.tsv, atomically, and prints the markdown.
func (a *analysis) writeTables(tsvName string, tsv []byte, mdName string, md []byte) error {
	if err := WriteFileAtomic(filepath.Join(a.out, tsvName), tsv, 0o644); err != nil {
		return err
	}
	if err := WriteFileAtomic(filepath.Join(a.out, mdName), md, 0o644); err != nil {
		return err
	}
	_, err := a.stdout.Write(md)
	return err
}

// displayModel names a run's model as tables do: a domain-constrained one
// gets the paper's "d-" prefix (d-complex2).
func displayModel(s RunSpec) string {
	if s.Constraints == "domain" {
		return "d-" + s.Model
	}
	return s.Model
}
