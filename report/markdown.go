package report

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
	"gonum.org/v1/gonum/stat"
)

// configSummary aggregates the seeds of one configuration (runs sharing a
// config_id).
type configSummary struct {
	configID                                    string
	dataset, model, objective, constraints, sel string
	rank, batch, lr                             string
	finished, diverged, failed                  int
	validScores                                 []float64            // finished runs' validation select metric
	score                                       float64              // their mean; NaN if none
	test                                        map[string][]float64 // finished runs' test metrics
	wall                                        []float64
	sgemm                                       []float64      // the hosts' Sgemm GFLOP/s, of the runs that recorded it
	nanTest                                     map[string]int // finished runs whose test metric is NaN, by metric
	synthetic                                   bool           // its data set was sampled from a model (column synthetic)
	settings                                    []string       // "key=value" of the keys its ID hashes (column settings)
	rung                                        string         // the search rung its runs reached, "2/4" (column rung); "" without a search
}

// rungIndex orders rungs ("2/4" is 2); 0 without one.
func (c *configSummary) rungIndex() int { return rungNumber(c.rung) }

func rungNumber(rung string) int {
	n, _ := strconv.Atoi(strings.SplitN(rung, "/", 2)[0])
	return n
}

// SettingsSeparator joins a run's settings (grid.RunSpec.Settings) in the
// settings column of results.tsv.
const SettingsSeparator = "; "

// varyingSettings returns, for each config, its settings that not every
// config shares, so that configurations whose IDs differ only in their
// hash read apart ("optimizer=sgd momentum=0.9"), and whether any has one.
func varyingSettings(configs []*configSummary) ([]string, bool) {
	count := map[string]int{}
	for _, c := range configs {
		for _, kv := range c.settings {
			count[kv]++
		}
	}
	out := make([]string, len(configs))
	varies := false
	for i, c := range configs {
		var vary []string
		for _, kv := range c.settings {
			if count[kv] < len(configs) {
				vary = append(vary, kv)
			}
		}
		out[i] = strings.Join(vary, " ")
		varies = varies || len(vary) > 0
	}
	return out, varies
}

// datasetCell is the configuration's data set, and the one it was tested
// on when that is another (eval.test_on): "umls (tested on nations)".
func (c *configSummary) datasetCell() string {
	if other := testedOn(c.settings); other != "" && other != c.dataset {
		return c.dataset + " (tested on " + other + ")"
	}
	return c.dataset
}

// testedOn returns the data set a run's settings (column settings) test
// it on when it is not its own (eval.test_on), or "".
func testedOn(settings []string) string {
	for _, kv := range settings {
		if v, ok := strings.CutPrefix(kv, "eval.test_on="); ok {
			return v
		}
	}
	return ""
}

func (c *configSummary) groupKey() string {
	return strings.Join([]string{c.dataset, c.model, c.objective, c.constraints, c.sel}, "\x00")
}

// eligible reports whether the configuration may be selected as best:
// diverged and failed runs never count.
func (c *configSummary) eligible() bool { return c.finished > 0 && !math.IsNaN(c.score) }

// nanSummary names, by metric, the finished runs whose test value is NaN
// ("NaN test: 1 mrr, 2 ll"); empty when there are none. results.md's status
// and paper.md's n both print it, so the two tables say it alike.
func (c *configSummary) nanSummary() string {
	if len(c.nanTest) == 0 {
		return ""
	}
	var parts []string
	for _, m := range slices.Sorted(maps.Keys(c.nanTest)) {
		parts = append(parts, fmt.Sprintf("%d %s", c.nanTest[m], m))
	}
	return "NaN test: " + strings.Join(parts, ", ")
}

func (c *configSummary) status() string {
	var parts []string
	if c.diverged > 0 {
		parts = append(parts, fmt.Sprintf("%d diverged", c.diverged))
	}
	if c.failed > 0 {
		parts = append(parts, fmt.Sprintf("%d failed", c.failed))
	}
	if nan := c.nanSummary(); nan != "" {
		parts = append(parts, nan)
	}
	switch {
	case c.finished > 0 && len(parts) == 0:
		return "finished"
	case c.finished > 0:
		return "finished (" + strings.Join(parts, ", ") + ")"
	case c.diverged > 0 && c.failed == 0:
		return "**diverged**"
	}
	return "**" + strings.Join(parts, ", ") + "**"
}

func summariseConfigs(t *Table) []*configSummary {
	byID := map[string]*configSummary{}
	var order []*configSummary
	for _, r := range t.Rows {
		id := r["config_id"]
		if id == "" {
			id = r["id"]
		}
		c, ok := byID[id]
		if !ok {
			c = &configSummary{configID: id, dataset: r["dataset"], model: r["model"], objective: r["objective"],
				constraints: r["constraints"], sel: r["select"], rank: r["rank"], batch: r["batch_size"],
				lr: r["learning_rate"], test: map[string][]float64{}, nanTest: map[string]int{}, synthetic: r["synthetic"] == "yes"}
			if v := r["settings"]; v != "" {
				c.settings = strings.Split(v, SettingsSeparator)
			}
			byID[id] = c
			order = append(order, c)
		}
		if rungNumber(r["rung"]) > c.rungIndex() {
			c.rung = r["rung"]
		}
		switch r["status"] {
		case Finished:
			c.finished++
		case Diverged:
			c.diverged++
			continue
		default:
			c.failed++
			continue
		}
		for k, v := range r {
			m, ok := strings.CutPrefix(k, "test_")
			if !ok {
				continue
			}
			// An infinite value is kept: a test LL of −Inf (a test triple
			// given probability 0) must show in the row's mean, not drop
			// the seed from it.
			if x, err := strconv.ParseFloat(v, 64); err == nil && !math.IsNaN(x) {
				c.test[m] = append(c.test[m], x)
			} else if err == nil {
				c.nanTest[m]++
			}
		}
		if x, ok := parseFinite(r["wall_seconds"]); ok {
			c.wall = append(c.wall, x)
		}
		if x, ok := parseFinite(r["sgemm_gflops"]); ok {
			c.sgemm = append(c.sgemm, x)
		}
		if x, ok := parseFinite(r["valid_"+c.sel]); ok {
			c.validScores = append(c.validScores, x)
		}
	}
	for _, c := range order {
		c.score = math.NaN()
		if len(c.validScores) > 0 {
			c.score = stat.Mean(c.validScores, nil)
		}
	}
	sort.SliceStable(order, func(i, j int) bool {
		a, b := order[i], order[j]
		if a.groupKey() != b.groupKey() {
			return a.groupKey() < b.groupKey()
		}
		return a.configID < b.configID
	})
	return order
}

func parseFinite(s string) (float64, bool) {
	x, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, false
	}
	return x, true
}

// Markdown renders results.md from a table: a title naming the grid, the
// best configuration of each (dataset, model, objective, constraints),
// chosen by the mean validation metric the rows name in their select
// column, then every configuration, then the failed runs. Rows sharing a
// config_id are the seeds of one configuration; test metrics and wall time
// are mean ± sample std over its finished seeds. Diverged and failed runs
// are never selected and do not enter the means.
func Markdown(title string, t *Table) ([]byte, error) {
	configs := summariseConfigs(t)
	metrics := testMetrics(configs)

	var finished, diverged, failed int
	for _, c := range configs {
		finished += c.finished
		diverged += c.diverged
		failed += c.failed
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Results: %s\n\n", title)
	fmt.Fprintf(&b, "%d runs in %d configurations: %d finished, %d diverged, %d failed. "+
		"Generated from results.tsv; it is rewritten after every run.\n\n", finished+diverged+failed, len(configs), finished, diverged, failed)
	fmt.Fprintf(&b, "Test metrics and wall time are mean ± std over the finished seeds (n). "+
		"Diverged and failed runs are never selected and do not enter the means.\n\n")

	b.WriteString("## Best configuration per dataset, model, objective and constraints\n\n")
	b.WriteString("Selected on the mean validation metric named by `eval.select` (higher is better).\n\n")
	best, empty := bestConfigs(configs)
	if err := writeConfigTable(&b, append(best, empty...), metrics); err != nil {
		return nil, err
	}
	b.WriteString("\n## All configurations\n\n")
	if err := writeConfigTable(&b, configs, metrics); err != nil {
		return nil, err
	}
	var failedIDs []string
	for _, r := range t.Rows {
		if r["status"] == Failed {
			failedIDs = append(failedIDs, r["id"])
		}
	}
	if len(failedIDs) > 0 {
		b.WriteString("\n## Failed runs\n\nThe error is in `runs/<id>/metrics.json`; a resumed sweep retries them.\n\n")
		for _, id := range failedIDs {
			fmt.Fprintf(&b, "- `%s`\n", id)
		}
	}
	return b.Bytes(), nil
}

// bestConfigs picks, in each group of configs (sorted by groupKey, as
// summariseConfigs returns them), the eligible configuration with the best
// validation score; empty lists the configurations of groups with none.
func bestConfigs(configs []*configSummary) (best, empty []*configSummary) {
	for i := 0; i < len(configs); {
		j := i
		var pick *configSummary
		top := 0 // a search's highest rung in the group: only its configurations compete
		for k := i; k < len(configs) && configs[k].groupKey() == configs[i].groupKey(); k++ {
			top = max(top, configs[k].rungIndex())
		}
		for ; j < len(configs) && configs[j].groupKey() == configs[i].groupKey(); j++ {
			c := configs[j]
			if c.eligible() && c.rungIndex() == top && (pick == nil || c.score > pick.score) {
				pick = c
			}
		}
		if pick != nil {
			best = append(best, pick)
		} else {
			empty = append(empty, configs[i:j]...)
		}
		i = j
	}
	return best, empty
}

// Summary writes the compact table a sweep ends with on stdout: the best
// configuration of each group, chosen as in Markdown, in a few columns
// (model, objective, test MRR, Hits@10, LL, wall time, seeds), plus dataset
// and constraints when the rows differ in them, and, where a group held
// several configurations, the settings the selected one won with. Groups without a finished
// run get a row saying so; a table without rows is one line saying so.
func Summary(w io.Writer, t *Table) error {
	configs := summariseConfigs(t)
	best, empty := bestConfigs(configs)
	won := winningSettings(best, configs)
	rows := append(best, empty...)
	if len(rows) == 0 {
		_, err := fmt.Fprintln(w, "no finished runs to show")
		return err
	}
	datasets, constraints := map[string]bool{}, map[string]bool{}
	for _, c := range rows {
		datasets[c.dataset] = true
		constraints[c.constraints] = true
	}
	showDataset := len(datasets) > 1 || slices.ContainsFunc(rows, func(c *configSummary) bool { return c.datasetCell() != c.dataset })
	showConstraints := len(constraints) > 1 || !constraints["none"]
	var header []string
	if showDataset {
		header = append(header, "dataset")
	}
	header = append(header, "model", "objective")
	if showConstraints {
		header = append(header, "constraints")
	}
	showWon := slices.ContainsFunc(won, func(s string) bool { return s != "" })
	if showWon {
		header = append(header, "selected")
	}
	header = append(header, "MRR", "Hits@10", "LL", "time s", "n")
	var cells [][]string
	for i, c := range rows {
		var row []string
		if showDataset {
			row = append(row, c.datasetCell())
		}
		row = append(row, c.model, c.objective)
		if showConstraints {
			row = append(row, c.constraints)
		}
		if showWon {
			w := ""
			if i < len(won) {
				w = won[i]
			}
			row = append(row, w)
		}
		if c.finished > 0 {
			row = append(row, formatCell("mrr", c.test["mrr"]), formatCell("hits@10", c.test["hits@10"]),
				formatCell("ll", c.test["ll"]), formatCell("wall", c.wall), strconv.Itoa(c.finished))
		} else {
			row = append(row, strings.Trim(c.status(), "*"), "", "", "", "0")
		}
		cells = append(cells, row)
	}
	if err := MarkdownTable(w, header, cells); err != nil {
		return fmt.Errorf("rendering summary table: %w", err)
	}
	return nil
}

// winningSettings says, for each best configuration, where it differs from
// the others of its group (model, objective, ...): the rank, batch size,
// learning rate and hashed settings that vary there ("d=50 lr=0.1"); ""
// where its group has one configuration.
func winningSettings(best, configs []*configSummary) []string {
	out := make([]string, len(best))
	for i, b := range best {
		var group []*configSummary
		for _, c := range configs {
			if c.groupKey() == b.groupKey() {
				group = append(group, c)
			}
		}
		if len(group) < 2 {
			continue
		}
		var parts []string
		for _, f := range []struct {
			name string
			of   func(*configSummary) string
		}{{"d", func(c *configSummary) string { return c.rank }}, {"b", func(c *configSummary) string { return c.batch }},
			{"lr", func(c *configSummary) string { return c.lr }}} {
			if slices.ContainsFunc(group, func(c *configSummary) bool { return f.of(c) != f.of(b) }) {
				parts = append(parts, f.name+"="+f.of(b))
			}
		}
		settings, _ := varyingSettings(group)
		if s := settings[slices.Index(group, b)]; s != "" {
			parts = append(parts, s)
		}
		out[i] = strings.Join(parts, " ")
	}
	return out
}

// testMetrics lists the test metrics any configuration has, in table order.
func testMetrics(configs []*configSummary) []string {
	seen := map[string]bool{}
	var ms []string
	for _, c := range configs {
		for m := range c.test {
			if !seen[m] {
				seen[m] = true
				ms = append(ms, m)
			}
		}
	}
	SortMetrics(ms)
	return ms
}

// MarkdownTable writes a GitHub-markdown table with columns padded to a
// common width, keeping the header and cells as given: no upper-casing, no
// wrapping, no escaping (a "|" in a cell must be escaped by the caller).
func MarkdownTable(w io.Writer, header []string, rows [][]string) error {
	table := tablewriter.NewTable(w,
		tablewriter.WithRenderer(renderer.NewMarkdown()),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
	)
	table.Header(header)
	for _, row := range rows {
		if err := table.Append(row); err != nil {
			return err
		}
	}
	return table.Render()
}

func writeConfigTable(b *bytes.Buffer, configs []*configSummary, metrics []string) error {
	settings, showSettings := varyingSettings(configs)
	header := []string{"dataset", "model", "objective", "constraints", "config", "rank", "batch", "lr"}
	if showSettings {
		header = append(header, "settings")
	}
	header = append(header, "n")
	rungs := slices.ContainsFunc(configs, func(c *configSummary) bool { return c.rung != "" })
	if rungs {
		header = append(header, "rung")
	}
	header = append(header, "valid (select)")
	for _, m := range metrics {
		if m == "step_ms" { // a training figure, recorded with the test metrics
			header = append(header, "step ms")
			continue
		}
		header = append(header, "test "+metricTitle(m))
	}
	header = append(header, "wall s", "status")

	var cells [][]string
	for i, c := range configs {
		row := []string{c.datasetCell(), c.model, c.objective, c.constraints, "`" + c.configID + "`", c.rank, c.batch, c.lr}
		if showSettings {
			row = append(row, settings[i])
		}
		row = append(row, strconv.Itoa(c.finished))
		if rungs {
			row = append(row, c.rung)
		}
		if c.eligible() {
			row = append(row, c.sel+" "+formatCell(c.sel, []float64{c.score}))
		} else {
			row = append(row, "–")
		}
		for _, m := range metrics {
			row = append(row, formatCell(m, c.test[m]))
		}
		row = append(row, formatCell("wall", c.wall), c.status())
		for i := range row {
			row[i] = strings.ReplaceAll(row[i], "|", `\|`)
		}
		cells = append(cells, row)
	}
	if err := MarkdownTable(b, header, cells); err != nil {
		return fmt.Errorf("rendering results table: %w", err)
	}
	return nil
}

func metricTitle(m string) string {
	switch {
	case m == "mrr":
		return "MRR"
	case m == "ll":
		return "LL"
	case m == "ll_at_best_ll":
		return "LL at best valid LL"
	case strings.HasPrefix(m, "hits@"):
		return "Hits@" + strings.TrimPrefix(m, "hits@")
	}
	return m
}

// formatCell renders mean ± std, with 4 decimals for metrics in [0, 1] and
// fewer for log-likelihoods and seconds.
func formatCell(metric string, xs []float64) string { return formatCellStd(metric, xs, 1) }

// formatCellStd is formatCell with ± k sample standard deviations.
func formatCellStd(metric string, xs []float64, k float64) string {
	if len(xs) == 0 {
		return "–"
	}
	prec := 4
	switch metric {
	case "ll", "ll_at_best_ll":
		prec = 3
	case "wall", "step_ms":
		prec = 1
	}
	return MeanStd(xs, k, prec)
}

// MeanStd formats the mean of xs ± k sample standard deviations, both
// with prec decimals; one value is its mean alone, none "–". An infinite
// mean is printed without spread, with how many of xs were infinite.
func MeanStd(xs []float64, k float64, prec int) string {
	if len(xs) == 0 {
		return "–"
	}
	mean := stat.Mean(xs, nil)
	if math.IsInf(mean, 0) || math.IsNaN(mean) {
		// Infinite values (test LL −Inf): the mean is infinite (NaN when
		// both signs occur) and has no spread; say how many seeds made it.
		s := strconv.FormatFloat(mean, 'f', prec, 64)
		if inf := countInfinite(xs); inf < len(xs) {
			s += fmt.Sprintf(" (%d of %d infinite)", inf, len(xs))
		}
		return s
	}
	if len(xs) == 1 {
		return strconv.FormatFloat(mean, 'f', prec, 64)
	}
	return strconv.FormatFloat(mean, 'f', prec, 64) + " ± " + strconv.FormatFloat(k*stat.StdDev(xs, nil), 'f', prec, 64)
}

func countInfinite(xs []float64) int {
	n := 0
	for _, x := range xs {
		if math.IsInf(x, 0) {
			n++
		}
	}
	return n
}
