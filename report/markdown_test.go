package report

import (
	"math"
	"strings"
	"testing"
)

func TestMarkdown(t *testing.T) {
	row := func(id, config, model, status, validMRR, testMRR, wall string) Row {
		return Row{"id": id, "config_id": config, "dataset": "umls", "model": model, "objective": "pll",
			"constraints": "none", "rank": "50", "batch_size": "500", "learning_rate": "0.001", "select": "mrr",
			"status": status, "valid_mrr": validMRR, "test_mrr": testMRR, "test_ll": "-10", "test_step_ms": "12.345", "wall_seconds": wall}
	}
	table := &Table{Rows: []Row{
		// cp: config A (two seeds) beats config B on validation.
		row("a0", "cfgA", "cp", "finished", "0.5", "0.4", "10"),
		row("a1", "cfgA", "cp", "finished", "0.7", "0.6", "20"),
		row("b0", "cfgB", "cp", "finished", "0.55", "0.9", "5"),
		// A diverged configuration with a better (bogus) validation score is never best.
		row("c0", "cfgC", "cp", "diverged", "0.99", "0.99", "1"),
		// complex: nothing finished.
		row("d0", "cfgD", "complex", "diverged", "", "", "3"),
		row("e0", "cfgE", "complex", "failed", "", "", "0"),
	}}
	md, err := Markdown("umls", table)
	must(t, err)
	s := string(md)
	best, all, ok := strings.Cut(s, "## All configurations")
	if !ok {
		t.Fatalf("no table of all configurations:\n%s", s)
	}
	if err := containsAll(best, "# Results: umls", "`cfgA`", "0.5000 ± 0.1414", "15.0 ± 7.1", "mrr 0.6000"); err != nil {
		t.Errorf("best table: %v\n%s", err, best)
	}
	for _, notBest := range []string{"`cfgB`", "`cfgC`"} {
		if strings.Contains(best, notBest) {
			t.Errorf("best table selects %s:\n%s", notBest, best)
		}
	}
	// A group with no finished run is still listed, marked.
	if err := containsAll(best, "`cfgD`", "**diverged**", "`cfgE`", "**1 failed**"); err != nil {
		t.Errorf("best table: %v\n%s", err, best)
	}
	if err := containsAll(all, "`cfgA`", "`cfgB`", "`cfgC`", "**diverged**", "0.9000", "## Failed runs", "`e0`"); err != nil {
		t.Errorf("all configurations: %v\n%s", err, all)
	}
	// Columns: the metrics present, titled.
	if err := containsAll(s, "test MRR", "test LL", "step ms", "12.3", "wall s", "valid (select)"); err != nil {
		t.Errorf("%v", err)
	}
	if strings.Contains(s, "test step_ms") {
		t.Errorf("the step time is titled as a test metric")
	}
	if strings.Contains(s, "Hits@1") {
		t.Errorf("a Hits@1 column without data")
	}
}

func TestMarkdownEscapesPipes(t *testing.T) {
	table := &Table{Rows: []Row{{"id": "x", "config_id": "a|b", "status": "finished", "model": "m|n"}}}
	md, err := Markdown("t", table)
	must(t, err)
	if !strings.Contains(string(md), `m\|n`) {
		t.Errorf("pipe not escaped:\n%s", md)
	}
}

func TestFormatCell(t *testing.T) {
	tests := []struct {
		metric string
		xs     []float64
		want   string
	}{
		{"mrr", nil, "–"},
		{"mrr", []float64{0.31234}, "0.3123"},
		{"mrr", []float64{0.3, 0.5}, "0.4000 ± 0.1414"},
		{"ll", []float64{-10.5, -11.5}, "-11.000 ± 0.707"},
		{"ll_at_best_ll", []float64{-17.1004}, "-17.100"},
		{"wall", []float64{60}, "60.0"},
		{"step_ms", []float64{216.819}, "216.8"},
		// A seed that gives a test triple probability 0 makes the mean −Inf.
		{"ll", []float64{math.Inf(-1)}, "-Inf"},
		{"ll", []float64{-17, math.Inf(-1), -18}, "-Inf (1 of 3 infinite)"},
		{"ll", []float64{math.Inf(1), math.Inf(-1)}, "NaN"},
	}
	for _, tt := range tests {
		if got := formatCell(tt.metric, tt.xs); got != tt.want {
			t.Errorf("formatCell(%s, %v) = %q, want %q", tt.metric, tt.xs, got, tt.want)
		}
	}
}

// withSettings sets a row's hashed settings (column settings).
func withSettings(r Row, settings string) Row {
	r["settings"] = settings
	return r
}

// withLR sets a row's learning rate and validation MRR.
func withLR(r Row, lr, valid string) Row {
	r["learning_rate"], r["valid_mrr"] = lr, valid
	return r
}

func TestSummaryColumns(t *testing.T) {
	row := func(id, dataset, constraints string) Row {
		return Row{"id": id, "config_id": id, "dataset": dataset, "model": "cp", "objective": "pll", "constraints": constraints,
			"status": Finished, "select": "mrr", "valid_mrr": "0.5", "test_mrr": "0.4", "wall_seconds": "3"}
	}
	tests := []struct {
		name      string
		rows      []Row
		want, not []string
	}{
		{"no rows", nil, []string{"no finished runs to show"}, []string{"|"}},
		{"one dataset, no constraints", []Row{row("a", "umls", "none")}, []string{"| model", "0.4000", "3.0"}, []string{"dataset", "constraints"}},
		{"two datasets", []Row{row("a", "umls", "none"), row("b", "nations", "none")}, []string{"| dataset", "nations", "umls"}, []string{"constraints"}},
		{"constrained", []Row{row("a", "umls", "schema")}, []string{"constraints", "schema"}, []string{"dataset"}},
		{"one configuration per group says nothing of a selection", []Row{row("a", "umls", "none")}, nil, []string{"selected"}},
		{"a run tested on another data set says so", []Row{withSettings(row("a", "umls", "none"), "dataset=umls; eval.test_on=nations")},
			[]string{"dataset", "umls (tested on nations)"}, nil},
		{"the settings the selection won with", []Row{withLR(row("a", "umls", "none"), "0.1", "0.3"), withLR(row("b", "umls", "none"), "0.01", "0.6"),
			withLR(row("c", "nations", "none"), "0.1", "0.2")}, []string{"| selected", "lr=0.01", "0.4000"}, []string{"lr=0.1 "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			must(t, Summary(&b, &Table{Rows: tt.rows}))
			if err := containsAll(b.String(), tt.want...); err != nil {
				t.Errorf("%v\n%s", err, b.String())
			}
			for _, s := range tt.not {
				if strings.Contains(b.String(), s) {
					t.Errorf("has %q:\n%s", s, b.String())
				}
			}
		})
	}
}

// results.md shows, in a settings column, the hashed keys that tell its
// configurations apart (and only those), and no such column when none do.
func TestMarkdownShowsVaryingSettings(t *testing.T) {
	row := func(id, settings string) Row {
		return Row{"id": id, "config_id": id, "dataset": "nations", "model": "complex", "objective": "pll", "constraints": "none",
			"rank": "50", "batch_size": "200", "learning_rate": "0.1", "status": Finished, "select": "mrr", "valid_mrr": "0.5",
			"test_mrr": "0.5", "settings": settings}
	}
	tab := &Table{Rows: []Row{
		row("a", "dataset=nations; optimizer=adagrad; epochs=60"),
		row("b", "dataset=nations; optimizer=sgd; momentum=0.9; epochs=60"),
	}}
	md, err := Markdown("t", tab)
	if err != nil {
		t.Fatal(err)
	}
	out := string(md)
	for _, want := range []string{" settings ", "| optimizer=adagrad ", "| optimizer=sgd momentum=0.9 "} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "dataset=nations") || strings.Contains(out, "epochs=60") {
		t.Errorf("settings every configuration shares are shown:\n%s", out)
	}
	same := &Table{Rows: []Row{row("a", "dataset=nations"), row("b", "dataset=nations")}}
	if md, _ := Markdown("t", same); strings.Contains(string(md), "settings") {
		t.Errorf("a settings column where none varies:\n%s", md)
	}
}

// A diverged seed's metrics never enter its configuration's means, though
// the run was tested at its best epoch before diverging: one finished seed
// (test MRR 0.3) and one diverged (0.9) show 0.3 over n = 1.
func TestMarkdownLeavesDivergedSeedsOutOfMeans(t *testing.T) {
	row := func(id, status, validMRR, testMRR, wall string) Row {
		return Row{"id": id, "config_id": "cfg", "dataset": "umls", "model": "cp2", "objective": "pll",
			"constraints": "none", "rank": "50", "batch_size": "500", "learning_rate": "0.001", "select": "mrr",
			"status": status, "valid_mrr": validMRR, "test_mrr": testMRR, "wall_seconds": wall}
	}
	md, err := Markdown("umls", &Table{Rows: []Row{row("s0", "finished", "0.31", "0.3", "10"), row("s1", "diverged", "0.95", "0.9", "99")}})
	must(t, err)
	best, _, _ := strings.Cut(string(md), "## All configurations")
	if err := containsAll(best, "0.3000", "mrr 0.3100", "| 1 "); err != nil {
		t.Errorf("%v\n%s", err, best)
	}
	for _, leaked := range []string{"0.6000", "0.9000", "0.6300", "54.5"} {
		if strings.Contains(best, leaked) {
			t.Errorf("the diverged seed's %s enters the means:\n%s", leaked, best)
		}
	}
}

// A search's configurations show the rung they reached, and only those of
// the highest rung compete for the best: an early rung's higher score was
// measured after fewer epochs.
func TestMarkdownSearchRungs(t *testing.T) {
	row := func(id, rung, valid, finished string) Row {
		return Row{"id": id, "config_id": id, "dataset": "nations", "model": "cp2", "objective": "mle", "constraints": "none",
			"rank": "5", "batch_size": "200", "learning_rate": "0.1", "status": Finished, "select": "mrr", "valid_mrr": valid,
			"test_mrr": valid, "rung": rung, "finished_at": finished}
	}
	tab := &Table{Rows: []Row{row("early", "1/3", "0.9", "t1"), row("last", "3/3", "0.5", "t1"), row("middle", "2/3", "0.7", "t1")}}
	md, err := Markdown("t", tab)
	if err != nil {
		t.Fatal(err)
	}
	best, _, _ := strings.Cut(strings.SplitN(string(md), "## Best configuration", 2)[1], "## All configurations")
	if !strings.Contains(best, "`last`") || strings.Contains(best, "`early`") || !strings.Contains(best, "| 3/3 ") {
		t.Errorf("the best configuration is not the last rung's:\n%s", best)
	}
	if !tab.Upsert(row("middle", "3/3", "0.6", "t1")) || tab.Rows[2]["rung"] != "3/3" {
		t.Errorf("a later rung's row ending in the same second did not replace the earlier rung's: %v", tab.Rows[2])
	}
	if tab.Upsert(row("middle", "2/3", "0.7", "t1")) {
		t.Errorf("an earlier rung's row replaced a later rung's")
	}
}
