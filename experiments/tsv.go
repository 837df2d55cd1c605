package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// results.tsv has one row per run, in the order runs ended. It is the
// source of results.md. Metric columns are valid_<metric> and
// test_<metric> for every metric any run reported, so the header grows when
// a run reports something new; each update rewrites the whole file
// atomically under <out>/results.lock, which is what makes concurrent
// writers safe and a crash harmless.

var (
	tsvLeadColumns = []string{"id", "config_id", "dataset", "model", "objective", "constraints", "rank",
		"batch_size", "learning_rate", "seed", "status", "epochs", "best_epoch", "select"}
	tsvBaseMetrics = []string{"mrr", "hits@1", "hits@3", "hits@10", "ll"}
	tsvTailColumns = []string{"wall_seconds", "seconds_per_epoch", "peak_rss_mb", "finished_at"}
)

// resultRow is one row, by column name.
type resultRow map[string]string

type resultsTable struct{ rows []resultRow }

func readResultsTSV(path string) (*resultsTable, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &resultsTable{}, nil
	}
	if err != nil {
		return nil, err
	}
	return parseResultsTSV(path, data)
}

func parseResultsTSV(path string, data []byte) (*resultsTable, error) {
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	t := &resultsTable{}
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
		row := resultRow{}
		for j, h := range header {
			row[h] = fields[j]
		}
		t.rows = append(t.rows, row)
	}
	return t, nil
}

func (t *resultsTable) find(id string) int {
	for i, r := range t.rows {
		if r["id"] == id {
			return i
		}
	}
	return -1
}

// upsert adds row unless the run already has a final row; a failed run's
// row is replaced when the run is retried, so each run has one row.
func (t *resultsTable) upsert(row resultRow) bool {
	i := t.find(row["id"])
	switch {
	case i < 0:
		t.rows = append(t.rows, row)
		return true
	case Status(t.rows[i]["status"]).final():
		// A run ends once; if it is trained again (its run directory was
		// lost, e.g. on a fresh clone, or removed to retrain it), the later
		// result is the one whose checkpoint is on disk. Times are UTC
		// RFC 3339, so they order as strings.
		if row["finished_at"] > t.rows[i]["finished_at"] {
			t.rows[i] = row
			return true
		}
		return false
	case maps.Equal(t.rows[i], row):
		return false
	default:
		t.rows[i] = row
		return true
	}
}

// header is the lead columns, every metric column present in any row (base
// metrics always), the tail columns, and then any column this version does
// not know, so rewriting never drops data.
func (t *resultsTable) header() []string {
	present := map[string]bool{}
	for _, r := range t.rows {
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
		sortMetrics(metrics)
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

func (t *resultsTable) encode() []byte {
	var b bytes.Buffer
	header := t.header()
	b.WriteString(strings.Join(header, "\t"))
	b.WriteByte('\n')
	for _, r := range t.rows {
		for j, h := range header {
			if j > 0 {
				b.WriteByte('\t')
			}
			b.WriteString(tsvClean(r[h]))
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// tsvClean keeps a value on one line and in one column.
func tsvClean(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return ' '
		}
		return r
	}, s)
}

// sortMetrics orders metric names as tables read best: mrr, hits@k by k,
// ll, then the rest alphabetically, "name@k" and "name@k_suffix" families
// by k (sem@1, sem@20, sem@100; hits@1_relation, hits@3_relation).
func sortMetrics(ms []string) {
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
		case m == "ll":
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

// trainedEpochs counts the epochs that trained; a distilled run also
// records epoch 0, the validation of the model as converted.
func trainedEpochs(es []epochJSON) int {
	n := 0
	for _, e := range es {
		if e.Epoch > 0 {
			n++
		}
	}
	return n
}

func formatMetric(x float64) string { return strconv.FormatFloat(x, 'g', 6, 64) }

// rowFromRecord is the results.tsv row of a run.
func rowFromRecord(rec *runRecord) resultRow {
	s := rec.Spec
	row := resultRow{
		"id": rec.ID, "config_id": rec.ConfigID, "dataset": s.Dataset, "model": s.Model,
		"objective": s.Objective, "constraints": s.Constraints, "rank": strconv.Itoa(s.Rank),
		"batch_size": strconv.Itoa(s.BatchSize), "learning_rate": formatFloat(s.LearningRate),
		"seed": strconv.Itoa(s.Seed), "status": string(rec.Status), "epochs": strconv.Itoa(trainedEpochs(rec.Epochs)),
		"best_epoch": strconv.Itoa(rec.BestEpoch), "select": s.Eval.Select,
		"wall_seconds":      strconv.FormatFloat(float64(rec.WallSeconds), 'f', 1, 64),
		"seconds_per_epoch": strconv.FormatFloat(float64(rec.SecondsPerEpoch), 'f', 2, 64),
		"finished_at":       rec.FinishedAt.UTC().Format(time.RFC3339),
	}
	if rec.PeakRSSBytes > 0 {
		row["peak_rss_mb"] = strconv.FormatFloat(float64(rec.PeakRSSBytes)/(1<<20), 'f', 1, 64)
	}
	for k, v := range rec.Valid {
		row["valid_"+k] = formatMetric(float64(v))
	}
	for k, v := range rec.Test {
		row["test_"+k] = formatMetric(float64(v))
	}
	return row
}
