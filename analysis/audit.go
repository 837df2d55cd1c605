package analysis

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"gekc/kg"
	"gekc/report"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/stat"
)

const (
	// AuditTSVName and AuditMarkdownName are the tables of the sample
	// audit (-analyze samples), written next to results.tsv.
	AuditTSVName      = "sample-audit.tsv"
	AuditMarkdownName = "sample-audit.md"
)

// AuditSplits are the splits a sample audit weighs, in table order.
var AuditSplits = []string{"train", "valid", "test"}

// splitTriples returns split i of AuditSplits.
func splitTriples(ds *kg.Dataset, i int) []kg.Triple {
	return [][]kg.Triple{ds.Train, ds.Valid, ds.Test}[i]
}

// A LogJointer gives log p(s, r, o) of triples under a GeKC, as
// query.Querier does.
type LogJointer interface {
	LogJoint(triples [][3]int) ([]float64, error)
}

// An AuditModel is what a sample audit asks of a GeKC: log p of triples
// and the unnormalised log marginal of every relation, as query.Querier
// gives them.
type AuditModel interface {
	LogJointer
	RelationLogMarginals() ([]float64, error)
}

// SplitMass is one split of a data set weighed by a model and by its
// samples: Mass = Σ p(t) over the split's distinct triples, exact, and
// Hits the samples that are one of them. For an exact sampler Hits is
// Binomial(n, Mass).
type SplitMass struct {
	Split   string
	Triples int // distinct triples
	Mass    float64
	Hits    int
}

// Share is the fraction of n samples that are triples of the split.
func (s SplitMass) Share(n int) float64 { return float64(s.Hits) / float64(n) }

// Z is the binomial z-score of Hits against n·Mass: beyond about ±3 the
// samples do not come from the distribution the model's exact
// probabilities describe. NaN when Mass is 0 or 1.
func (s SplitMass) Z(n int) float64 {
	v := float64(n) * s.Mass * (1 - s.Mass)
	if !(v > 0) {
		return math.NaN()
	}
	return (float64(s.Hits) - float64(n)*s.Mass) / math.Sqrt(v)
}

// SampleAudit sets a model's samples beside its exact probabilities, which
// only a tractable model can give: how much of its mass sits on each
// split, whether its samples land there as often (a check of the sampler
// at the data set's full size, where enumeration is out of reach), and
// its entropy H = −E[log p(x)], estimated from its own samples. A model
// that puts much of its mass on the training triples draws samples that
// look like them.
type SampleAudit struct {
	Samples   int
	Distinct  int     // distinct sampled triples
	Entropy   float64 // −mean log p of the samples, nats
	EntropySE float64 // its standard error
	Splits    []SplitMass
	// Relations is nil in a table written before audits weighed them.
	Relations *RelationFit
}

// RelationFit sets a model's relation marginal p(R) beside the training
// split's relation frequencies f(R), the marginal that maximum likelihood
// fits. Pseudo-log-likelihood never scores p(R): its three conditionals
// are unchanged when a relation's whole slice of the distribution is
// scaled, but for p(r | s, o), which sees only the pairs in the data. So
// a PLL-trained model may sample the wrong mix of relations, which a
// kernel distance to the test triples penalises, and it pays in test
// log-likelihood, whose log p(s, r, o) = log p(r) + log p(s, o | r):
// TestLL − TestLLTrain is what the model's p(R) costs it against the
// training frequencies.
type RelationFit struct {
	TV          float64 // ½ Σ_r |p(r) − f(r)|
	TestLL      float64 // mean log p(r) over the test triples
	TestLLTrain float64 // mean log f(r) over them; −Inf if one's relation is not in training
}

// TrainRelationFrequencies returns f(R), the share of ds's training
// triples that each of nr relations has.
func TrainRelationFrequencies(ds *kg.Dataset, nr int) ([]float64, error) {
	if len(ds.Train) == 0 {
		return nil, errors.New("the relation marginal needs training and test triples")
	}
	freq := make([]float64, nr)
	for _, t := range ds.Train {
		if int(t.R) >= nr {
			return nil, fmt.Errorf("training triple (%d, %d, %d): relation beyond the model's %d", t.S, t.R, t.O, nr)
		}
		freq[t.R]++
	}
	for r := range freq {
		freq[r] /= float64(len(ds.Train))
	}
	return freq, nil
}

// FitRelations computes the RelationFit on ds of a model whose
// unnormalised log relation marginals are logMarg (query.Querier's
// RelationLogMarginals).
func FitRelations(logMarg []float64, ds *kg.Dataset) (*RelationFit, error) {
	nr := len(logMarg)
	freq, err := TrainRelationFrequencies(ds, nr)
	if err != nil {
		return nil, err
	}
	if len(ds.Test) == 0 {
		return nil, errors.New("the relation marginal needs training and test triples")
	}
	lz := floats.LogSumExp(logMarg)
	if math.IsNaN(lz) || math.IsInf(lz, 0) {
		return nil, fmt.Errorf("the relation marginals sum to exp(%v)", lz)
	}
	logP := make([]float64, nr)
	fit := &RelationFit{}
	for r, lm := range logMarg {
		logP[r] = lm - lz
		fit.TV += math.Abs(math.Exp(logP[r])-freq[r]) / 2
	}
	for _, t := range ds.Test {
		if int(t.R) >= nr {
			return nil, fmt.Errorf("test triple (%d, %d, %d): relation beyond the model's %d", t.S, t.R, t.O, nr)
		}
		fit.TestLL += logP[t.R]
		fit.TestLLTrain += math.Log(freq[t.R])
	}
	fit.TestLL /= float64(len(ds.Test))
	fit.TestLLTrain /= float64(len(ds.Test))
	return fit, nil
}

// auditChunk bounds the triples scored at once, so that a split of
// millions costs no more memory than this many [3]int (24 MB); each chunk
// computes log Z again.
const auditChunk = 1 << 20

// AuditSamples weighs ds's train, valid and test splits (AuditSplits) and
// the samples under q, the model (and domain constraint) they were drawn
// from, and sets its relation marginal beside the training frequencies.
func AuditSamples(q AuditModel, ds *kg.Dataset, samples []kg.Triple) (*SampleAudit, error) {
	n := len(samples)
	if n < 2 {
		return nil, fmt.Errorf("analysis: a sample audit needs at least 2 samples, got %d", n)
	}
	a := &SampleAudit{Samples: n}
	counts := map[kg.Triple]int{}
	for _, t := range samples {
		counts[t]++
	}
	a.Distinct = len(counts)
	var lps []float64
	err := logJoints(q, samples, func(i int, lp float64) error {
		if math.IsInf(lp, -1) {
			return fmt.Errorf("sample %d (%d, %d, %d) has probability 0: not drawn from these parameters", i, samples[i].S, samples[i].R, samples[i].O)
		}
		lps = append(lps, lp)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("analysis: the samples: %w", err)
	}
	mean := stat.Mean(lps, nil)
	a.Entropy = -mean
	a.EntropySE = stat.StdDev(lps, nil) / math.Sqrt(float64(n))
	for i, split := range AuditSplits {
		ts := distinct(splitTriples(ds, i))
		s := SplitMass{Split: split, Triples: len(ts)}
		for _, t := range ts {
			s.Hits += counts[t]
		}
		err := logJoints(q, ts, func(_ int, lp float64) error {
			s.Mass += math.Exp(lp)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("analysis: the %s triples: %w", split, err)
		}
		a.Splits = append(a.Splits, s)
	}
	lm, err := q.RelationLogMarginals()
	if err == nil {
		a.Relations, err = FitRelations(lm, ds)
	}
	if err != nil {
		return nil, fmt.Errorf("analysis: the relations: %w", err)
	}
	return a, nil
}

// logJoints calls f with the index and log p of each triple, scoring
// auditChunk at once; a log p that is NaN or above 0 (beyond rounding)
// is an error.
func logJoints(q LogJointer, ts []kg.Triple, f func(i int, lp float64) error) error {
	buf := make([][3]int, 0, min(len(ts), auditChunk))
	for lo := 0; lo < len(ts); lo += auditChunk {
		buf = buf[:0]
		for _, t := range ts[lo:min(lo+auditChunk, len(ts))] {
			buf = append(buf, [3]int{int(t.S), int(t.R), int(t.O)})
		}
		lps, err := q.LogJoint(buf)
		if err != nil {
			return err
		}
		for j, lp := range lps {
			if !(lp <= 1e-6) { // float32 rounding may put a near-certain triple a hair above 0
				t := ts[lo+j]
				return fmt.Errorf("triple %d (%d, %d, %d): log p = %v", lo+j, t.S, t.R, t.O, lp)
			}
			if err := f(lo+j, lp); err != nil {
				return err
			}
		}
	}
	return nil
}

// distinct returns the distinct triples of ts, sorted.
func distinct(ts []kg.Triple) []kg.Triple {
	out := slices.Clone(ts)
	slices.SortFunc(out, func(a, b kg.Triple) int {
		return cmp.Or(cmp.Compare(a.S, b.S), cmp.Compare(a.R, b.R), cmp.Compare(a.O, b.O))
	})
	return slices.Compact(out)
}

// AuditRow is one line of the audit tables: a run, the parameters its
// samples come from ("best valid LL, epoch 14"), and their audit.
type AuditRow struct {
	Run       Run
	SampledAt string
	Audit     *SampleAudit
}

// auditColumns is the header of sample-audit.tsv; each split adds
// <split>_triples, <split>_mass and <split>_hits, and auditRelationColumns
// follow them (empty in a row whose audit did not weigh the relations;
// tables written before audits did end with the splits).
var (
	auditColumns = []string{"dataset", "model", "objective", "constraints", "rank", "seed", "run", "sampled_at",
		"samples", "distinct", "entropy", "entropy_se"}
	auditRelationColumns = []string{"relation_tv", "test_ll_relation", "test_ll_relation_train"}
)

// AuditTables renders the rows as sample-audit.tsv (which ReadAuditTSV
// reads back) and sample-audit.md.
func AuditTables(rows []AuditRow) (tsv, md []byte, err error) {
	var t, m bytes.Buffer
	header := slices.Clone(auditColumns)
	for _, s := range AuditSplits {
		header = append(header, s+"_triples", s+"_mass", s+"_hits")
	}
	header = append(header, auditRelationColumns...)
	t.WriteString(strings.Join(header, "\t") + "\n")
	for _, r := range rows {
		s, a := r.Run, r.Audit
		f := []string{s.Dataset, s.Model, s.Objective, s.Constraints, strconv.Itoa(s.Rank), strconv.Itoa(s.Seed), s.ID,
			r.SampledAt, strconv.Itoa(a.Samples), strconv.Itoa(a.Distinct), kept(a.Entropy, 8), kept(a.EntropySE, 4)}
		for _, sp := range a.Splits {
			f = append(f, strconv.Itoa(sp.Triples), kept(sp.Mass, 8), strconv.Itoa(sp.Hits))
		}
		if rf := a.Relations; rf != nil {
			f = append(f, kept(rf.TV, 6), kept(rf.TestLL, 8), kept(rf.TestLLTrain, 8))
		} else {
			f = append(f, "", "", "")
		}
		t.WriteString(strings.Join(f, "\t") + "\n")
	}
	m.WriteString("# Samples against the model's exact probabilities\n\n" +
		"For each split, \"mass\" is the model's probability of drawing one of its triples, Σ p(t) over them (exact: a GeKC's " +
		"log p is tractable), and \"share\" the fraction of the run's samples that are one; z is the binomial z-score of the " +
		"share against the mass, within about ±3 for an exact sampler (a check at the data set's full size, where the tests' " +
		"enumeration is out of reach). \"entropy\" is −mean log p of the samples (nats, ± two standard errors), the model's " +
		"entropy H; an unconstrained uniform model has log(|E|²|R|). A model with much mass on the training triples draws samples that look " +
		"like them, which a kernel two-sample statistic (KTD) against the test triples rewards. \"relations\" sets the model's exact " +
		"relation marginal p(R) beside the training split's relation frequencies f(R), which maximum likelihood fits and " +
		"pseudo-log-likelihood never scores: their total variation distance, and the relation's part of the test log-likelihood " +
		"(log p(s, r, o) = log p(r) + log p(s, o | r)), mean log p(r) over the test triples, beside the mean log f(r) the training " +
		"frequencies would give it. A model far from f(R) draws the wrong mix of relations.\n\n")
	var cells [][]string
	for _, r := range rows {
		s, a := r.Run, r.Audit
		row := []string{s.Dataset, DisplayModel(s.Model, s.Constraints), s.Objective, strconv.Itoa(s.Rank), strconv.Itoa(s.Seed),
			r.SampledAt, fmt.Sprintf("%.3f ± %.3f", a.Entropy, 2*a.EntropySE), fmt.Sprintf("%d of %d", a.Distinct, a.Samples)}
		for _, sp := range a.Splits {
			row = append(row, fmt.Sprintf("%.4f / %.4f (%+.1f)", sp.Mass, sp.Share(a.Samples), sp.Z(a.Samples)))
		}
		if rf := a.Relations; rf != nil {
			row = append(row, fmt.Sprintf("%.3f", rf.TV), fmt.Sprintf("%.3f / %.3f", rf.TestLL, rf.TestLLTrain))
		} else {
			row = append(row, "–", "–")
		}
		cells = append(cells, append(row, "`"+s.ID+"`"))
	}
	mdHeader := []string{"dataset", "model", "objective", "rank", "seed", "sampled at", "entropy", "distinct"}
	for _, s := range AuditSplits {
		mdHeader = append(mdHeader, s+": mass / share (z)")
	}
	mdHeader = append(mdHeader, "relations: TV to f(R)", "test LL of R: p / f")
	if err := report.MarkdownTable(&m, append(mdHeader, "run"), cells); err != nil {
		return nil, nil, err
	}
	return t.Bytes(), m.Bytes(), nil
}

// ReadAuditTSV reads the rows an earlier audit wrote, in their order.
// lookup gives each row's Run from its ID; a row whose run is gone (ok
// false) is dropped, and lookup's error is returned as is. A missing file
// is no rows; a malformed one is an error naming its line and column.
func ReadAuditTSV(path string, lookup func(id string) (r Run, ok bool, err error)) ([]AuditRow, error) {
	lines, err := tableLines(path)
	if err != nil {
		return nil, err
	}
	legacy := len(auditColumns) + 3*len(AuditSplits)
	want := legacy + len(auditRelationColumns)
	var rows []AuditRow
	for i, line := range lines {
		f := strings.Split(line, "\t")
		bad := func(what string, err error) error {
			return fmt.Errorf("%s:%d: %s: %v", path, i+2, what, err)
		}
		if len(f) != want && len(f) != legacy {
			return nil, bad("fields", fmt.Errorf("%d, want %d", len(f), want))
		}
		a := &SampleAudit{Splits: make([]SplitMass, len(AuditSplits))}
		ints := map[int]*int{8: &a.Samples, 9: &a.Distinct}
		floats := map[int]*float64{10: &a.Entropy, 11: &a.EntropySE}
		for j, name := range AuditSplits {
			c, sp := len(auditColumns)+3*j, &a.Splits[j]
			sp.Split = name
			ints[c], floats[c+1], ints[c+2] = &sp.Triples, &sp.Mass, &sp.Hits
		}
		for _, col := range slices.Sorted(maps.Keys(ints)) {
			dst := ints[col]
			if *dst, err = strconv.Atoi(f[col]); err != nil || *dst < 0 {
				return nil, bad("column "+strconv.Itoa(col+1), cmp.Or(err, fmt.Errorf("%d is negative", *dst)))
			}
		}
		for _, col := range slices.Sorted(maps.Keys(floats)) {
			dst := floats[col]
			if *dst, err = strconv.ParseFloat(f[col], 64); err != nil || math.IsNaN(*dst) || math.IsInf(*dst, 0) {
				return nil, bad("column "+strconv.Itoa(col+1), cmp.Or(err, fmt.Errorf("%v is not finite", *dst)))
			}
		}
		if a.Samples < 2 || a.Distinct > a.Samples {
			return nil, bad("columns 9 and 10", fmt.Errorf("%d distinct of %d samples", a.Distinct, a.Samples))
		}
		for j, sp := range a.Splits {
			c := len(auditColumns) + 3*j
			if sp.Mass < 0 || sp.Mass > 1+1e-6 {
				return nil, bad("column "+strconv.Itoa(c+2), fmt.Errorf("mass %v outside [0, 1]", sp.Mass))
			}
			if sp.Hits > a.Samples {
				return nil, bad("column "+strconv.Itoa(c+3), fmt.Errorf("%d hits of %d samples", sp.Hits, a.Samples))
			}
		}
		if len(f) == want {
			if a.Relations, err = readRelationFit(f[legacy:]); err != nil {
				return nil, bad("relation columns", err)
			}
		}
		if err := checkRunID(f[6]); err != nil {
			return nil, bad("run", err)
		}
		run, ok, err := lookup(f[6])
		if err != nil {
			return nil, err
		}
		if ok {
			rows = append(rows, AuditRow{Run: run, SampledAt: f[7], Audit: a})
		}
	}
	return rows, nil
}

// readRelationFit parses the cells of auditRelationColumns: all empty is
// nil (an audit that did not weigh the relations).
func readRelationFit(cells []string) (*RelationFit, error) {
	if strings.Join(cells, "") == "" {
		return nil, nil
	}
	rf := &RelationFit{}
	for j, dst := range []*float64{&rf.TV, &rf.TestLL, &rf.TestLLTrain} {
		v, err := strconv.ParseFloat(cells[j], 64)
		switch {
		case err != nil:
		case j == 0 && !(v >= 0 && v <= 1+1e-9):
			err = fmt.Errorf("total variation %v outside [0, 1]", v)
		case j > 0 && !(v <= 1e-9):
			err = fmt.Errorf("%v is no mean log-probability", v)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", auditRelationColumns[j], err)
		}
		*dst = v
	}
	return rf, nil
}
