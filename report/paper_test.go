package report

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"gekc/report/reporttest"
)

const refHeader = "dataset\tmodel\tobjective\tmrr\tmrr_pm\thits@1\thits@3\thits@10\tll\tll_pm\n"

func TestParseReferenceErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		src  string
		want []string // every one must appear in the error
	}{
		{"unknown column", "dataset\tmodel\tobjective\tmmr\n", []string{"ref.tsv:1: unknown column \"mmr\""}},
		{"missing key column", "dataset\tmodel\tmrr\n", []string{"ref.tsv:1: the header has no \"objective\" column"}},
		{"no header", "# only a comment\n", []string{"ref.tsv: no header line"}},
		{"field count", refHeader + "FB\tcp2\tpll\t0.3\n", []string{"ref.tsv:2: 4 fields, the header has 10"}},
		{"not a number", refHeader + "FB\tcp2\tpll\tabc\t\t\t\t\t\t\n", []string{"ref.tsv:2: column mrr: \"abc\" is not a finite number"}},
		{"NaN", refHeader + "FB\tcp2\tpll\tNaN\t\t\t\t\t\t\n", []string{"ref.tsv:2: column mrr: \"NaN\" is not a finite number"}},
		{"hits in percent", refHeader + "FB\tcp2\tpll\t0.3\t\t24.5\t\t\t\t\n", []string{"ref.tsv:2: column hits@1: 24.5 is not a fraction"}},
		{"positive LL", refHeader + "FB\tcp2\tpll\t0.3\t\t\t\t\t17.1\t\n", []string{"ref.tsv:2: column ll: 17.1 is positive"}},
		{"negative spread", refHeader + "FB\tcp2\tpll\t0.3\t-0.1\t\t\t\t\t\n", []string{"ref.tsv:2: column mrr_pm: -0.1 is negative"}},
		{"bad rank", "dataset\tmodel\tobjective\trank\nFB\tcp2\tpll\tlarge\n", []string{"ref.tsv:2: column rank: \"large\" is not a positive integer"}},
		{"zero rank", "dataset\tmodel\tobjective\trank\nFB\tcp2\tpll\t0\n", []string{"ref.tsv:2: column rank: \"0\" is not a positive integer"}},
		{"column twice", "dataset\tmodel\tobjective\tmrr\tmrr\n", []string{"ref.tsv:1: column \"mrr\" appears twice"}},
		{"empty key", refHeader + "FB\t\tpll\t0.3\t\t\t\t\t\t\n", []string{"ref.tsv:2: dataset, model and objective must not be empty"}},
		{"duplicate", refHeader + "FB\tcp2\tpll\t0.3\t\t\t\t\t\t\n#\nFB\tcp2\tpll\t0.4\t\t\t\t\t\t\n",
			[]string{"ref.tsv:4: FB cp2 pll is already on line 2"}},
		{"all at once", refHeader + "FB\tcp2\tpll\tx\t\t\t\t\t\t\nFB\tcp2\tmle\t0.3\t\t2\t\t\t\t\n",
			[]string{"ref.tsv:2: column mrr", "ref.tsv:3: column hits@1"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseReference("ref.tsv", []byte(c.src))
			if err == nil {
				t.Fatalf("no error for %q", c.src)
			}
			if e := containsAll(err.Error(), c.want...); e != nil {
				t.Errorf("error %q: %v", err, e)
			}
		})
	}
}

func TestParseReference(t *testing.T) {
	src := "# comment\n\n" + "model\tobjective\tdataset\tmrr\tll\thits@10\n" +
		"cp2\tpll\tFB\t0.315\t-17.105\t-\n" + "complex\tpll\tFB\t0.342\t\t0.525\r\n"
	ref, err := ParseReference("ref.tsv", []byte(src))
	must(t, err)
	if len(ref.Rows) != 2 {
		t.Fatalf("%d rows, want 2", len(ref.Rows))
	}
	r := ref.Rows[0]
	if r.Line != 4 || r.Dataset != "FB" || r.Model != "cp2" || r.Objective != "pll" {
		t.Errorf("row 0 = %+v", r)
	}
	if len(r.Values) != 2 || r.Values["mrr"] != 0.315 || r.Values["ll"] != -17.105 {
		t.Errorf("row 0 values = %v, want mrr and ll only", r.Values)
	}
	if v := ref.Rows[1].Values; len(v) != 2 || v["hits@10"] != 0.525 {
		t.Errorf("row 1 values = %v, want mrr and hits@10 (the CR dropped)", v)
	}
}

// TestPaperReferenceFile reads the committed copy of the paper's tables:
// it must parse, and have all ten rows of Table 2 for each of its three
// datasets, with a log-likelihood for exactly the GeKC rows.
func TestPaperReferenceFile(t *testing.T) {
	ref, err := ReadReference(filepath.Join("..", "results", "paper-reference.tsv"))
	must(t, err)
	count := map[string]int{}
	for _, r := range ref.Rows {
		count[r.Dataset]++
		if r.Rank != 1000 {
			t.Errorf("line %d: rank %d, want 1000 (the paper's d)", r.Line, r.Rank)
		}
		_, hasLL := r.Values["ll"]
		gekc := strings.HasSuffix(r.Model, "2") || strings.HasSuffix(r.Model, "+")
		if hasLL != gekc {
			t.Errorf("line %d: %s %s has an LL: %v, want %v", r.Line, r.Model, r.Objective, hasLL, gekc)
		}
		for _, k := range []string{"mrr", "mrr_pm", "hits@1", "hits@3", "hits@10"} {
			if _, ok := r.Values[k]; !ok {
				t.Errorf("line %d: no %s", r.Line, k)
			}
		}
		if h := r.Values; !(h["hits@1"] <= h["hits@3"] && h["hits@3"] <= h["hits@10"] && h["hits@1"] <= h["mrr"]+0.005) {
			t.Errorf("line %d: Hits@1/3/10 %v %v %v out of order or above the MRR (Hits@1 ≤ MRR always)", r.Line, h["hits@1"], h["hits@3"], h["hits@10"])
		}
	}
	for _, ds := range []string{"FB15k-237", "WN18RR", "ogbl-biokg"} {
		if count[ds] != 10 {
			t.Errorf("%s: %d rows, want 10 (CP, ComplEx by PLL; four GeKCs by PLL and MLE)", ds, count[ds])
		}
	}
}

func TestCompareMarkdown(t *testing.T) {
	ref, err := ParseReference("paper.tsv", []byte(refHeader+
		"FB\tcomplex2\tpll\t0.334\t0.001\t0.245\t0.369\t0.511\t-17.100\t0.026\n"+
		"FB\tcp2\tmle\t0.282\t0.004\t0.205\t0.308\t0.435\t-15.982\t0.028\n"+
		"FB\tcp2\tpll\t0.315\t0.003\t0.231\t0.348\t0.482\t-17.105\t0.031\n"+
		"FB\tcomplex\tpll\t0.342\t0.005\t0.252\t0.375\t0.525\t\t\n"+
		"FB\tcp+\tpll\t0.237\t0.003\t0.170\t0.258\t0.367\t-16.773\t0.040\n"+
		"WN\tcp2\tpll\t0.104\t0.001\t0.067\t0.121\t0.176\t-24.911\t0.241\n"))
	must(t, err)
	row := func(id, config, model, obj, batch, valid, mrr, llBest, ll string) Row {
		return Row{"id": id, "config_id": config, "dataset": "FB", "model": model, "objective": obj,
			"constraints": "none", "rank": "1000", "batch_size": batch, "learning_rate": "0.001",
			"status": Finished, "select": "mrr", "valid_mrr": valid, "test_mrr": mrr, "test_hits@1": "0.25",
			"test_hits@3": "0.37", "test_hits@10": "0.51", "test_ll": ll, "test_ll_at_best_ll": llBest}
	}
	tab := &Table{}
	for _, r := range []Row{
		// ComplEx² PLL: batch 2000 (two seeds) wins on validation over 5000,
		// whose test MRR is higher: selection is on validation.
		row("a0", "a", "complex2", "pll", "2000", "0.342", "0.334", "-17.10", "-18.0"),
		row("a1", "a", "complex2", "pll", "2000", "0.340", "0.336", "-17.20", "-18.1"),
		row("b0", "b", "complex2", "pll", "5000", "0.338", "0.399", "-17.00", "-18.2"),
		// CP² MLE: MRR 0.02 below the reference.
		row("c0", "c", "cp2", "mle", "1000", "0.27", "0.262", "-16.0", "-16.0"),
		// CP² PLL: no LL at the best validation LL recorded.
		row("d0", "d", "cp2", "pll", "1000", "0.32", "0.315", "", "-18.2"),
		// CP+ PLL diverged: no finished run.
		{"id": "e0", "config_id": "e", "dataset": "FB", "model": "cp+", "objective": "pll", "constraints": "none",
			"status": Diverged, "select": "mrr"},
	} {
		tab.Upsert(r)
	}
	md, err := CompareMarkdown(tab, ref, DefaultTolerance)
	must(t, err)
	out := string(md)
	lines := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		f := strings.Split(l, "|")
		if len(f) > 3 {
			lines[strings.TrimSpace(f[1])+" "+strings.TrimSpace(f[2])] = l
		}
	}
	for key, want := range map[string][]string{
		"ComplEx² PLL": {"| 2000, 5000 |", "| 2 |", "0.3350 ± 0.0028", "| +0.001 |", "25.0 / 37.0 / 51.0",
			"-17.150 ± 0.141", "| -0.05 |", "| yes "},
		"CP² MLE":     {"| -0.020 |", "**no** (MRR)"},
		"CP² PLL":     {"-18.200 ¹", "yes (MRR only)"},
		"ComplEx PLL": {"no finished run"},
		"CP+ PLL":     {"no finished run", "-16.773 ± 0.040"},
	} {
		l, ok := lines[key]
		if !ok {
			t.Errorf("no %s row in\n%s", key, out)
			continue
		}
		if e := containsAll(l, want...); e != nil {
			t.Errorf("%s row %q: %v", key, l, e)
		}
	}
	if strings.Contains(out, "## WN") {
		t.Errorf("a section for WN, which has no runs:\n%s", out)
	}
	if e := containsAll(out, "## FB", "Reference: `paper.tsv`", "¹ The test LL of the MRR-selected epoch"); e != nil {
		t.Errorf("%v in\n%s", e, out)
	}
}

// TestCommittedPaperTables checks every committed paper.md against the
// results.tsv beside it and the committed reference: a number in a
// committed comparison is what the record gives, never edited by hand.
func TestCommittedPaperTables(t *testing.T) {
	root := filepath.Join("..", "results")
	ref, err := ReadReference(filepath.Join(root, "paper-reference.tsv"))
	must(t, err)
	paths, err := filepath.Glob(filepath.Join(root, "*", "paper.md"))
	must(t, err)
	if len(paths) == 0 {
		t.Fatal("no results/*/paper.md: the d = 1000 comparisons are committed")
	}
	for _, p := range paths {
		committed, err := os.ReadFile(p)
		must(t, err)
		tab, err := ReadTSV(filepath.Join(filepath.Dir(p), "results.tsv"))
		must(t, err)
		got, err := CompareMarkdown(tab, ref, DefaultTolerance)
		must(t, err)
		if string(got) != string(committed) {
			t.Errorf("%s differs from what results.tsv gives; run -analyze paper again\ngot:\n%s", p, got)
		}
	}
}

// TestREADMEQuotesPaperTables: between its markers each grid's notes in
// the reproduction report, results/<grid>/NOTES.md, hold the grid's
// committed paper.md from its first dataset heading on (headings one level
// down), and the report's index, results/README.md, holds the key columns
// of every committed paper.md in one table, as scripts/readme-paper-tables
// pastes them, so a number in the report is one the record gives and no
// stale row or note survives.
func TestREADMEQuotesPaperTables(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("..", "results", "*", "paper.md"))
	must(t, err)
	if len(paths) == 0 {
		t.Fatal("no results/*/paper.md: the d = 1000 comparisons are committed")
	}
	index := "| dataset | model | objective | n | MRR | ref MRR | LL | ref LL | matches |\n" +
		"| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n"
	for _, p := range paths {
		md, err := os.ReadFile(p)
		must(t, err)
		body := string(md)
		i := strings.Index(body, "\n## ")
		if i < 0 {
			t.Fatalf("%s has no dataset heading", p)
		}
		body = strings.ReplaceAll(body[i+1:], "\n## ", "\n### ")
		body = "### " + strings.TrimPrefix(body, "## ")
		grid := filepath.Base(filepath.Dir(p))
		marker := "<!-- " + grid + "/paper.md -->\n"
		notes := filepath.Join("results", grid, "NOTES.md")
		text, err := os.ReadFile(filepath.Join("..", notes))
		must(t, err)
		if !strings.Contains(string(text), marker+body+"<!-- end -->\n") {
			t.Errorf("%s does not hold %s between %q and <!-- end --> (run scripts/readme-paper-tables)", notes, p, strings.TrimSpace(marker))
		}
		rows, err := paperKeyColumns(string(md))
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		index += rows
	}
	const marker = "<!-- paper.md: key columns -->\n"
	name := filepath.Join("results", "README.md")
	readme, err := os.ReadFile(filepath.Join("..", name))
	must(t, err)
	if !strings.Contains(string(readme), marker+index+"\n<!-- end -->\n") {
		t.Errorf("%s does not hold the key columns of %d paper.md between %q and <!-- end --> (run scripts/readme-paper-tables); want\n%s",
			name, len(paths), strings.TrimSpace(marker), index)
	}
}

// paperKeyColumns gives the rows of a paper.md's tables as the index
// quotes them: the columns model, objective, n, MRR, ref MRR, LL, ref LL and
// matches, each row led by the name of the dataset heading above it.
func paperKeyColumns(md string) (string, error) {
	want := []string{"model", "objective", "n", "MRR", "ref MRR", "LL", "ref LL", "matches"}
	var b strings.Builder
	var dataset string
	var col map[string]int
	alignment := regexp.MustCompile(`^\|[ :|-]+$`)
	for _, line := range strings.Split(md, "\n") {
		if d, ok := strings.CutPrefix(line, "## "); ok {
			dataset, col = d, nil
			continue
		}
		if !strings.HasPrefix(line, "|") {
			col = nil
			continue
		}
		cells := strings.Split(line, "|")
		if col == nil {
			col = map[string]int{}
			for i := 1; i < len(cells)-1; i++ {
				col[strings.TrimSpace(cells[i])] = i
			}
			for _, w := range want {
				if _, ok := col[w]; !ok {
					return "", fmt.Errorf("a table under %q has no column %q", dataset, w)
				}
			}
			continue
		}
		if alignment.MatchString(line) {
			continue
		}
		b.WriteString("| " + dataset)
		for _, w := range want {
			b.WriteString(" | " + strings.TrimSpace(cells[col[w]]))
		}
		b.WriteString(" |\n")
	}
	if b.Len() == 0 {
		return "", fmt.Errorf("no table rows")
	}
	return b.String(), nil
}

func TestDelta(t *testing.T) {
	ref := map[string]float64{"mrr": 0.315}
	for _, c := range []struct {
		x            float64
		ok           bool
		metric       string
		want, within string
	}{
		{0.3154, true, "mrr", "0.000", "yes"},
		{0.3149, true, "mrr", "0.000", "yes"}, // no "-0.000"
		{0.3256, true, "mrr", "+0.011", "no"},
		{0.325, true, "mrr", "+0.010", "yes"},  // exactly the tolerance
		{0.3254, true, "mrr", "+0.010", "yes"}, // judged as printed
		{0.295, true, "mrr", "-0.020", "no"},
		{0.3, false, "mrr", "–", ""},
		{0.3, true, "ll", "–", ""},
	} {
		got, within := delta(c.x, c.ok, ref, c.metric, 0.01, 3)
		if got != c.want || within != c.within {
			t.Errorf("delta(%v, %v, %s) = %q, %q; want %q, %q", c.x, c.ok, c.metric, got, within, c.want, c.within)
		}
	}
}

// TestCommittedResultTables: every committed results.md is what its
// results.tsv gives, and every run of results.tsv has its metrics.json, so
// no number in a committed table was edited by hand or lost its record.
func TestCommittedResultTables(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("..", "results", "*", "results.tsv"))
	must(t, err)
	for _, p := range paths {
		dir := filepath.Dir(p)
		tab, err := ReadTSV(p)
		must(t, err)
		committed, err := os.ReadFile(filepath.Join(dir, "results.md"))
		must(t, err)
		// The title is the grid's name (grid.toml's name key), which the
		// demo's reference copy does not share with its directory.
		name := filepath.Base(dir)
		if g, err := os.ReadFile(filepath.Join(dir, "grid.toml")); err == nil {
			if m := regexp.MustCompile(`(?m)^name\s*=\s*"([^"]+)"`).FindSubmatch(g); m != nil {
				name = string(m[1])
			}
		}
		got, err := Markdown(name, tab)
		must(t, err)
		if string(got) != string(committed) {
			t.Errorf("%s/results.md differs from what its results.tsv gives", dir)
		}
		for _, r := range tab.Rows {
			if _, err := os.Stat(filepath.Join(dir, "runs", r["id"], "metrics.json")); err != nil {
				t.Errorf("%s: run %s has a row but no record: %v", dir, r["id"], err)
			}
		}
	}
}

// The reference's rank restricts the comparison to runs of that d; a table
// with none is not covered, and CompareMarkdown says so. Seeds of which
// only some recorded the LL at the best validation LL give ², and a
// reference row without MRR or LL leaves the verdict open.
func TestCompareMarkdownRankAndNotes(t *testing.T) {
	ref, err := ParseReference("p.tsv", []byte("dataset\tmodel\tobjective\trank\tmrr\tll\n"+
		"FB\tcp2\tpll\t1000\t0.315\t-17.1\n"+
		"FB\tcp2\tmle\t1000\t\t\n"))
	must(t, err)
	row := func(id, rank, llBest string) Row {
		return Row{"id": id, "config_id": "c" + rank, "dataset": "FB", "model": "cp2", "objective": "pll",
			"constraints": "none", "rank": rank, "batch_size": "1000", "learning_rate": "0.001", "status": Finished,
			"select": "mrr", "valid_mrr": "0.3", "test_mrr": "0.31", "test_ll": "-18", "test_ll_at_best_ll": llBest}
	}
	d200 := &Table{Rows: []Row{row("a", "200", "-17")}}
	if ref.Covers(d200) {
		t.Error("a d = 200 table covered by a d = 1000 reference")
	}
	if _, err := CompareMarkdown(d200, ref, DefaultTolerance); err == nil || !strings.Contains(err.Error(), "p.tsv has no values") {
		t.Errorf("d = 200 table: %v", err)
	}
	// Runs no reference row can take (selected on the LL, as the LL
	// checks are, or constrained) give no comparison either.
	byLL, constrained := row("l", "1000", "-17"), row("c", "1000", "-17")
	byLL["select"], constrained["constraints"] = "ll", "domain"
	for _, tab := range []*Table{{Rows: []Row{byLL}}, {Rows: []Row{constrained}}} {
		if ref.Covers(tab) {
			t.Errorf("covered by a table of one run selected on %s with constraints %s",
				tab.Rows[0]["select"], tab.Rows[0]["constraints"])
		}
	}
	mixed := &Table{Rows: []Row{row("a", "200", "-17"), row("b0", "1000", "-17.0"), row("b1", "1000", ""),
		{"id": "m", "config_id": "m", "dataset": "FB", "model": "cp2", "objective": "mle", "constraints": "none",
			"rank": "1000", "status": Finished, "select": "mrr", "valid_mrr": "0.2", "test_mrr": "0.2"}}}
	if !ref.Covers(mixed) {
		t.Fatal("a table with d = 1000 runs not covered")
	}
	md, err := CompareMarkdown(mixed, ref, DefaultTolerance)
	must(t, err)
	out := string(md)
	for _, want := range []string{
		"| CP²   | PLL       | 1000 | 1000    | 0.001 | 2 |", // the d = 200 configuration is not a candidate
		"**-17.000** ² (1 of 2)",
		"² Over the seeds that recorded",
		"| –     | –       |\n", // MLE: no reference MRR nor LL, no verdict
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
}

// A seed whose test LL is −Inf (a test triple of probability 0) is not
// dropped: the row's LL is −Inf and does not match. A NaN test metric is
// left out of the mean but shown beside n and in results.md's status.
func TestNonFiniteTestValues(t *testing.T) {
	ref, err := ParseReference("p.tsv", []byte("dataset\tmodel\tobjective\trank\tmrr\tll\n"+
		"FB\tcp2\tpll\t1000\t0.315\t-17.1\n"))
	must(t, err)
	row := func(id, mrr, ll string) Row {
		return Row{"id": id, "config_id": "c", "dataset": "FB", "model": "cp2", "objective": "pll",
			"constraints": "none", "rank": "1000", "batch_size": "1000", "learning_rate": "0.001", "status": Finished,
			"select": "mrr", "valid_mrr": "0.3", "test_mrr": mrr, "test_ll": ll, "test_ll_at_best_ll": ll}
	}
	tab := &Table{Rows: []Row{row("s0", "0.315", "-17.1"), row("s1", "NaN", "-Inf"), row("s2", "0.315", "-17.1")}}
	md, err := CompareMarkdown(tab, ref, DefaultTolerance)
	must(t, err)
	if err := containsAll(string(md), "| 3 ⁴ (NaN test: 1 mrr) |", "0.3150 ± 0.0000", "-Inf (1 of 3 infinite)", "**no** (LL)",
		"⁴ Finished seeds whose test metric is NaN"); err != nil {
		t.Errorf("paper.md: %v\n%s", err, md)
	}
	res, err := Markdown("FB", tab)
	must(t, err)
	if err := containsAll(string(res), "finished (NaN test: 1 mrr)", "-Inf (1 of 3 infinite)"); err != nil {
		t.Errorf("results.md: %v\n%s", err, res)
	}
}

// The paper's marking: within a model family over both objectives, the
// best mean is bold, a row the one-sided Mann–Whitney test puts below it
// at 99% is not (5 seeds all below 5: p = 1/252), an overlapping one is
// (with its exact p), and one with too few seeds for any difference to
// reach 99% is left unmarked with a note. ComplEx's family is marked on its
// own. Minutes are the mean wall time beside the paper's, with the ratio
// and the hosts' Sgemm range.
func TestCompareMarkdownMarksBestByMannWhitney(t *testing.T) {
	ref, err := ParseReference("paper.tsv", []byte("dataset\tmodel\tobjective\tmrr\tll\tminutes\n"+
		"FB\tcp2\tpll\t0.315\t-17.1\t8\n"+
		"FB\tcp\tpll\t0.310\t-\t8\n"+
		"FB\tcp+\tpll\t0.237\t-16.7\t1\n"+
		"FB\tcp2\tmle\t0.282\t-16.0\t7\n"+
		"FB\tcomplex\tpll\t0.342\t-\t36\n"))
	must(t, err)
	tab := &Table{}
	add := func(model, obj string, mrrs, lls []float64, wall, sgemm string) {
		for i, m := range mrrs {
			r := Row{"id": fmt.Sprintf("%s-%s-%d", model, obj, i), "config_id": model + "-" + obj, "dataset": "FB",
				"model": model, "objective": obj, "constraints": "none", "rank": "1000", "batch_size": "1000",
				"learning_rate": "0.001", "status": Finished, "select": "mrr", "valid_mrr": "0.3",
				"test_mrr": strconv.FormatFloat(m, 'f', -1, 64), "wall_seconds": wall, "sgemm_gflops": sgemm}
			if lls != nil {
				r["test_ll_at_best_ll"] = strconv.FormatFloat(lls[i], 'f', -1, 64)
			}
			tab.Upsert(r)
		}
	}
	add("cp2", "pll", []float64{0.316, 0.318, 0.317, 0.319, 0.315}, []float64{-17.2, -17.1, -17.3, -17.2, -17.1}, "1200", "101.5")
	add("cp", "pll", []float64{0.310, 0.311, 0.309, 0.312, 0.308}, nil, "600", "")
	add("cp+", "pll", []float64{0.314, 0.320, 0.313, 0.321, 0.312}, []float64{-16.7, -16.8, -16.6, -16.7, -16.7}, "60", "98")
	add("cp2", "mle", []float64{0.283}, []float64{-17.5}, "420", "")
	add("complex", "pll", []float64{0.340}, nil, "2160", "")
	md, err := CompareMarkdown(tab, ref, DefaultTolerance)
	must(t, err)
	out := string(md)
	lines := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Split(l, "|"); len(f) > 3 {
			lines[strings.TrimSpace(f[1])+" "+strings.TrimSpace(f[2])] = l
		}
	}
	_, pOverlap, err := MannWhitneyGreater([]float64{0.316, 0.318, 0.317, 0.319, 0.315}, []float64{0.314, 0.320, 0.313, 0.321, 0.312})
	must(t, err)
	for key, want := range map[string][]string{
		// cp2 PLL's MRR mean 0.317 is the family's best; cp+ (mean 0.316)
		// overlaps it; cp (5 seeds all lower) is below at p = 1/252.
		"CP² PLL":     {"**0.3170 ± 0.0032**", "| best ", "| 20 ", "| 8 ", "| 2.5 "},
		"CP PLL":      {"| 0.3100 ± 0.0032 ", "below (p = 0.004)", "| 10 ", "| 1.2 "},
		"CP+ PLL":     {"**0.3160 ± 0.0084**", fmt.Sprintf("p = %.2f", pOverlap), "| 1.0 ", "| 1.0 "},
		"CP² MLE":     {"| 0.2830 ", "n too small ³ (p = 0.17)", "| 7.0 "},
		"ComplEx PLL": {"**0.3400**", "| best ", "| 36 ", "| 36 ", "| 1.0 "},
	} {
		l, ok := lines[key]
		if !ok {
			t.Errorf("no %s row in\n%s", key, out)
			continue
		}
		if e := containsAll(l, want...); e != nil {
			t.Errorf("%s row %q: %v", key, l, e)
		}
	}
	// The LL: cp+ (mean -16.7) is best; cp2 PLL (all 5 below all of
	// cp+'s) is below; cp2 MLE's one seed cannot be tested.
	if l := lines["CP+ PLL"]; !strings.Contains(l, "**-16.700 ± 0.141**") {
		t.Errorf("CP+ PLL's LL is not marked best: %q", l)
	}
	if l := lines["CP² PLL"]; !strings.Contains(l, "| -17.180 ± 0.167 ") || !strings.Contains(l, "below (p = 0.004)") {
		t.Errorf("CP² PLL's LL: %q", l)
	}
	for _, want := range []string{"Sgemm 98–102 GFLOP/s", "(10 runs recorded it)", "³ With these seeds no difference can reach 99%"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
}

// A reference that reports 0 minutes (allowed: minutes need only be
// non-negative) gives no ratio, rather than "+Inf"; one without minutes
// gives none either. The cells checked are the row's minutes, ref minutes
// and × ref, for one run of 600 s.
func TestCompareMarkdownMinutesRatio(t *testing.T) {
	for _, c := range []struct {
		name, refMinutes string
		want             [3]string
	}{
		{"reference minutes", "4", [3]string{"10", "4", "2.5"}},
		{"zero reference minutes", "0", [3]string{"10", "0", "–"}},
		{"no reference minutes", "-", [3]string{"10", "–", "–"}},
	} {
		ref, err := ParseReference("paper.tsv", []byte("dataset\tmodel\tobjective\tmrr\tminutes\n"+
			"FB\tcp2\tpll\t0.315\t"+c.refMinutes+"\n"))
		must(t, err)
		tab := &Table{Rows: []Row{{"id": "a", "config_id": "a", "dataset": "FB", "model": "cp2", "objective": "pll",
			"constraints": "none", "rank": "1000", "batch_size": "1000", "learning_rate": "0.001", "status": Finished,
			"select": "mrr", "valid_mrr": "0.3", "test_mrr": "0.316", "wall_seconds": "600"}}}
		md, err := CompareMarkdown(tab, ref, DefaultTolerance)
		must(t, err)
		var got []string
		for _, l := range strings.Split(string(md), "\n") {
			if f := strings.Split(l, "|"); len(f) > 5 && strings.TrimSpace(f[1]) == "CP²" {
				for _, cell := range f[len(f)-5 : len(f)-2] { // minutes, ref minutes, × ref
					got = append(got, strings.TrimSpace(cell))
				}
			}
		}
		if len(got) != 3 || [3]string(got) != c.want {
			t.Errorf("%s: minutes, ref minutes, × ref = %q, want %q in\n%s", c.name, got, c.want, md)
		}
	}
}

// Runs on a synthetic data set that bears a published one's name (a planted
// "ogbl-biokg") are set beside no published value: the table skips them,
// and a table of only such runs has no comparison at all.
func TestCompareMarkdownSkipsSyntheticData(t *testing.T) {
	ref, err := ParseReference("paper.tsv", []byte("dataset\tmodel\tobjective\tmrr\nFB\tcp2\tpll\t0.315\n"))
	must(t, err)
	row := func(id, mrr, synthetic string) Row {
		return Row{"id": id, "config_id": id, "dataset": "FB", "model": "cp2", "objective": "pll", "constraints": "none",
			"rank": "1000", "batch_size": "1000", "learning_rate": "0.001", "status": Finished, "select": "mrr",
			"valid_mrr": "0.3", "test_mrr": mrr, "synthetic": synthetic}
	}
	only := &Table{Rows: []Row{row("planted", "0.9", "yes")}}
	if ref.Covers(only) {
		t.Error("a reference covers a table of synthetic runs only")
	}
	mixed := &Table{Rows: []Row{row("planted", "0.9", "yes"), row("real", "0.316", "")}}
	md, err := CompareMarkdown(mixed, ref, DefaultTolerance)
	must(t, err)
	if !strings.Contains(string(md), "0.3160") || strings.Contains(string(md), "0.9000") {
		t.Errorf("the synthetic run is compared with the paper:\n%s", md)
	}
}

// Every cell of a comparison row sits under its own header: a row no run
// answers has the paper's values under "ref …" and gekc's columns empty.
// A run tested on another data set (eval.test_on) answers no row.
func TestCompareMarkdownCellsUnderTheirHeaders(t *testing.T) {
	ref, err := ParseReference("paper.tsv", []byte(refHeader+"FB\tcp\tpll\t0.310\t0.001\t0.224\t0.341\t0.482\t\t\n"))
	must(t, err)
	tab := &Table{Rows: []Row{{"id": "x", "config_id": "x", "dataset": "FB", "model": "cp", "objective": "pll",
		"constraints": "none", "rank": "1000", "status": Finished, "select": "mrr", "valid_mrr": "0.3", "test_mrr": "0.9",
		"settings": "dataset=FB" + SettingsSeparator + "eval.test_on=other"}, {"id": "y", "config_id": "y", "dataset": "FB",
		"model": "cp2", "objective": "pll", "constraints": "none", "rank": "1000", "status": Finished, "select": "mrr",
		"valid_mrr": "0.3", "test_mrr": "0.3"}}}
	md, err := CompareMarkdown(tab, ref, DefaultTolerance)
	must(t, err)
	header, rows := reporttest.MarkdownCells(string(md))
	if len(rows) != 1 {
		t.Fatalf("%d rows:\n%s", len(rows), md)
	}
	cell := map[string]string{}
	for i, h := range header {
		cell[h] = rows[0][i]
	}
	for h, want := range map[string]string{"model": "CP", "n": "0", "MRR": "–", "ref MRR": "0.310 ± 0.001",
		"Hits@1 / 3 / 10": "–", "ref Hits@1 / 3 / 10": "22.4 / 34.1 / 48.2", "LL": "–", "matches": "no finished run"} {
		if cell[h] != want {
			t.Errorf("column %q = %q, want %q\n%s", h, cell[h], want, md)
		}
	}
}

// markBest's cases, one family each: the best mean is marked and tested
// against; a row below it at 95% but not at 99% stays marked (U = 23 of
// 25: 4 of the 252 splits reach it, p = 0.016); one below at 99% is not;
// rows sharing the best mean are all best, the others tested against the
// one with most seeds; and where ties leave no split able to reach 99%
// (x = 1,1,1,1,2 against 1,1,1,1: p ≥ 5/9 whatever the labels, though
// 1/C(9, 5) is below 0.01) the row is left unmarked, said untestable.
func TestMarkBest(t *testing.T) {
	type row struct {
		model  string
		values []float64
		cell   string
		marked bool
	}
	for _, c := range []struct {
		name       string
		rows       []row
		untestable bool
	}{
		{"below at 95% only", []row{
			{"cp2", []float64{0.30, 0.31, 0.32, 0.33, 0.34}, "best", true},
			{"cp+", []float64{0.315, 0.29, 0.28, 0.27, 0.26}, "p = 0.02", true},
		}, false},
		{"below at 99%", []row{
			{"cp", []float64{0.25, 0.24, 0.23, 0.22, 0.21}, "below (p = 0.004)", false},
			{"cp2", []float64{0.30, 0.31, 0.32, 0.33, 0.34}, "best", true},
		}, false},
		{"equal means", []row{
			{"cp2", []float64{0.3}, "best", true},
			{"cp+", []float64{0.3, 0.3, 0.3}, "best", true},
			{"cp", []float64{0.1, 0.1, 0.1}, "n too small ³ (p = 0.05)", false}, // against cp+'s 3, not cp2's 1 (p = 0.25)
		}, true},
		{"ties leave no decision", []row{
			{"cp2", []float64{1, 1, 1, 1, 2}, "best", true},
			{"cp+", []float64{1, 1, 1, 1}, "n too small ³ (p = 0.56)", false},
		}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			results := make([]*rowResult, len(c.rows))
			values := map[*rowResult][]float64{}
			for i, r := range c.rows {
				results[i] = &rowResult{ref: ReferenceRow{Model: r.model}, pick: &configSummary{}}
				values[results[i]] = r.values
			}
			got := map[*rowResult]string{}
			untestable := markBest(results, func(r *rowResult) []float64 { return values[r] }, func(r *rowResult, cell string, marked bool) {
				got[r] = fmt.Sprintf("%s %v", cell, marked)
			})
			for i, r := range c.rows {
				if want := fmt.Sprintf("%s %v", r.cell, r.marked); got[results[i]] != want {
					t.Errorf("%s %v: %q, want %q", r.model, r.values, got[results[i]], want)
				}
			}
			if untestable != c.untestable {
				t.Errorf("untestable = %v, want %v", untestable, c.untestable)
			}
		})
	}
}
