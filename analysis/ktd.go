package analysis

import (
	"bytes"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"

	"gekc/grid"
	"gekc/kg"
	"gekc/metrics"
	"gekc/nnmfaug"
	"gekc/report"

	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

const (
	// KTDDraws is how many draws the KTD is averaged over.
	KTDDraws = 100
	// KTDDrawSize is the triples per draw, as in the paper.
	KTDDrawSize = 1000
	// KTDTSVName and KTDMarkdownName are the tables of the KTD analysis,
	// written next to results.tsv.
	KTDTSVName      = "ktd.tsv"
	KTDMarkdownName = "ktd.md"
)

// KTDSize is the triples per draw: KTDDrawSize, fewer when the test split
// or the samples per model are fewer.
func KTDSize(tests, samples int) int { return min(KTDDrawSize, tests, samples) }

// KTDRow is one line of the KTD tables: a model's samples (Run names the
// run), or a baseline (Model "training set", "uniform" or NNMFAugName, no
// Objective or Run). Sampled says which of the run's parameters were
// sampled, e.g. "best valid LL, epoch 5" (the paper's) or "best valid MRR,
// epoch 17"; "" for baselines and for rows of tables from before it was
// recorded. LL, where HasLL, is the test log-likelihood (nats per
// triple) of the distribution the samples were drawn from, the number the
// paper's Tables 3 and 4 set beside the KTD: a run's at the parameters
// sampled, uniform's −log(|E|²|R|), NNMFAug's by the paper's code's formula
// (see NNMFAugReport); the training set has none. Across, for NNMFAug's
// row, is how many of the Tests test triples lie across its clusters,
// where its sampler's probability is zero and its own log-likelihood −∞;
// both are 0 for other rows and where a table did not record them.
type KTDRow struct {
	Dataset, Model, Objective, Run string
	Sampled                        string
	Stat                           metrics.KTDStat
	LL                             float64
	HasLL                          bool
	Across, Tests                  int
}

// UniformLL is the log-likelihood of any triple under the uniform
// distribution over all triples of e entities and r relations.
func UniformLL(e, r int) float64 { return -(2*math.Log(float64(e)) + math.Log(float64(r))) }

// KTD is the kernel triple distance of ts to the test triples, with
// features psi: KTDDraws draws of size triples from each, using rng.
func KTD(psi metrics.TripleFeatures, ts, test []kg.Triple, size int, rng *rand.Rand) (metrics.KTDStat, error) {
	return metrics.KTDDraws(psi, ts, test, size, KTDDraws, rng)
}

// KTDBaselines returns the rows of the two references every model is
// compared with: the training triples and samples uniform triples drawn
// with rng, each against the test triples of ds. On error the rows so far
// are returned with it.
func KTDBaselines(psi metrics.TripleFeatures, dataset string, ds *kg.Dataset, size, samples int, rng *rand.Rand) ([]KTDRow, error) {
	var rows []KTDRow
	baseline := func(name string, ts []kg.Triple) error {
		st, err := KTD(psi, ts, ds.Test, size, rng)
		rows = append(rows, KTDRow{Dataset: dataset, Model: name, Stat: st})
		return err
	}
	if err := baseline("training set", ds.Train); err != nil {
		return rows, err
	}
	e, r := ds.Entities.Len(), ds.Relations.Len()
	err := baseline("uniform", metrics.UniformTriples(samples, e, r, rng))
	u := &rows[len(rows)-1]
	u.LL, u.HasLL = UniformLL(e, r), true
	return rows, err
}

// NNMFAugName is the model name of the NNMFAug baseline's row.
const NNMFAugName = "NNMFAug"

// NNMFAugReport is the NNMFAug baseline of a data set: its KTD row and its
// test log-likelihood as the paper's code computes it (PaperLL: a triple
// across clusters scored as if within its subject's; Row.Across of the
// Row.Tests test triples lie across clusters, where the sampler's
// probability is zero).
type NNMFAugReport struct {
	Row     KTDRow
	PaperLL float64
	Model   *nnmfaug.Model
}

// NNMFAugBaseline fits NNMFAug (nnmfaug.DefaultOptions, the paper's code's
// settings; at most one cluster per entity) to ds's training triples and
// measures samples of it against the test triples, as KTDBaselines does
// for the training set and uniform triples.
func NNMFAugBaseline(psi metrics.TripleFeatures, dataset string, ds *kg.Dataset, size, samples int, rng *rand.Rand) (NNMFAugReport, error) {
	opt := nnmfaug.DefaultOptions()
	opt.Clusters = min(opt.Clusters, ds.Entities.Len())
	if len(ds.Test) == 0 {
		return NNMFAugReport{}, errors.New("NNMFAug: no test triples")
	}
	m, err := nnmfaug.Fit(ds.Train, ds.Entities.Len(), ds.Relations.Len(), opt)
	if err != nil {
		return NNMFAugReport{}, err
	}
	rep := NNMFAugReport{Model: m}
	across := 0
	for _, t := range ds.Test {
		rep.PaperLL += m.PaperLogProb(t)
		if m.Cluster[t.S] != m.Cluster[t.O] { // where LogProb is −∞
			across++
		}
	}
	rep.PaperLL /= float64(len(ds.Test))
	st, err := KTD(psi, m.Sample(samples, rng), ds.Test, size, rng)
	rep.Row = KTDRow{Dataset: dataset, Model: NNMFAugName, Stat: st, LL: rep.PaperLL, HasLL: true, Across: across, Tests: len(ds.Test)}
	return rep, err
}

// isBaseline says whether a KTD row's model names a baseline (no run).
func isBaseline(model string) bool {
	return model == "training set" || model == "uniform" || model == NNMFAugName
}

// KTDSetting is what makes two KTD rows comparable: the run whose product
// units give ψ, a digest of that run's parameters (a ψ retrained under the
// same ID is another ψ), the triples per draw and the samples per model.
// Digest is empty in tables written before it was recorded: their ψ is
// known by its run ID only.
type KTDSetting struct {
	Features          string
	Digest            string
	DrawSize, Samples int
}

// ktdColumns are ktd.tsv's columns; ktdDigestColumns those of files
// written before NNMFAug's count of test triples across clusters was,
// ktdLLColumns before ψ's digest was, ktdSampledColumns before the test log-likelihood
// was, ktdSettingColumns before the sampled parameters were, ktdOldColumns
// before the setting was recorded on every row.
var (
	ktdColumns        = []string{"dataset", "model", "objective", "run", "sampled", "ktd_mean", "ktd_std", "test_ll", "across_clusters", "test_triples", "draws", "features", "features_digest", "draw_size", "samples"}
	ktdDigestColumns  = []string{"dataset", "model", "objective", "run", "sampled", "ktd_mean", "ktd_std", "test_ll", "draws", "features", "features_digest", "draw_size", "samples"}
	ktdLLColumns      = []string{"dataset", "model", "objective", "run", "sampled", "ktd_mean", "ktd_std", "test_ll", "draws", "features", "draw_size", "samples"}
	ktdSampledColumns = []string{"dataset", "model", "objective", "run", "sampled", "ktd_mean", "ktd_std", "draws", "features", "draw_size", "samples"}
	ktdSettingColumns = []string{"dataset", "model", "objective", "run", "ktd_mean", "ktd_std", "draws", "features", "draw_size", "samples"}
	ktdOldColumns     = ktdSettingColumns[:7]
)

// ktdDigits and llDigits are the significant digits ktd.tsv keeps of a
// KTD and of a test log-likelihood (of about 20 nats: 6 would keep three
// decimals and a half).
const (
	ktdDigits = 6
	llDigits  = 9
)

// KTDTables renders the KTD rows as ktd.tsv (which ReadKTDTSV reads back)
// and ktd.md; ktd.md sets the reference's value beside each row where ref
// (which may be nil) has any for the rows' data sets.
func KTDTables(rows []KTDRow, set KTDSetting, ref *KTDReference) (tsv, md []byte, err error) {
	var t, m bytes.Buffer
	fmt.Fprintf(&t, "%s\n", strings.Join(ktdColumns, "\t"))
	var nnmf []KTDRow
	withRef := false
	for _, r := range rows {
		if r.HasLL && (math.IsNaN(r.LL) || r.LL > 0 || r.Model == "training set") {
			return nil, nil, fmt.Errorf("KTD row %s %s %s: test LL %v is not one of a distribution sampled", r.Model, r.Objective, r.Run, r.LL)
		}
		withRef = withRef || ref.covers(r.Dataset)
		if (r.Tests != 0 || r.Across != 0) && (r.Model != NNMFAugName || !r.HasLL || r.Across < 0 || r.Across > r.Tests) {
			return nil, nil, fmt.Errorf("KTD row %s %s %s: %d of %d test triples across clusters: only NNMFAug's row with its LL has such a count", r.Model, r.Objective, r.Run, r.Across, r.Tests)
		}
		ll, across, tests := "", "", ""
		if r.HasLL {
			ll = kept(r.LL, llDigits)
		}
		if r.Tests > 0 {
			across, tests = strconv.Itoa(r.Across), strconv.Itoa(r.Tests)
		}
		fmt.Fprintf(&t, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%d\t%d\n", r.Dataset, r.Model, r.Objective, r.Run, r.Sampled,
			kept(r.Stat.Mean, ktdDigits), kept(r.Stat.Std, ktdDigits), ll, across, tests, r.Stat.Draws, set.Features, set.Digest, set.DrawSize, set.Samples)
		if r.Model == NNMFAugName && r.HasLL { // its LL needs the footnote
			nnmf = append(nnmf, r)
		}
	}
	digest := ""
	if set.Digest != "" {
		digest = " (parameters " + set.Digest + ")"
	}
	fmt.Fprintf(&m, "# Kernel triple distance to the test triples\n\nψ: product units of `%s`%s; k(x,y) = (xᵀy+1)³; unbiased MMD² over %d draws of %d sampled and %d test triples (mean ± std); %d samples per model. Lower is better. "+
		"Beside it, as the paper's Tables 3 and 4 pair them, the test log-likelihood (nats per triple; higher is better) of the distribution sampled: a run's at the parameters sampled, uniform's −log(|E|²|R|).\n\n",
		set.Features, digest, KTDDraws, set.DrawSize, set.DrawSize, set.Samples)
	if withRef {
		m.WriteString("paper KTD: the paper's Table 3 (its appendix's extended table: mean ± one standard deviation over draws as these; GeKCs at d = 1000), measured with its ψ, the ComplEx of Chen et al. (2021): with another ψ only the order of the rows compares, not the values.\n\n")
	}
	var cells [][]string
	for _, r := range rows {
		ll := "–"
		if r.HasLL {
			ll = keptRounded(r.LL, llDigits)
			if r.Model == NNMFAugName {
				ll += " ¹"
			}
		}
		row := []string{r.Dataset, r.Model, r.Objective, keptRounded(r.Stat.Mean, ktdDigits) + " ± " + keptRounded(r.Stat.Std, ktdDigits)}
		if withRef {
			row = append(row, paperKTD(ref, r.Dataset, r.Model, r.Objective))
		}
		cells = append(cells, append(row, ll, r.Sampled, r.Run))
	}
	header := []string{"dataset", "model", "objective", "KTD", "test LL", "sampled at", "run"}
	if withRef {
		header = slices.Insert(header, 4, "paper KTD")
	}
	if err := report.MarkdownTable(&m, header, cells); err != nil {
		return nil, nil, err
	}
	if err := writeKTDSeeds(&m, rows, ref, withRef); err != nil {
		return nil, nil, err
	}
	if nnmf != nil {
		m.WriteString("\n¹ " + nnmfAugNote(nnmf) + "\n")
	}
	return t.Bytes(), m.Bytes(), nil
}

// nnmfAugNote is ktd.md's footnote to NNMFAug's test log-likelihood, rows
// its rows with one.
func nnmfAugNote(rows []KTDRow) string {
	var counts []string
	for _, r := range rows {
		if r.Tests == 0 {
			counts = nil // one row's count is unknown: name none rather than some
			break
		}
		counts = append(counts, grouped.Sprintf("%d of the %d test triples of %s", r.Across, r.Tests, r.Dataset))
	}
	note := "NNMFAug's as the paper's code computes it, which scores a test triple whose subject and object lie in different clusters as if both were in the subject's; its sampler gives such a triple probability zero, so its own test log-likelihood is −∞ wherever one is"
	if counts == nil {
		return note + " (this table did not record how many: the analysis that fitted it printed the count)."
	}
	return note + ", and " + strings.Join(counts, "; ") + " lie across its clusters."
}

// grouped prints integers with thousands separators, as the results'
// prose does (2,827).
var grouped = message.NewPrinter(language.English)

// writeKTDSeeds adds to ktd.md, where a configuration (grid.ConfigIDOf)
// has runs of more than one seed sampled alike (at the best validation
// MRR, or LL), a table of their mean KTD ± two sample standard deviations
// over the seeds, as paper.md states each row's spread, beside the
// paper's value. Runs of other settings never share a row.
func writeKTDSeeds(m *bytes.Buffer, rows []KTDRow, ref *KTDReference, withRef bool) error {
	type group struct {
		dataset, model, objective, config, sampled string
		ktd, ll                                    []float64
	}
	var groups []*group
	for _, r := range rows {
		if r.Run == "" {
			continue // a baseline
		}
		config, ok := grid.ConfigIDOf(r.Run)
		if !ok {
			config = r.Run // not a grid's ID: a group of its own
		}
		sampled, _, _ := strings.Cut(r.Sampled, ",") // "best valid LL, epoch 4": the protocol, not the epoch
		i := slices.IndexFunc(groups, func(g *group) bool {
			return g.dataset == r.Dataset && g.config == config && g.sampled == sampled
		})
		if i < 0 {
			groups = append(groups, &group{dataset: r.Dataset, model: r.Model, objective: r.Objective, config: config, sampled: sampled})
			i = len(groups) - 1
		}
		g := groups[i]
		g.ktd = append(g.ktd, r.Stat.Mean)
		if r.HasLL {
			g.ll = append(g.ll, r.LL)
		}
	}
	var cells [][]string
	for _, g := range groups {
		if len(g.ktd) < 2 {
			continue
		}
		ll := "–"
		if len(g.ll) == len(g.ktd) {
			ll = report.MeanStd(g.ll, 2, 3)
		}
		row := []string{g.dataset, g.model, g.objective, g.sampled, strconv.Itoa(len(g.ktd)), report.MeanStd(g.ktd, 2, 3)}
		if withRef {
			row = append(row, paperKTD(ref, g.dataset, g.model, g.objective))
		}
		cells = append(cells, append(row, ll, "`"+g.config+"`"))
	}
	if cells == nil {
		return nil
	}
	m.WriteString("\nOver seeds: the runs of one configuration sampled alike, their KTDs' mean ± two sample standard deviations over the n seeds (as paper.md gives each row's spread; the paper's ± is one standard deviation over draws of one model), and likewise their test LLs.\n\n")
	header := []string{"dataset", "model", "objective", "sampled at", "n", "KTD over seeds"}
	if withRef {
		header = append(header, "paper KTD")
	}
	return report.MarkdownTable(m, append(header, "test LL over seeds", "configuration"), cells)
}

// paperKTD is ktd.md's cell of the paper's KTD for a row, "–" where ref
// has none.
func paperKTD(ref *KTDReference, dataset, model, objective string) string {
	if st, ok := ref.Lookup(dataset, model, objective); ok {
		return fmt.Sprintf("%.3f ± %.3f", st.Mean, st.Std)
	}
	return "–"
}

// kept is x as ktd.tsv keeps it: digits significant digits.
func kept(x float64, digits int) string { return strconv.FormatFloat(x, 'g', digits, 64) }

// keptRounded is x as ktd.tsv keeps it, rounded to three decimals for
// ktd.md: the decimal text is rounded (halves away from zero), not the
// float it parses to, so that ktd.md is what ktd.tsv says (0.0435000012,
// kept as 0.0435, is 0.044, where the float nearest 0.0435 rounds to
// 0.043).
func keptRounded(x float64, digits int) string {
	s := kept(x, digits)
	r, ok := new(big.Rat).SetString(s)
	if !ok { // ±Inf
		return s
	}
	return r.FloatString(3)
}

// ReadKTDTSV reads the rows an earlier KTD analysis wrote, in their order,
// and the setting they were computed in. A missing file, or one of a
// header alone, is no rows and a zero setting; a file from before the
// setting was recorded gives its rows and a zero setting (Features ""); a
// malformed one, rows of different settings, or a run or baseline twice,
// is an error naming the line.
func ReadKTDTSV(path string) ([]KTDRow, KTDSetting, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, KTDSetting{}, nil
	}
	if err != nil {
		return nil, KTDSetting{}, err
	}
	// A table edited on another system may end its lines in \r\n.
	lines := strings.Split(strings.TrimRight(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n"), "\n")
	line, columns := ktdHeader(lines[0])
	if columns == 0 {
		return nil, KTDSetting{}, fmt.Errorf("%s:1: header %q, want the columns %s", path, lines[0], strings.Join(ktdColumns, ", "))
	}
	var (
		rows []KTDRow
		set  KTDSetting
		seen = map[string]int{} // a run's ID or a baseline's name, to its line
	)
	for i, text := range lines[1:] {
		line.f = strings.Split(text, "\t")
		bad := func(what string, err error) ([]KTDRow, KTDSetting, error) {
			return nil, KTDSetting{}, fmt.Errorf("%s:%d: %s: %v", path, i+2, what, err)
		}
		if len(line.f) != columns {
			return bad("fields", fmt.Errorf("%d, want %d", len(line.f), columns))
		}
		r, what, err := line.row()
		if err != nil {
			return bad(what, err)
		}
		key := r.Run
		if isBaseline(r.Model) {
			key = r.Dataset + "\x00" + r.Model
		}
		if at, ok := seen[key]; ok {
			return bad("row", fmt.Errorf("%s %s is on line %d already", r.Model, r.Run, at))
		}
		seen[key] = i + 2
		if r.Stat.Draws, err = positive(line.field("draws")); err != nil {
			return bad("draws", err)
		}
		s, what, err := line.setting()
		switch {
		case err != nil:
			return bad(what, err)
		case i > 0 && s != set:
			return bad("setting", fmt.Errorf("%+v, but the rows above have %+v", s, set))
		}
		set = s
		rows = append(rows, r)
	}
	return rows, set, nil
}

// ktdHeader reads the header of a KTD table, of this version or an
// earlier one: its lines' columns and their number (0: not a header).
func ktdHeader(header string) (ktdLine, int) {
	line := ktdLine{col: map[string]int{}}
	var columns []string
	for _, c := range [][]string{ktdColumns, ktdDigestColumns, ktdLLColumns, ktdSampledColumns, ktdSettingColumns, ktdOldColumns} {
		if header == strings.Join(c, "\t") {
			columns = c
		}
	}
	for i, c := range columns {
		line.col[c] = i
	}
	return line, len(columns)
}

// ktdLine is a line of a KTD table, its fields by column.
type ktdLine struct {
	col map[string]int
	f   []string
}

func (l ktdLine) field(name string) string { return l.f[l.col[name]] }

func (l ktdLine) has(name string) bool {
	_, ok := l.col[name]
	return ok
}

// row reads the line's row but its draws; an error names its column.
func (l ktdLine) row() (r KTDRow, column string, err error) {
	r = KTDRow{Dataset: l.field("dataset"), Model: l.field("model"), Objective: l.field("objective"), Run: l.field("run")}
	if r.Dataset == "" || r.Model == "" {
		return r, "row", errors.New("no dataset or model")
	}
	baseline := isBaseline(r.Model)
	if baseline != (r.Run == "") || r.Run == "." || r.Run == ".." || strings.ContainsAny(r.Run, `/\`) {
		return r, "run", fmt.Errorf("%q is not a run ID for model %q", r.Run, r.Model)
	}
	if l.has("sampled") {
		if r.Sampled = l.field("sampled"); baseline && r.Sampled != "" {
			return r, "sampled", fmt.Errorf("%q for model %q", r.Sampled, r.Model)
		}
	}
	if r.Stat.Mean, err = strconv.ParseFloat(l.field("ktd_mean"), 64); err != nil {
		return r, "ktd_mean", err
	}
	if r.Stat.Std, err = strconv.ParseFloat(l.field("ktd_std"), 64); err != nil {
		return r, "ktd_std", err
	}
	if l.has("test_ll") && l.field("test_ll") != "" {
		if r.LL, err = strconv.ParseFloat(l.field("test_ll"), 64); err != nil || math.IsNaN(r.LL) || r.LL > 0 {
			return r, "test_ll", fmt.Errorf("%q is not a log-likelihood", l.field("test_ll"))
		}
		if r.Model == "training set" {
			return r, "test_ll", errors.New("the training set has none")
		}
		r.HasLL = true
	}
	if l.has("across_clusters") && (l.field("across_clusters") != "" || l.field("test_triples") != "") {
		if r.Model != NNMFAugName || !r.HasLL {
			return r, "across_clusters", fmt.Errorf("a count for %s: only NNMFAug's row with its test LL has one", r.Model)
		}
		if r.Tests, err = positive(l.field("test_triples")); err != nil {
			return r, "test_triples", err
		}
		if r.Across, err = strconv.Atoi(l.field("across_clusters")); err != nil || r.Across < 0 || r.Across > r.Tests {
			return r, "across_clusters", fmt.Errorf("%q is not a count of the %d test triples", l.field("across_clusters"), r.Tests)
		}
	}
	return r, "", nil
}

// setting reads the line's setting (none in a table from before it was
// recorded); an error names its column.
func (l ktdLine) setting() (s KTDSetting, column string, err error) {
	if !l.has("features") {
		return s, "", nil
	}
	if s.Features = l.field("features"); s.Features == "" {
		return s, "features", errors.New("empty")
	}
	if l.has("features_digest") {
		s.Digest = l.field("features_digest")
		if strings.Trim(s.Digest, "0123456789abcdef") != "" {
			return s, "features_digest", fmt.Errorf("%q is not hexadecimal", s.Digest)
		}
	}
	if s.DrawSize, err = positive(l.field("draw_size")); err != nil {
		return s, "draw_size", err
	}
	if s.Samples, err = positive(l.field("samples")); err != nil {
		return s, "samples", err
	}
	return s, "", nil
}

func positive(text string) (int, error) {
	n, err := strconv.Atoi(text)
	if err == nil && n <= 0 {
		err = fmt.Errorf("%d is not positive", n)
	}
	return n, err
}

// KTDMerge is the table MergeKTDRows made, and what became of the
// earlier table's rows of runs not analysed again.
type KTDMerge struct {
	Rows  []KTDRow
	Kept  int      // rows kept: same setting, and the run is still there
	Gone  int      // rows dropped because their run is not (keep was false)
	Other []string // runs whose rows were of another or an unknown setting: not kept
	// Adopted says the old table recorded no digest of ψ and its rows were
	// taken as of this ψ because its baselines are the fresh ones.
	Adopted bool
}

// sameBaselines says whether every training-set and uniform baseline of
// fresh that old has too has the KTD there that ktd.tsv keeps of it now,
// and there is at least one such.
func sameBaselines(fresh, old []KTDRow) bool {
	n := 0
	for _, f := range fresh {
		if f.Run != "" || f.Model == NNMFAugName {
			continue
		}
		for _, o := range old {
			if o.Run != "" || o.Dataset != f.Dataset || o.Model != f.Model {
				continue
			}
			if kept(f.Stat.Mean, ktdDigits) != kept(o.Stat.Mean, ktdDigits) || kept(f.Stat.Std, ktdDigits) != kept(o.Stat.Std, ktdDigits) {
				return false
			}
			n++
		}
	}
	return n > 0
}

// MergeKTDRows joins the rows of a KTD analysis of some runs (fresh,
// computed in setting set) with those an earlier analysis wrote (old, in
// oldSet): fresh's baselines come first and replace the old ones, and an
// old NNMFAug row fresh lacks (it is measured only when asked) follows them
// where the setting is the same; old rows
// of runs keep their order, each replaced by its fresh row if the run was
// analysed again; fresh rows of runs new to the table follow. Old rows of
// runs not analysed again are kept only where keep(run) holds and oldSet
// equals set, or is that of a table from before ψ's digest was recorded
// (the same but for an empty Digest) whose training-set and uniform
// baselines fresh's repeat to the digits ktd.tsv keeps: those are drawn
// from a fixed seed and measured with ψ alone, so other parameters under
// the same run ID move them (KTDMerge.Adopted). NNMFAug's is not compared:
// it is measured only when asked, and its fit is not bound to repeat to
// six digits on other hardware.
func MergeKTDRows(fresh []KTDRow, set KTDSetting, old []KTDRow, oldSet KTDSetting, keep func(run string) bool) KTDMerge {
	var m KTDMerge
	byRun := map[string]KTDRow{}
	for _, r := range fresh {
		if r.Run == "" {
			m.Rows = append(m.Rows, r)
		} else {
			byRun[r.Run] = r
		}
	}
	undigested := oldSet
	undigested.Digest = set.Digest
	m.Adopted = oldSet.Features != "" && oldSet.Digest == "" && set.Digest != "" && undigested == set && sameBaselines(fresh, old)
	same := oldSet != KTDSetting{} && oldSet == set || m.Adopted
	if same {
		for _, r := range old {
			if r.Model == NNMFAugName && !slices.ContainsFunc(m.Rows, func(f KTDRow) bool { return f.Model == r.Model && f.Dataset == r.Dataset }) {
				m.Rows = append(m.Rows, r)
			}
		}
	}
	placed := map[string]bool{}
	for _, r := range old {
		if r.Run == "" || placed[r.Run] {
			continue
		}
		placed[r.Run] = true
		switch f, ok := byRun[r.Run]; {
		case ok:
			m.Rows = append(m.Rows, f)
		case !keep(r.Run):
			m.Gone++
		case same:
			m.Rows = append(m.Rows, r)
			m.Kept++
		default:
			m.Other = append(m.Other, r.Run)
		}
	}
	for _, r := range fresh {
		if r.Run != "" && !placed[r.Run] {
			m.Rows = append(m.Rows, r)
		}
	}
	return m
}

// RunKTD is the KTD of one run's samples ts, drawn from the run's own
// stream (KTDRunSeed), as every KTD table measures a run.
func RunKTD(psi metrics.TripleFeatures, run string, ts, test []kg.Triple, size int) (metrics.KTDStat, error) {
	return KTD(psi, ts, test, size, rand.New(rand.NewPCG(KTDRunSeed(run), 0x7d)))
}

// KTDRunSeed seeds the draws of one run's KTD from its ID, so that a run's
// value does not depend on which other runs the same analysis covers (a
// table merged from several analyses is then what one analysis of all its
// runs gives). The baselines draw from their own fixed seed.
func KTDRunSeed(run string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(run))
	return h.Sum64()
}
