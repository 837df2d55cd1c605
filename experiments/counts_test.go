package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The counts a sweep reports — its closing line, the head of results.md,
// each configuration's n, the finished runs -resume=false refuses to
// overwrite — leave failed runs out; a diverged run is final but not
// finished.
func TestRunCountsLeaveOutFailedRuns(t *testing.T) {
	fx := newSweepFixture(t, toyGrid)
	ids := fx.runIDs(t)
	diverged, failed, panicked := ids[3], ids[5], ids[7]
	fake := newFake()
	fake.diverge = regexp.MustCompile("^" + regexp.QuoteMeta(diverged) + "$")
	fake.fail = regexp.MustCompile("^(" + regexp.QuoteMeta(failed) + "|" + regexp.QuoteMeta(panicked) + ")$")
	code, _, stderr := runInProcess(t, context.Background(), fake, fx.args()...)
	if code != exitRunsFailed {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if want := "sweep toy: 9 finished, 1 diverged, 2 failed now; 0 were already done; 0 being trained elsewhere; 0 interrupted."; !strings.Contains(stderr, want) {
		t.Errorf("closing line: want %q in\n%s", want, stderr)
	}
	md, err := os.ReadFile(filepath.Join(fx.out, resultsMDName))
	must(t, err)
	if want := "12 runs in 5 configurations: 9 finished, 1 diverged, 2 failed."; !strings.Contains(string(md), want) {
		t.Errorf("results.md: want %q in\n%s", want, md)
	}
	// n per configuration: the seeds that finished.
	g, err := LoadGrid(fx.grid, nil)
	must(t, err)
	wantN := map[string]int{}
	for _, r := range g.Runs {
		wantN[r.Spec.ConfigID()] += 0
		if r.ID != diverged && r.ID != failed && r.ID != panicked {
			wantN[r.Spec.ConfigID()]++
		}
	}
	_, all, _ := strings.Cut(string(md), "## All configurations")
	header, rows := markdownTable(all)
	col := -1
	for i, h := range header {
		if h == "n" {
			col = i
		}
	}
	if col < 0 || len(rows) != len(wantN) {
		t.Fatalf("all-configurations table: header %q, %d rows, want %d:\n%s", header, len(rows), len(wantN), all)
	}
	for _, row := range rows {
		cfg := strings.Trim(row[4], "`")
		if row[col] != strconv.Itoa(wantN[cfg]) {
			t.Errorf("%s: n = %s, want %d (its finished seeds)", cfg, row[col], wantN[cfg])
		}
	}
	final, err := finishedRuns(fx.out)
	must(t, err)
	if len(final) != 10 {
		t.Errorf("finishedRuns: %d (%v), want the 9 finished and the diverged one", len(final), final)
	}
	for _, id := range final {
		if id == failed || id == panicked {
			t.Errorf("finishedRuns lists the failed run %s", id)
		}
	}

	fake.fail, fake.diverge = nil, nil
	code, _, stderr = runInProcess(t, context.Background(), fake, fx.args()...)
	if code != exitOK {
		t.Fatalf("resumed: exit %d: %s", code, stderr)
	}
	if want := "sweep toy: 2 finished, 0 diverged, 0 failed now; 10 were already done;"; !strings.Contains(stderr, want) {
		t.Errorf("resumed closing line: want %q in\n%s", want, stderr)
	}
}

// markdownTable splits the first markdown table in s into its header and
// rows of trimmed cells.
func markdownTable(s string) (header []string, rows [][]string) {
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "|") {
			if header != nil {
				break
			}
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		switch {
		case header == nil:
			header = cells
		case strings.Trim(cells[0], "-: ") == "":
		default:
			rows = append(rows, cells)
		}
	}
	return header, rows
}
