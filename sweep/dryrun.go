package sweep

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"

	"gekc/grid"
	"gekc/kg"
	"gekc/resultsdir"
	"gekc/runspec"
	"gekc/train"
)

// CheckDatasets makes sure that every data set the runs need is a
// directory under root, and says how to point elsewhere when one is not.
// It does not read the data: PreflightRuns does.
func CheckDatasets(root string, runs []grid.Run) error {
	var missing []string
	for _, ds := range runspec.DatasetNames(runs) {
		dir := filepath.Join(root, ds)
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			missing = append(missing, dir)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	sort.Strings(missing)
	abs, _ := filepath.Abs(root)
	return fmt.Errorf("dataset directory not found: %s (data root %s); point -data or the GEKC_DATA environment variable at the directory that holds the dataset directories",
		strings.Join(missing, ", "), abs)
}

// WriteRunList writes what a sweep of runs (g's, or a selection of them)
// into out would do, without doing anything: a heading with the grid, out
// and dataRoot, then a table of each run's index, ID, block and line,
// hyper-parameters and state in out (see resultsdir.RunState), and a note when a data
// set is missing (see CheckDatasets). It is the command's -dry-run.
func WriteRunList(w io.Writer, g *grid.Grid, runs []grid.Run, out, dataRoot string) error {
	fmt.Fprintf(w, "grid %s (%s): %d runs", g.Name, g.Path, len(g.Runs))
	if g.Duplicates > 0 {
		fmt.Fprintf(w, " after dropping %d duplicates", g.Duplicates)
	}
	if len(runs) != len(g.Runs) {
		fmt.Fprintf(w, ", %d selected", len(runs))
	}
	fmt.Fprintf(w, "\nout  %s\ndata %s\n\n", out, dataRoot)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "index\tid\tblock (line)\thyperparameters\tstatus")
	for _, r := range runs {
		fmt.Fprintf(tw, "%d\t%s\t%s (%d)\t%s\t%s\n", r.Index, r.ID, r.Block, r.Line, grid.DescribeRun(r.Spec), resultsdir.RunState(out, r))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if err := CheckDatasets(dataRoot, runs); err != nil {
		if _, werr := fmt.Fprintf(w, "\nnote: %v\n", err); werr != nil {
			return werr
		}
	} else if err := writeMemoryEstimates(w, runs, out, dataRoot); err != nil {
		return err
	}
	if g.Search == nil {
		return nil
	}
	return writeSearchPlan(w, newSearchPlan(g, runs))
}

// RunJSON is a line of WriteRunJSON: one run of a grid.
type RunJSON struct {
	Index     int    `json:"index"`
	ID        string `json:"id"`
	Block     string `json:"block"`
	Line      int    `json:"line"`
	Processes int    `json:"processes"`
	Status    string `json:"status"`
}

// WriteRunJSON writes runs as JSON Lines (RunJSON), for scripts: what
// WriteRunList shows a person, without the tables' layout to parse.
func WriteRunJSON(w io.Writer, g *grid.Grid, runs []grid.Run, out, dataRoot string) error {
	enc := json.NewEncoder(w)
	for _, r := range runs {
		if err := enc.Encode(RunJSON{Index: r.Index, ID: r.ID, Block: r.Block, Line: r.Line,
			Processes: max(r.Spec.Processes, 1), Status: resultsdir.RunState(out, r)}); err != nil {
			return err
		}
	}
	return nil
}

// writeMemoryEstimates writes what each run not finished in out will hold
// in memory, part by part, against its budget (see runspec.EstimateRun); a data
// set that does not load, or a run that cannot be estimated, gets a line
// saying why.
func writeMemoryEstimates(w io.Writer, runs []grid.Run, out, dataRoot string) error {
	todo := runspec.Unfinished(out, runs)
	if len(todo) == 0 {
		return nil
	}
	per := ""
	for _, r := range todo {
		if r.Spec.Processes > 1 {
			per = "; a run over several processes (processes) is counted per process"
		}
	}
	fmt.Fprintf(w, "\nmemory of the runs to train (estimated; the budget is the grid's memory key, else GOMEMLIMIT, else 90%% of the machine's memory%s)\n", per)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "index\ttotal\tbudget\tparameters\tgradients\toptimiser\tbest\tstep\tdata\tevaluation (batch)")
	for _, r := range todo {
		ds, err := resultsdir.LoadDataset(filepath.Join(dataRoot, r.Spec.Dataset))
		if err != nil {
			fmt.Fprintf(tw, "%d\t%v\n", r.Index, err)
			continue
		}
		var other *kg.Dataset
		if name := r.Spec.Eval.TestOn; name != "" {
			if other, err = resultsdir.LoadDataset(filepath.Join(dataRoot, name)); err != nil {
				fmt.Fprintf(tw, "%d\teval.test_on: %v\n", r.Index, err)
				continue
			}
		}
		m, budget, err := runspec.EstimateRun(r.Spec, train.RunSizes(ds, other))
		b := "none"
		if budget > 0 {
			b = train.FormatBytes(budget)
		}
		if m.EvalBatch == 0 {
			fmt.Fprintf(tw, "%d\t%v\n", r.Index, err)
			continue
		}
		total := train.FormatBytes(m.Total())
		if err != nil {
			total += " (over)"
		}
		f := train.FormatBytes
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s (%d)\n", r.Index, total, b, f(m.Parameters), f(m.Gradients),
			f(m.Optimizer), f(m.Best), f(m.Step), f(m.Data), f(m.Eval), m.EvalBatch)
	}
	return tw.Flush()
}
