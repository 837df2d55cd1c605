package grid

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Select applies an -only filter: "" selects every run;
// "re:EXPR" selects the runs whose ID the regular expression matches
// anywhere (anchor it with ^ and $ for whole IDs); otherwise a
// comma-separated list of indices and inclusive ranges, e.g. "3" or "0-5,9".
// The result is in grid order without duplicates; selecting nothing is an
// error, since a sweep that silently does nothing looks like success.
func Select(only string, runs []Run) ([]Run, error) {
	only = strings.TrimSpace(only)
	if only == "" {
		return runs, nil
	}
	if expr, ok := strings.CutPrefix(only, "re:"); ok {
		re, err := regexp.Compile(expr)
		if err != nil {
			return nil, fmt.Errorf("-only %q: %w", only, err)
		}
		var out []Run
		for _, r := range runs {
			if re.MatchString(r.ID) {
				out = append(out, r)
			}
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("-only %q matches no run ID; -dry-run lists them", only)
		}
		return out, nil
	}
	indices, err := parseIndexList(only, len(runs))
	if err != nil {
		return nil, fmt.Errorf("-only %q: %w", only, err)
	}
	out := make([]Run, len(indices))
	for i, idx := range indices {
		out[i] = runs[idx]
	}
	return out, nil
}

// parseIndexList parses "0-5,9" into sorted, distinct indices below n.
func parseIndexList(s string, n int) ([]int, error) {
	var out []int
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			return nil, fmt.Errorf("empty element; want indices and ranges like 0-5,9")
		}
		lo, hi := part, part
		if a, b, ok := strings.Cut(part, "-"); ok {
			lo, hi = a, b
		}
		from, err := strconv.Atoi(strings.TrimSpace(lo))
		if err != nil || from < 0 {
			return nil, fmt.Errorf("%q: want a run index (0 or more) or a range a-b, or re:EXPR for IDs", part)
		}
		to, err := strconv.Atoi(strings.TrimSpace(hi))
		if err != nil || to < 0 {
			return nil, fmt.Errorf("%q: want a run index (0 or more) or a range a-b, or re:EXPR for IDs", part)
		}
		if to < from {
			return nil, fmt.Errorf("%q: range ends before it starts", part)
		}
		if to >= n {
			return nil, fmt.Errorf("%q: the grid has runs 0-%d", part, n-1)
		}
		for i := from; i <= to; i++ {
			out = append(out, i)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// FormatIndexList writes sorted indices as Select reads them, runs of
// consecutive indices as ranges: "0-5,9" (SLURM's --array takes the same).
func FormatIndexList(indices []int) string {
	var parts []string
	for i := 0; i < len(indices); {
		j := i
		for j+1 < len(indices) && indices[j+1] == indices[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, strconv.Itoa(indices[i]))
		} else {
			parts = append(parts, strconv.Itoa(indices[i])+"-"+strconv.Itoa(indices[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}
