package scaling

import (
	"bytes"
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"gekc/report"
)

// RenderMarkdown tabulates rows as scaling.md, one table per study with a
// row per batch size or entity count and a column per model; o gives the
// settings the text states.
func RenderMarkdown(o Options, rows []Row) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("# Training-cost scaling\n\n")
	fmt.Fprintf(&b, "One PLL training step (forward, backward and Adam update, float32) on random triples, "+
		"|R| = %d, d = %d. Time: the median of the timed steps (%d, after %d warm-up); memory: the peak RSS of the process that "+
		"measured it (start-up included), each point in a process of its own. "+
		"oom: the point's resident memory passed %s. "+
		"Paper: figure fig:pll-scaling and appendix app:training-benchmark-details.\n\n",
		o.Relations, o.Rank, o.Steps, o.Warm, capText(o.MaxMem))
	env := map[string]bool{}
	for _, r := range rows {
		env[fmt.Sprintf("GOMAXPROCS %d, OPENBLAS_CORETYPE %s", r.Procs, cmp.Or(r.Coretype, "unset"))] = true
	}
	if len(env) > 0 {
		fmt.Fprintf(&b, "Environment: %s.\n\n", strings.Join(slices.Sorted(maps.Keys(env)), "; "))
	}
	for _, st := range []struct {
		study, title, xname string
		x                   func(Row) int
	}{
		{StudyBatch, fmt.Sprintf("By batch size, |E| = %d", o.AllEntities), "batch", func(r Row) int { return r.Batch }},
		{StudyEntities, fmt.Sprintf("By number of entities, batch %d", o.Batch), "entities", func(r Row) int { return r.Entities }},
	} {
		var xs []int
		var names []string
		cells := map[string]string{}
		for _, r := range rows {
			if r.Study != st.study {
				continue
			}
			x := st.x(r)
			if !slices.Contains(xs, x) {
				xs = append(xs, x)
			}
			if !slices.Contains(names, r.Model) {
				names = append(names, r.Model)
			}
			cells[r.Model+"\x00"+strconv.Itoa(x)] = cell(r)
		}
		if len(xs) == 0 {
			continue
		}
		slices.Sort(xs)
		fmt.Fprintf(&b, "## %s\n\nEach cell: time per step, peak RSS.\n\n", st.title)
		var lines [][]string
		for _, x := range xs {
			line := []string{strconv.Itoa(x)}
			for _, n := range names {
				line = append(line, strings.ReplaceAll(cmp.Or(cells[n+"\x00"+strconv.Itoa(x)], "–"), "|", `\|`))
			}
			lines = append(lines, line)
		}
		if err := report.MarkdownTable(&b, append([]string{st.xname}, names...), lines); err != nil {
			return nil, err
		}
		b.WriteString("\n")
	}
	return b.Bytes(), nil
}

func cell(r Row) string {
	switch {
	case r.OK():
		return formatStepTime(r.StepMS) + ", " + formatMiB(r.PeakRSSMB)
	case r.Status == StatusOOM:
		return "**OOM**"
	}
	return "**" + r.Status + "**"
}

func capText(b ByteSize) string {
	if b == 0 {
		return "the machine's memory"
	}
	return b.String()
}

func formatStepTime(ms float64) string {
	switch {
	case math.IsNaN(ms):
		return "–"
	case ms < 1000:
		return strconv.FormatFloat(ms, 'f', 1, 64) + " ms"
	}
	return strconv.FormatFloat(ms/1000, 'f', 2, 64) + " s"
}

func formatMiB(mb float64) string {
	switch {
	case math.IsNaN(mb):
		return "? GiB"
	case mb < 1024:
		return strconv.FormatFloat(mb, 'f', 0, 64) + " MiB"
	}
	return strconv.FormatFloat(mb/1024, 'f', 2, 64) + " GiB"
}
