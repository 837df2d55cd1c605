package metrics

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gekc/kg"
)

// Calibration (paper, appendix "Calibration Diagrams"): every triple is read
// as a Bernoulli variable whose probability of being true is obtained from
// the model's log-score, either by the logistic function or by min-max
// normalisation against the training triples' log-scores. Test triples are
// the true ones, and as many hard negatives (HardNegatives) the false ones.

// CalibrationBins is the number of uniform bins on [0, 1] of the paper's
// calibration diagrams and ECE.
const CalibrationBins = 10

// HardNegatives returns one challenging negative per test triple, following
// Socher et al. (2013) as the paper does: for (s, r, o) it is (s, r, o′),
// with o′ drawn uniformly among the entities seen at least once as an object
// of r in train, such that (s, r, o′) is not known to filter (which should
// hold train, valid and test).
//
// A test triple none of whose candidates is unknown (every object of r in
// train is a known object of (s, r), or r has no training triple) gets no
// negative and is skipped, so len(test) − len(result) triples were skipped;
// the result keeps the order of the test triples it comes from. The draws
// depend only on rng, test, train and filter.
func HardNegatives(test, train []kg.Triple, filter *kg.Filter, rng *rand.Rand) []kg.Triple {
	objects := objectsByRelation(train)
	out := make([]kg.Triple, 0, len(test))
	for _, t := range test {
		if t.R < 0 || int(t.R) >= len(objects) || len(objects[t.R]) == 0 {
			continue
		}
		cand := objects[t.R]
		// Rejection first: most (s, r) pairs have few known objects among
		// many candidates, so a handful of draws is far cheaper than
		// enumerating the candidates. A draw accepted after rejections is
		// uniform over the unknown candidates, as is the exact fallback, so
		// the mixture is too.
		found := false
		for try := 0; try < 16; try++ {
			n := t
			n.O = cand[rng.IntN(len(cand))]
			if !filter.Contains(n) {
				out, found = append(out, n), true
				break
			}
		}
		if found {
			continue
		}
		known := filter.Objects(t.S, t.R)
		free := unknownCount(cand, known)
		if free == 0 {
			continue
		}
		if o, ok := nthUnknown(cand, known, rng.IntN(free)); ok {
			n := t
			n.O = o
			out = append(out, n)
		}
	}
	return out
}

// objectsByRelation returns, indexed by relation, the sorted distinct
// objects of each relation in ts.
func objectsByRelation(ts []kg.Triple) [][]int32 {
	var out [][]int32
	for _, t := range ts {
		if t.R < 0 || t.O < 0 {
			continue
		}
		for int(t.R) >= len(out) {
			out = append(out, nil)
		}
		out[t.R] = append(out[t.R], t.O)
	}
	for r := range out {
		slices.Sort(out[r])
		out[r] = slices.Compact(out[r])
	}
	return out
}

// unknownCount returns |cand \ known|; both are sorted without repeats.
func unknownCount(cand, known []int32) int {
	n := len(cand)
	i, j := 0, 0
	for i < len(cand) && j < len(known) {
		switch {
		case cand[i] < known[j]:
			i++
		case cand[i] > known[j]:
			j++
		default:
			n--
			i++
			j++
		}
	}
	return n
}

// nthUnknown returns the k-th (0-based) element of cand \ known; false if
// there are not that many.
func nthUnknown(cand, known []int32, k int) (int32, bool) {
	j := 0
	for _, c := range cand {
		for j < len(known) && known[j] < c {
			j++
		}
		if j < len(known) && known[j] == c {
			continue
		}
		if k == 0 {
			return c, true
		}
		k--
	}
	return 0, false
}

// Logistic returns σ(x) for each log-score x: the paper's first reading of
// a score as a probability. For an energy-based model the log-score is the
// raw score φ (p ∝ exp φ), the usual KGE logit; for a GeKC it is log φ_pc.
func Logistic(logScores []float64) []float64 {
	out := make([]float64, len(logScores))
	for i, x := range logScores {
		// exp of a large positive x overflows to +Inf, giving 1/(1+Inf) = 0
		// in the other form; choosing the form by sign keeps both tails exact.
		if x >= 0 {
			out[i] = 1 / (1 + math.Exp(-x))
		} else {
			e := math.Exp(x)
			out[i] = e / (1 + e)
		}
	}
	return out
}

// MinMax returns (x − lo)/(hi − lo) clipped to [0, 1] for each log-score x:
// the paper's second reading, with lo and hi the extreme log-scores of the
// training triples (LogScoreRange). Clipping is needed because test
// triples and negatives may score outside the training range. NaN stays
// NaN. It fails unless lo < hi, both finite.
func MinMax(logScores []float64, lo, hi float64) ([]float64, error) {
	if !(lo < hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return nil, fmt.Errorf("metrics.MinMax: need finite lo < hi, got [%g, %g]", lo, hi)
	}
	out := make([]float64, len(logScores))
	for i, x := range logScores {
		out[i] = min(max((x-lo)/(hi-lo), 0), 1)
		if math.IsNaN(x) {
			out[i] = math.NaN() // min and max would hide it
		}
	}
	return out, nil
}

// LogScoreRange returns the least and greatest finite values of xs. A
// constrained model gives −∞ to the triples its domain rules out, and those
// would make every other triple's min-max probability 1; they are left out.
func LogScoreRange(xs []float64) (lo, hi float64, err error) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			continue
		}
		lo, hi = min(lo, x), max(hi, x)
	}
	if lo > hi {
		return 0, 0, errors.New("metrics.LogScoreRange: no finite log-score")
	}
	return lo, hi, nil
}

// A CalibrationBin is one bin of a reliability diagram.
type CalibrationBin struct {
	Lo, Hi    float64 // the bin holds probabilities p with Lo ≤ p < Hi; the last bin also p = 1
	Count     int     // triples in the bin
	MeanProb  float64 // p_j, the mean probability of those triples; NaN when Count is 0
	Frequency float64 // f_j, the fraction of them that are true; NaN when Count is 0
}

// Reliability is the empirical calibration error of a set of probabilities
// and the bins it is computed from.
type Reliability struct {
	ECE  float64
	Bins []CalibrationBin
}

// ECE returns the empirical calibration error of probabilities probs of
// triples whose truth is given by labels, with bins uniform bins on [0, 1]:
//
//	ECE = (1/b′) Σ_j |p_j − f_j|
//
// over the b′ non-empty bins j, p_j being the mean probability and f_j the
// fraction of true triples in bin j. The paper writes 1/b over all b bins,
// but p_j and f_j are undefined for an empty bin; averaging over non-empty
// bins is the reading that keeps ECE in [0, 1].
//
// Bin j holds the p with j/b ≤ p < (j+1)/b (in floating point), and p = 1
// goes in the last bin. It fails on a probability outside [0, 1] or NaN,
// on lengths that differ, on no probabilities, and on bins < 1.
func ECE(probs []float64, labels []bool, bins int) (Reliability, error) {
	switch {
	case bins < 1:
		return Reliability{}, fmt.Errorf("metrics.ECE: %d bins", bins)
	case len(probs) != len(labels):
		return Reliability{}, fmt.Errorf("metrics.ECE: %d probabilities but %d labels", len(probs), len(labels))
	case len(probs) == 0:
		return Reliability{}, errors.New("metrics.ECE: no probabilities")
	}
	sumP := make([]float64, bins)
	pos := make([]int, bins)
	count := make([]int, bins)
	for i, p := range probs {
		if !(p >= 0 && p <= 1) {
			return Reliability{}, fmt.Errorf("metrics.ECE: probability %d is %g, not in [0, 1]", i, p)
		}
		j := min(int(p*float64(bins)), bins-1)
		count[j]++
		sumP[j] += p
		if labels[i] {
			pos[j]++
		}
	}
	r := Reliability{Bins: make([]CalibrationBin, bins)}
	nonEmpty := 0
	for j := range r.Bins {
		b := CalibrationBin{Lo: float64(j) / float64(bins), Hi: float64(j+1) / float64(bins), Count: count[j],
			MeanProb: math.NaN(), Frequency: math.NaN()}
		if count[j] > 0 {
			b.MeanProb = sumP[j] / float64(count[j])
			b.Frequency = float64(pos[j]) / float64(count[j])
			r.ECE += math.Abs(b.MeanProb - b.Frequency)
			nonEmpty++
		}
		r.Bins[j] = b
	}
	r.ECE /= float64(nonEmpty)
	return r, nil
}

// Calibration holds a model's calibration on true triples and hard
// negatives under both of the paper's probability mappings.
type Calibration struct {
	Logistic Reliability // p = σ(log-score)
	MinMax   Reliability // p = min-max normalised log-score, clipped to [0, 1]
	// TrainMin and TrainMax are the range of the finite training
	// log-scores that MinMax normalises by.
	TrainMin, TrainMax float64
	Positives          int // true triples (test), NaN log-scores excluded
	Negatives          int // hard negatives, NaN log-scores excluded
	// NaN counts the triples left out because their log-score is NaN,
	// which only a numerically broken model produces.
	NaN int
}

// Calibration scores positives (true triples, typically the test split),
// negatives (false ones, typically HardNegatives of the positives) and
// train (whose log-scores set the min-max range) and returns the ECE and
// reliability bins of both mappings, with CalibrationBins bins.
//
// Log-scores are those of LogScores: log φ for a GeKC, the raw score φ for
// an energy-based model, −∞ for a triple a domain constraint rules out.
func (e *Evaluator) Calibration(positives, negatives, train []kg.Triple) (*Calibration, error) {
	if len(positives) == 0 || len(train) == 0 {
		return nil, fmt.Errorf("metrics.Calibration: %d true triples and %d training triples; need some of each", len(positives), len(train))
	}
	scores := func(ts []kg.Triple) ([]float64, error) {
		out := make([]float64, len(ts))
		err := e.LogScores(ts, func(i int, ls float64) { out[i] = ls })
		return out, err
	}
	trainLS, err := scores(train)
	if err != nil {
		return nil, err
	}
	lo, hi, err := LogScoreRange(trainLS)
	if err != nil {
		return nil, fmt.Errorf("metrics.Calibration: training triples: %w", err)
	}
	if lo == hi {
		return nil, fmt.Errorf("metrics.Calibration: every training triple has log-score %g, so min-max normalisation is undefined", lo)
	}
	c := &Calibration{TrainMin: lo, TrainMax: hi}
	var ls []float64
	var labels []bool
	for _, part := range []struct {
		ts    []kg.Triple
		label bool
		n     *int
	}{{positives, true, &c.Positives}, {negatives, false, &c.Negatives}} {
		s, err := scores(part.ts)
		if err != nil {
			return nil, err
		}
		for _, x := range s {
			if math.IsNaN(x) {
				c.NaN++
				continue
			}
			ls = append(ls, x)
			labels = append(labels, part.label)
			*part.n++
		}
	}
	if c.Positives == 0 {
		return nil, fmt.Errorf("metrics.Calibration: all %d true triples have a NaN log-score", len(positives))
	}
	if c.Logistic, err = ECE(Logistic(ls), labels, CalibrationBins); err != nil {
		return nil, err
	}
	mm, err := MinMax(ls, lo, hi)
	if err != nil {
		return nil, err
	}
	if c.MinMax, err = ECE(mm, labels, CalibrationBins); err != nil {
		return nil, err
	}
	return c, nil
}
