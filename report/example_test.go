package report_test

import (
	"fmt"
	"log"
	"os"

	"gekc/report"
)

// Two seeds of one configuration and one diverged configuration: the
// summary shows the mean ± std of the finished seeds and, for the group
// without a finished run, its status.
func ExampleSummary() {
	t := &report.Table{}
	for _, r := range []report.Row{
		{"id": "cp-s0", "config_id": "cp", "dataset": "umls", "model": "cp", "objective": "pll", "constraints": "none",
			"status": report.Finished, "select": "mrr", "valid_mrr": "0.61", "test_mrr": "0.60", "test_hits@10": "0.85",
			"test_ll": "-9.5", "wall_seconds": "12.0"},
		{"id": "cp-s1", "config_id": "cp", "dataset": "umls", "model": "cp", "objective": "pll", "constraints": "none",
			"status": report.Finished, "select": "mrr", "valid_mrr": "0.63", "test_mrr": "0.62", "test_hits@10": "0.87",
			"test_ll": "-9.3", "wall_seconds": "14.0"},
		{"id": "cp2-s0", "config_id": "cp2", "dataset": "umls", "model": "cp2", "objective": "mle", "constraints": "none",
			"status": report.Diverged, "select": "mrr"},
	} {
		t.Upsert(r)
	}
	if err := report.Summary(os.Stdout, t); err != nil {
		log.Fatal(err)
	}
	// Output:
	// | model | objective |       MRR       |     Hits@10     |       LL       |   time s   | n |
	// |:------|:----------|:----------------|:----------------|:---------------|:-----------|:--|
	// | cp    | pll       | 0.6100 ± 0.0141 | 0.8600 ± 0.0141 | -9.400 ± 0.141 | 13.0 ± 1.4 | 2 |
	// | cp2   | mle       | diverged        |                 |                |            | 0 |
}

func ExampleSortMetrics() {
	ms := []string{"sem@100", "ll", "hits@10", "ece", "sem@20", "mrr", "hits@1"}
	report.SortMetrics(ms)
	fmt.Println(ms)
	// Output: [mrr hits@1 hits@10 ll ece sem@20 sem@100]
}
