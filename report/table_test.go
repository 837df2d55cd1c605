package report

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestTableUpsert(t *testing.T) {
	row := func(id, status, mrr string) Row {
		return Row{"id": id, "status": status, "test_mrr": mrr}
	}
	tests := []struct {
		name    string
		rows    []Row
		add     Row
		changed bool
		want    []Row
	}{
		{"new run", nil, row("a", "finished", "0.5"), true, []Row{row("a", "finished", "0.5")}},
		{"finished run kept", []Row{row("a", "finished", "0.5")}, row("a", "finished", "0.6"), false, []Row{row("a", "finished", "0.5")}},
		{"diverged run kept", []Row{row("a", "diverged", "")}, row("a", "finished", "0.6"), false, []Row{row("a", "diverged", "")}},
		{"retrained run replaces its row", []Row{{"id": "a", "status": "finished", "finished_at": "2026-01-01T00:00:00Z"}},
			Row{"id": "a", "status": "finished", "finished_at": "2026-02-01T00:00:00Z"}, true,
			[]Row{{"id": "a", "status": "finished", "finished_at": "2026-02-01T00:00:00Z"}}},
		{"older result never replaces", []Row{{"id": "a", "status": "finished", "finished_at": "2026-02-01T00:00:00Z"}},
			Row{"id": "a", "status": "diverged", "finished_at": "2026-01-01T00:00:00Z"}, false,
			[]Row{{"id": "a", "status": "finished", "finished_at": "2026-02-01T00:00:00Z"}}},
		{"failed run replaced in place", []Row{row("a", "failed", ""), row("b", "finished", "1")}, row("a", "finished", "0.6"), true,
			[]Row{row("a", "finished", "0.6"), row("b", "finished", "1")}},
		{"same failed row again", []Row{row("a", "failed", "")}, row("a", "failed", ""), false, []Row{row("a", "failed", "")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			table := &Table{Rows: append([]Row(nil), tt.rows...)}
			if got := table.Upsert(tt.add); got != tt.changed {
				t.Errorf("changed = %v, want %v", got, tt.changed)
			}
			if !reflect.DeepEqual(table.Rows, tt.want) {
				t.Errorf("rows %v, want %v", table.Rows, tt.want)
			}
		})
	}
}

func TestParseTSVErrors(t *testing.T) {
	if _, err := ParseTSV("r.tsv", []byte("id\tstatus\na\n")); err == nil || !strings.Contains(err.Error(), "r.tsv:2") {
		t.Errorf("short row: %v", err)
	}
	if _, err := ParseTSV("r.tsv", []byte("name\tstatus\n")); err == nil || !strings.Contains(err.Error(), "r.tsv:1") {
		t.Errorf("no id column: %v", err)
	}
	if table, err := ParseTSV("r.tsv", nil); err != nil || len(table.Rows) != 0 {
		t.Errorf("empty file: %v, %v", table, err)
	}
}

func TestSortMetrics(t *testing.T) {
	got := []string{"sem@100", "ll_at_best_ll", "ll", "ece_minmax", "hits@10", "sem@1", "mrr_object", "hits@3", "mrr", "sem@20", "hits@1", "ece_logistic",
		"hits@10_relation", "mrr_relation", "hits@1_relation", "sem_unfiltered@20", "sem_unfiltered@1"}
	SortMetrics(got)
	want := []string{"mrr", "hits@1", "hits@3", "hits@10", "ll", "ll_at_best_ll", "ece_logistic", "ece_minmax", "hits@1_relation", "hits@10_relation",
		"mrr_object", "mrr_relation", "sem@1", "sem@20", "sem@100", "sem_unfiltered@1", "sem_unfiltered@20"}
	if !slices.Equal(got, want) {
		t.Errorf("SortMetrics = %v\nwant %v", got, want)
	}
}
