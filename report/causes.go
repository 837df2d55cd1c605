package report

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
)

// A Cause is the investigated reason why gekc's result for one reference
// row and metric lands outside the tolerance: paper.md prints it as a
// footnote of that row's "no", so a reader of the table sees the cause
// beside the miss instead of hunting for it.
type Cause struct {
	Text string
	Path string // the causes file and line, for the note on a cause that no longer applies
	Line int
}

// causeMetrics are the metrics a match is judged on.
var causeMetrics = []string{"mrr", "ll"}

// CausesPath is the causes file that ReadReference reads beside a
// reference table: paper-reference.tsv's is paper-reference-causes.tsv.
func CausesPath(referencePath string) string {
	return strings.TrimSuffix(referencePath, ".tsv") + "-causes.tsv"
}

// AddCauses reads a causes table into ref: tab-separated, with the header
// dataset, model, objective, metric, cause; metric is mrr or ll, and cause
// is one line of markdown. Every row must name a row of ref, at most once
// per metric. Lines starting with # are comments. Errors name the file and
// line.
func (ref *Reference) AddCauses(path string, data []byte) error {
	want := []string{"dataset", "model", "objective", "metric", "cause"}
	var (
		errs   []error
		header bool
		seen   = map[string]int{}
	)
	for n, f := range CommentedTSVRecords(data) {
		if !header {
			if line := strings.Join(f, "\t"); line != strings.Join(want, "\t") {
				return fmt.Errorf("%s:%d: header %q; want the columns %s", path, n, line, strings.Join(want, ", "))
			}
			header = true
			continue
		}
		if len(f) != len(want) {
			errs = append(errs, fmt.Errorf("%s:%d: %d fields, the header has %d", path, n, len(f), len(want)))
			continue
		}
		for j := range f {
			f[j] = strings.TrimSpace(f[j])
		}
		dataset, model, objective, metric, text := f[0], f[1], f[2], f[3], f[4]
		if !slices.Contains(causeMetrics, metric) {
			errs = append(errs, fmt.Errorf("%s:%d: metric %q; want mrr or ll", path, n, metric))
			continue
		}
		if text == "" {
			errs = append(errs, fmt.Errorf("%s:%d: the cause is empty", path, n))
			continue
		}
		key := dataset + "\x00" + model + "\x00" + objective + "\x00" + metric
		if first, ok := seen[key]; ok {
			errs = append(errs, fmt.Errorf("%s:%d: %s %s %s %s already has a cause on line %d", path, n, dataset, model, objective, metric, first))
			continue
		}
		seen[key] = n
		row := ref.row(dataset, model, objective)
		if row == nil {
			errs = append(errs, fmt.Errorf("%s:%d: %s has no row %s %s %s", path, n, ref.Path, dataset, model, objective))
			continue
		}
		if row.Causes == nil {
			row.Causes = map[string]Cause{}
		}
		row.Causes[metric] = Cause{Text: text, Path: path, Line: n}
	}
	if !header {
		errs = append(errs, fmt.Errorf("%s: no header line", path))
	}
	return errors.Join(errs...)
}

// readCauses adds the causes file beside ref's path, if there is one.
func (ref *Reference) readCauses() error {
	path := CausesPath(ref.Path)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return ref.AddCauses(path, data)
}

// row returns ref's row of the dataset, model and objective; nil if none.
func (ref *Reference) row(dataset, model, objective string) *ReferenceRow {
	for i := range ref.Rows {
		if r := &ref.Rows[i]; r.Dataset == dataset && r.Model == model && r.Objective == objective {
			return r
		}
	}
	return nil
}

// superscript writes n ≥ 0 in superscript digits, as the tables number
// their notes.
func superscript(n int) string {
	digits := []rune("⁰¹²³⁴⁵⁶⁷⁸⁹")
	var b strings.Builder
	for _, c := range fmt.Sprint(n) {
		b.WriteRune(digits[c-'0'])
	}
	return b.String()
}
