package report

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"maps"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gekc/train"
)

// Values of the status column, train.Status's as strings. A run is final
// once finished or diverged (see Final); a failed one is retried on resume.
const (
	Finished = string(train.Finished)
	Diverged = string(train.Diverged)
	Failed   = string(train.Failed)
)

var (
	tsvLeadColumns = []string{"id", "config_id", "dataset", "model", "objective", "constraints", "rank",
		"batch_size", "learning_rate", "seed", "status", "epochs", "best_epoch", "select", "settings"}
	tsvBaseMetrics = []string{"mrr", "hits@1", "hits@3", "hits@10", "ll"}
	tsvTailColumns = []string{"wall_seconds", "seconds_per_epoch", "peak_rss_mb", "sgemm_gflops", "finished_at"}
)

// Row is one run's row of results.tsv, by column name: the lead columns
// (id, config_id, dataset, model, objective, constraints, rank, batch_size,
// learning_rate, seed, status, epochs, best_epoch, select, settings: the
// keys the ID hashes, grid.RunSpec.Settings joined by SettingsSeparator), valid_<metric>
// and test_<metric> for each metric the run reported, and the tail columns
// (wall_seconds, seconds_per_epoch, peak_rss_mb, sgemm_gflops, finished_at). Values are
// kept as written; a missing column reads as "".
type Row map[string]string

// Table is results.tsv: one Row per run, in the order runs ended.
type Table struct {
	Rows []Row
}

// ReadTSV reads the table at path. A missing file is an empty table, the
// state of a sweep before its first run ends.
func ReadTSV(path string) (*Table, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &Table{}, nil
	}
	if err != nil {
		return nil, err
	}
	return ParseTSV(path, data)
}

// ParseTSV parses a table from data; errors name path and the line. The
// header must have an id column and every row as many fields as the
// header.
func ParseTSV(path string, data []byte) (*Table, error) {
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	t := &Table{}
	if len(lines) == 0 || lines[0] == "" {
		return t, nil
	}
	header := strings.Split(lines[0], "\t")
	if !slices.Contains(header, "id") {
		return nil, fmt.Errorf("%s:1: header has no id column", path)
	}
	for i, line := range lines[1:] {
		if line == "" {
			continue
		}
		fields := strings.Split(line, "\t")
		if len(fields) != len(header) {
			return nil, fmt.Errorf("%s:%d: %d fields, header has %d", path, i+2, len(fields), len(header))
		}
		row := Row{}
		for j, h := range header {
			row[h] = fields[j]
		}
		t.Rows = append(t.Rows, row)
	}
	return t, nil
}

func (t *Table) find(id string) int {
	for i, r := range t.Rows {
		if r["id"] == id {
			return i
		}
	}
	return -1
}

// Upsert adds row unless its run (by id) already has a final row, finished
// or diverged; a failed run's row is replaced when the run is retried, so
// each run has one row. A final row is replaced only by a row that finished
// later. Upsert reports whether the table changed.
func (t *Table) Upsert(row Row) bool {
	i := t.find(row["id"])
	switch {
	case i < 0:
		t.Rows = append(t.Rows, row)
		return true
	case Final(t.Rows[i]["status"]):
		// A run ends once; if it is trained again (its run directory was
		// lost, e.g. on a fresh clone, or removed to retrain it), the later
		// result is the one whose checkpoint is on disk. Times are UTC
		// RFC 3339, so they order as strings. A search's run promoted to
		// a later rung may end within the second it ended the last.
		if row["finished_at"] > t.Rows[i]["finished_at"] || rungNumber(row["rung"]) > rungNumber(t.Rows[i]["rung"]) {
			t.Rows[i] = row
			return true
		}
		return false
	case maps.Equal(t.Rows[i], row):
		return false
	default:
		t.Rows[i] = row
		return true
	}
}

// Final reports whether a run with this status is done for good: a resumed
// sweep skips it, and a later result replaces its row only when it finished
// later.
func Final(status string) bool { return status == Finished || status == Diverged }

// Columns is the header TSV writes: the lead columns, every metric column
// present in any row (mrr, hits@1, hits@3, hits@10 and ll always) in
// SortMetrics order, valid_ before test_, the tail columns, and then any
// column this package does not know, sorted, so rewriting never drops data.
func (t *Table) Columns() []string {
	present := map[string]bool{}
	for _, r := range t.Rows {
		for k := range r {
			present[k] = true
		}
	}
	cols := append([]string(nil), tsvLeadColumns...)
	known := map[string]bool{}
	for _, c := range tsvLeadColumns {
		known[c] = true
	}
	for _, c := range tsvTailColumns {
		known[c] = true
	}
	for _, split := range []string{"valid_", "test_"} {
		metrics := append([]string(nil), tsvBaseMetrics...)
		for k := range present {
			if m, ok := strings.CutPrefix(k, split); ok && !slices.Contains(metrics, m) {
				metrics = append(metrics, m)
			}
		}
		SortMetrics(metrics)
		for _, m := range metrics {
			cols = append(cols, split+m)
			known[split+m] = true
		}
	}
	cols = append(cols, tsvTailColumns...)
	var unknown []string
	for k := range present {
		if !known[k] {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	return append(cols, unknown...)
}

// TSV encodes the table as results.tsv: a header of Columns and one line
// per row. Tabs and line breaks inside values become spaces, so that every
// value stays in its column.
func (t *Table) TSV() []byte {
	var b bytes.Buffer
	header := t.Columns()
	b.WriteString(strings.Join(header, "\t"))
	b.WriteByte('\n')
	for _, r := range t.Rows {
		for j, h := range header {
			if j > 0 {
				b.WriteByte('\t')
			}
			b.WriteString(TSVCell(r[h]))
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// TSVCell returns s as one TSV value: its tabs and line breaks become
// spaces, so that it stays on one line and in one column.
func TSVCell(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return ' '
		}
		return r
	}, s)
}

// SortMetrics orders metric names as tables read best: mrr, hits@k by k,
// ll and ll_at_best_ll, then the rest alphabetically, "name@k" and "name@k_suffix" families
// by k (sem@1, sem@20, sem@100; hits@1_relation, hits@3_relation).
func SortMetrics(ms []string) {
	key := func(m string) (class int, base string, k int) {
		base, k = m, -1
		if i := strings.LastIndexByte(m, '@'); i >= 0 {
			digits, suffix := m[i+1:], ""
			if j := strings.IndexByte(digits, '_'); j >= 0 {
				digits, suffix = digits[:j], digits[j:]
			}
			if n, err := strconv.Atoi(digits); err == nil {
				base, k = m[:i], n
				if suffix != "" {
					base = m[:i] + "@" + suffix
				}
			}
		}
		switch {
		case m == "mrr":
			return 0, base, k
		case base == "hits" && k >= 0:
			return 1, base, k
		case m == "ll", m == "ll_at_best_ll":
			return 2, base, k
		}
		return 3, base, k
	}
	sort.SliceStable(ms, func(i, j int) bool {
		ci, bi, ki := key(ms[i])
		cj, bj, kj := key(ms[j])
		switch {
		case ci != cj:
			return ci < cj
		case bi != bj:
			return bi < bj
		case ki != kj:
			return ki < kj
		}
		return ms[i] < ms[j]
	})
}

// CommentedTSVRecords yields the line number and tab-separated fields of
// each line of data that is neither blank nor a # comment, a trailing \r
// removed: the layout of the hand-written reference tables (the paper's
// values, their causes, its KTDs).
func CommentedTSVRecords(data []byte) iter.Seq2[int, []string] {
	return func(yield func(int, []string) bool) {
		for i, line := range strings.Split(string(data), "\n") {
			line = strings.TrimRight(line, "\r")
			if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
				continue
			}
			if !yield(i+1, strings.Split(line, "\t")) {
				return
			}
		}
	}
}
