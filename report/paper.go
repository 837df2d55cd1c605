package report

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/stat"
)

// referenceColumns are the columns of a reference table. rank is the
// embedding size d the values were measured at. Every metric is a fraction
// (MRR, Hits@k) or nats per triple (LL), as in results.tsv; the _pm columns
// hold the ± the source prints beside the value; minutes is the average
// training time the source reports.
var referenceColumns = []string{"dataset", "model", "objective", "rank",
	"mrr", "mrr_pm", "hits@1", "hits@3", "hits@10", "ll", "ll_pm", "minutes"}

// Reference is a published table of results to compare a sweep with: one
// row per dataset, model and objective (see ReadReference).
type Reference struct {
	Path string
	Rows []ReferenceRow
}

// ReferenceRow is one row of a Reference. Values holds the metrics the
// source reports for the row, by column name (mrr, mrr_pm, hits@1, hits@3,
// hits@10, ll, ll_pm); a metric it does not report is absent.
type ReferenceRow struct {
	Line                      int // in the file, for messages
	Dataset, Model, Objective string
	Rank                      int // the embedding size of the values; 0 when the source does not say
	Values                    map[string]float64
	Causes                    map[string]Cause // by metric (mrr, ll): why gekc's result misses this row's value, from the causes file
}

// admits reports whether a run of the dataset at rank d (as results.tsv
// writes it) is comparable with the row.
func (r ReferenceRow) admits(dataset, rank string) bool {
	return r.Dataset == dataset && (r.Rank == 0 || strconv.Itoa(r.Rank) == rank)
}

// Covers reports whether some run of t could fill a row of the
// reference: one of a dataset and rank it has values for, unconstrained and
// selected on the validation MRR, as CompareMarkdown picks them. Only then
// is a comparison worth writing: a sweep selected on another metric (the
// LL checks) would give a table of empty rows.
func (ref *Reference) Covers(t *Table) bool {
	for _, row := range t.Rows {
		if !comparable(row["constraints"], row["select"]) || row["synthetic"] == "yes" || testedElsewhere(strings.Split(row["settings"], SettingsSeparator)) {
			continue
		}
		for _, r := range ref.Rows {
			if r.admits(row["dataset"], row["rank"]) {
				return true
			}
		}
	}
	return false
}

// comparable reports whether a configuration with these constraints and
// selection metric can stand for a reference row: unconstrained and
// selected on the validation MRR.
func comparable(constraints, sel string) bool {
	return (constraints == "none" || constraints == "") && sel == "mrr"
}

// ReadReference reads a reference table from a tab-separated file whose
// header names the columns dataset, model, objective, rank, mrr, mrr_pm,
// hits@1, hits@3, hits@10, ll, ll_pm and minutes (in any order; all but the first
// three may be left out). Lines starting with # are comments; an empty cell or "-"
// means the source reports no value. Errors name the file and line.
//
// The causes file beside it (CausesPath), when there is one, gives rows the
// investigated causes of gekc's misses (Reference.AddCauses).
func ReadReference(path string) (*Reference, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	ref, err := ParseReference(path, data)
	if err != nil {
		return nil, err
	}
	if err := ref.readCauses(); err != nil {
		return nil, err
	}
	return ref, nil
}

// ParseReference parses a reference table (see ReadReference) from data.
// Every problem found is reported, each with its line.
func ParseReference(path string, data []byte) (*Reference, error) {
	ref := &Reference{Path: path}
	var (
		header []string
		errs   []error
		seen   = map[string]int{}
	)
	for n, fields := range CommentedTSVRecords(data) {
		if header == nil {
			header = fields
			for i, h := range header {
				if !slices.Contains(referenceColumns, h) {
					errs = append(errs, fmt.Errorf("%s:%d: unknown column %q; want %s", path, n, h, strings.Join(referenceColumns, ", ")))
				}
				if slices.Index(header, h) < i {
					errs = append(errs, fmt.Errorf("%s:%d: column %q appears twice", path, n, h))
				}
			}
			for _, h := range referenceColumns[:3] {
				if !slices.Contains(header, h) {
					errs = append(errs, fmt.Errorf("%s:%d: the header has no %q column", path, n, h))
				}
			}
			if len(errs) > 0 {
				return nil, errors.Join(errs...)
			}
			continue
		}
		if len(fields) != len(header) {
			errs = append(errs, fmt.Errorf("%s:%d: %d fields, the header has %d", path, n, len(fields), len(header)))
			continue
		}
		row := ReferenceRow{Line: n, Values: map[string]float64{}}
		for j, h := range header {
			cell := strings.TrimSpace(fields[j])
			switch h {
			case "dataset":
				row.Dataset = cell
			case "model":
				row.Model = cell
			case "objective":
				row.Objective = cell
			case "rank":
				if cell == "" || cell == "-" {
					continue
				}
				d, err := strconv.Atoi(cell)
				if err != nil || d <= 0 {
					errs = append(errs, fmt.Errorf("%s:%d: column rank: %q is not a positive integer", path, n, cell))
					continue
				}
				row.Rank = d
			default:
				if cell == "" || cell == "-" {
					continue
				}
				x, err := strconv.ParseFloat(cell, 64)
				if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
					errs = append(errs, fmt.Errorf("%s:%d: column %s: %q is not a finite number", path, n, h, cell))
					continue
				}
				if msg := referenceRange(h, x); msg != "" {
					errs = append(errs, fmt.Errorf("%s:%d: column %s: %v %s", path, n, h, x, msg))
					continue
				}
				row.Values[h] = x
			}
		}
		if row.Dataset == "" || row.Model == "" || row.Objective == "" {
			errs = append(errs, fmt.Errorf("%s:%d: dataset, model and objective must not be empty", path, n))
			continue
		}
		key := row.Dataset + "\x00" + row.Model + "\x00" + row.Objective
		if first, ok := seen[key]; ok {
			errs = append(errs, fmt.Errorf("%s:%d: %s %s %s is already on line %d", path, n, row.Dataset, row.Model, row.Objective, first))
			continue
		}
		seen[key] = n
		ref.Rows = append(ref.Rows, row)
	}
	if header == nil {
		errs = append(errs, fmt.Errorf("%s: no header line", path))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return ref, nil
}

// referenceRange says what is wrong with a metric value out of its range
// ("" if nothing): ranking metrics are fractions, so a Hits@k copied in
// percent is caught, and a log-likelihood is at most 0.
func referenceRange(col string, x float64) string {
	switch col {
	case "mrr", "hits@1", "hits@3", "hits@10":
		if x < 0 || x > 1 {
			return "is not a fraction in [0, 1] (write Hits@k 24.5% as 0.245)"
		}
	case "ll":
		if x > 0 {
			return "is positive; an average log-likelihood is at most 0"
		}
	case "mrr_pm", "ll_pm", "minutes":
		if x < 0 {
			return "is negative"
		}
	}
	return ""
}

// Tolerance is how far a result may be from its reference value and still
// count as reproducing it.
type Tolerance struct {
	MRR float64 // absolute, on the test MRR
	LL  float64 // nats per triple, on the test log-likelihood
}

// DefaultTolerance is 0.01 MRR and 0.3 nats.
var DefaultTolerance = Tolerance{MRR: 0.01, LL: 0.3}

// CompareMarkdown renders, for each dataset of t that the reference has, a
// table setting the sweep's results beside the reference's, one row per
// reference row of that dataset, in the reference's order. The sweep's row
// is the best of the configurations of that dataset, model, objective and
// rank (unconstrained, selected on the validation MRR, trained on real data
// and tested on its own test split: those selected on another metric, runs
// on a synthetic data set of the same name, column synthetic, and runs
// tested elsewhere, eval.test_on in column settings, are left out), chosen as results.md chooses, on the
// mean validation score, with its test metrics as mean ± sample std over
// its finished seeds. Its log-likelihood is the test LL at the best validation LL
// (ll_at_best_ll), the reference protocol of the paper; a configuration
// whose runs predate that record shows the LL of its MRR-selected epoch,
// marked. A row no finished run answers says so.
func CompareMarkdown(t *Table, ref *Reference, tol Tolerance) ([]byte, error) {
	configs := summariseConfigs(t)
	var datasets []string
	for _, c := range configs {
		if !slices.Contains(datasets, c.dataset) {
			datasets = append(datasets, c.dataset)
		}
	}
	if !ref.Covers(t) {
		return nil, fmt.Errorf("%s has no values for the datasets at the embedding sizes of these results (%s), "+
			"or none of their unconstrained runs is selected on the validation MRR",
			ref.Path, strings.Join(datasets, ", "))
	}
	var b bytes.Buffer
	b.WriteString("# Results against the reference\n\n")
	fmt.Fprintf(&b, "Reference: `%s`. Each gekc row is the best configuration (on the mean validation MRR) "+
		"of its model and objective; test metrics are mean ± two sample standard deviations over its n finished seeds, "+
		"as the paper prints them (its ± is two standard deviations over 5 seeds). "+
		"Bold marks, as the paper's tables do, the best mean of each model family (CP, CP+, CP²; ComplEx, ComplEx+, ComplEx²) "+
		"over both objectives, and every row a one-sided Mann–Whitney U test at 99%% over seeds does not put below it, "+
		"where the seeds are enough for the test to decide (³); "+
		"\"vs best\" gives that test's exact p. \"minutes\" is the mean wall time of a run (training, validation and test) "+
		"on the hosts that trained it (their Sgemm rate is given under each table); the reference's is the paper's training time on a GPU "+
		"(GTX 1060 for FB15k-237 and WN18RR, RTX A6000 for ogbl-biokg), and \"× ref\" their ratio. "+
		"LL is the test log-likelihood at the epoch of the best validation log-likelihood. "+
		"\"batches\" lists every batch size that finished for the row, the selected one first. "+
		"A row matches when its MRR is within %g and its LL within %g nats of the reference's.\n",
		filepath.Base(ref.Path), tol.MRR, tol.LL)
	if slices.ContainsFunc(ref.Rows, func(r ReferenceRow) bool { return len(r.Causes) > 0 && slices.Contains(datasets, r.Dataset) }) {
		fmt.Fprintf(&b, "Notes from ⁵ on give the investigated cause of a miss, from `%s`.\n", filepath.Base(CausesPath(ref.Path)))
	}
	for _, ds := range datasets {
		var rows []ReferenceRow
		for _, r := range ref.Rows {
			if r.Dataset == ds {
				rows = append(rows, r)
			}
		}
		if len(rows) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n## %s\n\n", ds)
		if err := writeComparison(&b, configs, rows, tol); err != nil {
			return nil, err
		}
	}
	return b.Bytes(), nil
}

// significance is the level of the paper's one-sided Mann–Whitney U
// test: a row is marked best unless the test puts it below its group's
// best at 99%.
const significance = 0.01

// rowResult is what writeComparison found for one reference row.
type rowResult struct {
	ref     ReferenceRow
	pick    *configSummary // nil: no finished run answers the row
	group   []*configSummary
	lls     []float64 // test LLs at the best validation LL (or, noted, of the MRR-selected epoch)
	llNote  string
	bestMRR string // the "vs best" cells
	bestLL  string
	boldMRR bool
	boldLL  bool
}

func writeComparison(b *bytes.Buffer, configs []*configSummary, rows []ReferenceRow, tol Tolerance) error {
	header := []string{"model", "objective", "d", "batches", "lr", "n",
		"MRR", "ref MRR", "Δ MRR", "vs best MRR", "Hits@1 / 3 / 10", "ref Hits@1 / 3 / 10",
		"LL", "ref LL", "Δ LL", "vs best LL", "minutes", "ref minutes", "× ref", "matches"}
	notes := map[int]bool{}
	results := make([]*rowResult, len(rows))
	for i, r := range rows {
		res := &rowResult{ref: r}
		results[i] = res
		for _, c := range configs {
			if r.admits(c.dataset, c.rank) && c.model == r.Model && c.objective == r.Objective &&
				comparable(c.constraints, c.sel) && !c.synthetic && !testedElsewhere(c.settings) {
				res.group = append(res.group, c)
			}
		}
		for _, c := range res.group {
			if c.eligible() && (res.pick == nil || c.score > res.pick.score) {
				res.pick = c
			}
		}
		if res.pick == nil {
			continue
		}
		// The paper's LL is that of the best validation LL. Runs that
		// predate that record show the LL of their MRR-selected epoch,
		// which is not judged against the reference nor tested.
		res.lls = res.pick.test["ll_at_best_ll"]
		switch {
		case len(res.lls) == 0 && len(res.pick.test["ll"]) > 0:
			res.lls, res.llNote = res.pick.test["ll"], " ¹"
			notes[1] = true
		case len(res.lls) > 0 && len(res.lls) < res.pick.finished:
			res.llNote = fmt.Sprintf(" ² (%d of %d)", len(res.lls), res.pick.finished)
			notes[2] = true
		}
	}
	if markBest(results, func(r *rowResult) []float64 { return r.pick.test["mrr"] },
		func(r *rowResult, cell string, bold bool) { r.bestMRR, r.boldMRR = cell, bold }) {
		notes[3] = true
	}
	if markBest(results, func(r *rowResult) []float64 {
		if r.llNote == " ¹" {
			return nil
		}
		return r.lls
	}, func(r *rowResult, cell string, bold bool) { r.bestLL, r.boldLL = cell, bold }) {
		notes[3] = true
	}

	var cells [][]string
	var sgemm []float64
	var causes, stale []string // the causes footnoted, in order; causes of rows that match
	for _, res := range results {
		r := res.ref
		refHits := hitsTriple(r.Values)
		row := []string{displayModel(r.Model), strings.ToUpper(r.Objective)}
		refMinutes := refValue(r.Values, "minutes", 0)
		if res.pick == nil {
			none := "no finished run"
			if r.Rank > 0 {
				none += fmt.Sprintf(" at d = %d", r.Rank)
			}
			row = append(row, "–", "–", "–", "0", "–", refValue(r.Values, "mrr", 3), "–", "–", "–", refHits,
				"–", refValue(r.Values, "ll", 3), "–", "–", "–", refMinutes, "–", none)
			cells = append(cells, row)
			continue
		}
		pick := res.pick
		sgemm = append(sgemm, pick.sgemm...)
		batches := []string{pick.batch}
		for _, c := range res.group {
			if c.finished > 0 && !slices.Contains(batches, c.batch) {
				batches = append(batches, c.batch)
			}
		}
		ll := formatCellStd("ll", res.lls, 2) + res.llNote
		mrr, hasMRR := mean(pick.test["mrr"])
		dMRR, matchMRR := delta(mrr, hasMRR, r.Values, "mrr", tol.MRR, 3)
		llMean, hasLL := mean(res.lls)
		dLL, matchLL := delta(llMean, hasLL, r.Values, "ll", tol.LL, 2)
		if res.llNote == " ¹" {
			dLL, matchLL = "–", ""
		}
		verdict := "yes"
		if _, refLL := r.Values["ll"]; refLL && matchLL == "" && matchMRR != "" {
			verdict = "yes (MRR only)"
		}
		switch {
		case matchMRR == "" && matchLL == "":
			verdict = "–"
		case matchMRR == "no" || matchLL == "no":
			var off []string
			if matchMRR == "no" {
				off = append(off, "MRR")
			}
			if matchLL == "no" {
				off = append(off, "LL")
			}
			verdict = "**no** (" + strings.Join(off, ", ") + ")"
		}
		for _, m := range []struct{ metric, match string }{{"mrr", matchMRR}, {"ll", matchLL}} {
			c, ok := r.Causes[m.metric]
			switch {
			case !ok:
			case m.match == "no":
				i := slices.Index(causes, c.Text)
				if i < 0 {
					i = len(causes)
					causes = append(causes, c.Text)
				}
				if mark := " " + superscript(firstCauseNote+i); !strings.Contains(verdict, mark) {
					verdict += mark
				}
			case m.match == "yes":
				stale = append(stale, fmt.Sprintf("%s %s %s (%s:%d)", r.Model, r.Objective, strings.ToUpper(m.metric), filepath.Base(c.Path), c.Line))
			}
		}
		mrrCell := formatCellStd("mrr", pick.test["mrr"], 2)
		if res.boldMRR {
			mrrCell = "**" + mrrCell + "**"
		}
		if res.boldLL && ll != "–" {
			ll = "**" + strings.TrimSuffix(ll, res.llNote) + "**" + res.llNote
		}
		minutes, ratio := "–", "–"
		if m, ok := mean(pick.wall); ok {
			prec := 0
			if m < 600 {
				prec = 1
			}
			minutes = strconv.FormatFloat(m/60, 'f', prec, 64)
			if ref, ok := r.Values["minutes"]; ok && ref > 0 {
				ratio = strconv.FormatFloat(m/60/ref, 'f', 1, 64)
			}
		}
		n := strconv.Itoa(pick.finished)
		if nan := pick.nanSummary(); nan != "" {
			n += " ⁴ (" + nan + ")"
			notes[4] = true
		}
		row = append(row, pick.rank, strings.Join(batches, ", "), pick.lr, n,
			mrrCell, refValue(r.Values, "mrr", 3), dMRR, orDash(res.bestMRR),
			hitsCell(pick.test), refHits, ll, refValue(r.Values, "ll", 3), dLL, orDash(res.bestLL),
			minutes, refMinutes, ratio, verdict)
		cells = append(cells, row)
	}
	for _, row := range cells {
		for i := range row {
			row[i] = strings.ReplaceAll(row[i], "|", `\|`) // e.g. in a model name
		}
	}
	if err := MarkdownTable(b, header, cells); err != nil {
		return fmt.Errorf("rendering the comparison table: %w", err)
	}
	b.WriteString("\n")
	if len(sgemm) > 0 {
		lo, hi := strconv.FormatFloat(slices.Min(sgemm), 'f', 0, 64), strconv.FormatFloat(slices.Max(sgemm), 'f', 0, 64)
		rate := lo + "–" + hi
		if lo == hi {
			rate = lo
		}
		runs := "runs"
		if len(sgemm) == 1 {
			runs = "run"
		}
		fmt.Fprintf(b, "Hosts of these rows' runs: float32 Sgemm %s GFLOP/s with each run's BLAS threads (%d %s recorded it).  \n", rate, len(sgemm), runs)
	} else {
		b.WriteString("Hosts of these rows' runs: no run recorded the host's Sgemm rate (runs before gekc measured it).  \n")
	}
	if notes[1] {
		b.WriteString("¹ The test LL of the MRR-selected epoch, not judged: these runs started before gekc recorded the LL at the best validation LL.  \n")
	}
	if notes[2] {
		b.WriteString("² Over the seeds that recorded the LL at the best validation LL; the others started before gekc did.  \n")
	}
	if notes[3] {
		b.WriteString("³ With these seeds no difference can reach 99%: the smallest one-sided p their values allow is above 0.01 " +
			"(without ties 1/C(n₁+n₂, n₁): 1 and 1 seeds give 0.5, 3 and 3 give 0.05, 5 and 4 give 0.008; tied values raise it). " +
			"The test cannot decide, and the row is left unmarked rather than marked for want of evidence.  \n")
	}
	if notes[4] {
		b.WriteString("⁴ Finished seeds whose test metric is NaN, by metric; each mean leaves them out.  \n")
	}
	for i, c := range causes {
		fmt.Fprintf(b, "%s %s  \n", superscript(firstCauseNote+i), c)
	}
	if len(stale) > 0 {
		fmt.Fprintf(b, "Causes given for rows that now match, to be removed: %s.  \n", strings.Join(stale, ", "))
	}
	return nil
}

// firstCauseNote is the number of the first footnote that gives a miss's
// cause (Reference.AddCauses), after the table's fixed notes ¹ to ⁴.
const firstCauseNote = 5

// markBest marks, within each model family (CP, CP+ and CP² are one;
// ComplEx's are another) across both objectives, as the paper's tables
// bold them, the row with the best mean of values and every row that a
// one-sided Mann–Whitney U test at 99% (best > row, over seeds) does not
// put below it. A row whose seeds and the best's are too few for any
// difference to reach 99% is not marked: the paper, with 5 seeds
// everywhere, never met that case, and marking it would claim a tie no
// evidence shows; the smallest p its values allow (MinUpperTail, which
// counts ties) decides that. set receives each row's "vs best" cell and
// whether it is marked. It reports whether some row could not be tested
// for want of seeds.
func markBest(results []*rowResult, values func(*rowResult) []float64, set func(*rowResult, string, bool)) bool {
	families := map[string][]*rowResult{}
	var order []string
	for _, r := range results {
		if r.pick == nil || len(values(r)) == 0 {
			continue
		}
		f := family(r.ref.Model)
		if _, ok := families[f]; !ok {
			order = append(order, f)
		}
		families[f] = append(families[f], r)
	}
	untestable := false
	for _, f := range order {
		group := families[f]
		// Rows sharing the best mean are all best; the others are tested
		// against the one of them with the most seeds (the first on a tie).
		meanOf := func(r *rowResult) float64 { m, _ := mean(values(r)); return m }
		bestMean := math.Inf(-1)
		for _, r := range group {
			bestMean = max(bestMean, meanOf(r))
		}
		var best *rowResult
		for _, r := range group {
			if meanOf(r) == bestMean && (best == nil || len(values(r)) > len(values(best))) {
				best = r
			}
		}
		for _, r := range group {
			if meanOf(r) == bestMean {
				set(r, "best", true)
				continue
			}
			x, y := values(best), values(r)
			_, p, err := MannWhitneyGreater(x, y)
			reachable, errMin := MinUpperTail(x, y)
			switch {
			case err != nil || errMin != nil:
				set(r, "–", false)
			case reachable > significance:
				set(r, fmt.Sprintf("n too small ³ (p = %.2f)", p), false)
				untestable = true
			case p <= significance:
				set(r, fmt.Sprintf("below (p = %.3f)", p), false)
			default:
				set(r, fmt.Sprintf("p = %.2f", p), true)
			}
		}
	}
	return untestable
}

// testedElsewhere reports whether a run's settings (column settings) test
// it on another data set's test split (eval.test_on): its test metrics are
// not those of the data set it names.
func testedElsewhere(settings []string) bool { return testedOn(settings) != "" }

// family is a model's score function: cp for cp, cp+ and cp2.
func family(model string) string {
	return strings.TrimSuffix(strings.TrimSuffix(model, "+"), "2")
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

// displayModel names a model as the paper does: cp2 is CP², complex+ is
// ComplEx+.
func displayModel(m string) string {
	base, suffix := m, ""
	switch {
	case strings.HasSuffix(m, "2"):
		base, suffix = strings.TrimSuffix(m, "2"), "²"
	case strings.HasSuffix(m, "+"):
		base, suffix = strings.TrimSuffix(m, "+"), "+"
	}
	names := map[string]string{"cp": "CP", "complex": "ComplEx", "distmult": "DistMult", "rescal": "RESCAL", "tucker": "TuckER"}
	if n, ok := names[base]; ok {
		return n + suffix
	}
	return m
}

func mean(xs []float64) (float64, bool) {
	if len(xs) == 0 {
		return 0, false
	}
	return stat.Mean(xs, nil), true
}

// delta formats x minus the reference's metric, and says whether it is
// within tol ("yes", "no", or "" when either value is missing).
func delta(x float64, ok bool, ref map[string]float64, metric string, tol float64, prec int) (string, string) {
	y, has := ref[metric]
	if !ok || !has {
		return "–", ""
	}
	d := x - y
	s := strconv.FormatFloat(d, 'f', prec, 64)
	switch {
	case strings.Trim(s, "-0.") == "":
		s = strings.TrimPrefix(s, "-") // no sign on a difference that rounds to 0
	case !strings.HasPrefix(s, "-"):
		s = "+" + s
	}
	// Judged on the printed difference, so that "+0.010" never reads as a
	// miss; the margin absorbs float rounding at exactly tol.
	shown, _ := strconv.ParseFloat(strings.TrimPrefix(s, "+"), 64)
	if math.Abs(shown) <= tol+1e-9 {
		return s, "yes"
	}
	return s, "no"
}

func refValue(v map[string]float64, metric string, prec int) string {
	x, ok := v[metric]
	if !ok {
		return "–"
	}
	s := strconv.FormatFloat(x, 'f', prec, 64)
	if pm, ok := v[metric+"_pm"]; ok {
		s += " ± " + strconv.FormatFloat(pm, 'f', prec, 64)
	}
	return s
}

// hitsTriple formats a reference's Hits@1/3/10 in percent.
func hitsTriple(v map[string]float64) string {
	var parts []string
	for _, k := range []string{"hits@1", "hits@3", "hits@10"} {
		x, ok := v[k]
		if !ok {
			return "–"
		}
		parts = append(parts, strconv.FormatFloat(100*x, 'f', 1, 64))
	}
	return strings.Join(parts, " / ")
}

// hitsCell formats a configuration's mean test Hits@1/3/10 in percent.
func hitsCell(test map[string][]float64) string {
	v := map[string]float64{}
	for _, k := range []string{"hits@1", "hits@3", "hits@10"} {
		if x, ok := mean(test[k]); ok {
			v[k] = x
		}
	}
	return hitsTriple(v)
}
