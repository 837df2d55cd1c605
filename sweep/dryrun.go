package sweep

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
)

// CheckDatasets makes sure that every data set the runs need is a
// directory under root, and says how to point elsewhere when one is not.
// It does not read the data: PreflightRuns does.
func CheckDatasets(root string, runs []Run) error {
	var missing []string
	for _, ds := range datasetNames(runs) {
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
// hyper-parameters and state in out (see RunState), and a note when a data
// set is missing (see CheckDatasets). It is the command's -dry-run.
func (g *Grid) WriteRunList(w io.Writer, runs []Run, out, dataRoot string) error {
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
		fmt.Fprintf(tw, "%d\t%s\t%s (%d)\t%s\t%s\n", r.Index, r.ID, r.Block, r.Line, DescribeRun(r.Spec), RunState(out, r.ID))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if err := CheckDatasets(dataRoot, runs); err != nil {
		_, werr := fmt.Fprintf(w, "\nnote: %v\n", err)
		return werr
	}
	return nil
}
