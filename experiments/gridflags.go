package main

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"gekc/grid"
	"gekc/internal/paths"
	"gekc/resultsdir"
)

// gridFlags are the flags of every verb that works on a grid's runs.
type gridFlags struct{ grid, data, out, only string }

func (f *gridFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.grid, "grid", "", "grid `file` (required), e.g. grids/umls.toml; a NAME that is no file means grids/NAME[.toml] of the repository")
	fs.StringVar(&f.data, "data", "", "data root holding one directory per dataset (default $GEKC_DATA, else <repository>/data)")
	fs.StringVar(&f.out, "out", "", "results `directory` (default <repository>/results/<grid name>)")
	fs.StringVar(&f.only, "only", "", "run only these: indices and ranges (3 or 0-5,9), or re:EXPR matching run IDs")
}

// openGrid is a grid loaded for a verb, its runs selected by -only and its
// directories resolved.
type openGrid struct {
	g             *grid.Grid
	selected      []grid.Run
	wd, repo      string
	dataRoot, out string
}

// open loads the grid, selects its runs and resolves the data root
// (-data, then $GEKC_DATA, then the repository's data/) and the results
// directory; every error is a usage error.
func (f *gridFlags) open(env cliEnv) (*openGrid, error) {
	if f.grid == "" {
		return nil, errors.New("-grid is required, e.g. -grid grids/umls.toml")
	}
	wd, err := workDir(env.dir)
	if err != nil {
		return nil, err
	}
	repo := paths.Root(wd)
	validate := env.validate
	if validate == nil {
		validate = grid.DefaultValidator
	}
	g, err := grid.LoadGrid(paths.Grid(f.grid, wd, repo), validate)
	if errors.Is(err, os.ErrNotExist) && repo != "" {
		return nil, fmt.Errorf("%v (nor is there %s or %s.toml)", err, filepath.Join(repo, "grids", f.grid), filepath.Join(repo, "grids", f.grid))
	}
	if err != nil {
		return nil, err
	}
	selected, err := grid.Select(f.only, g.Runs)
	if err != nil {
		return nil, err
	}
	o := &openGrid{g: g, selected: selected, wd: wd, repo: repo,
		dataRoot: paths.In(wd, paths.DataRoot(f.data, env.getenv("GEKC_DATA"), repo))}
	o.out = paths.In(wd, cmp.Or(f.out, filepath.Join(paths.Results(repo, wd), g.Name)))
	if !g.Named() && paths.Same(f.grid, filepath.Join(o.out, resultsdir.GridCopyName)) {
		// Run from its own copy (as SLURM tasks are), an unnamed grid would
		// be called "grid"; the results directory names it better.
		g.Name = filepath.Base(o.out)
	}
	return o, nil
}

// paperResults is the results/ directory holding the paper's values: the
// repository's, or, run from outside one, the grid's repository's.
func (o *openGrid) paperResults() string {
	return paths.Results(cmp.Or(o.repo, paths.Root(filepath.Dir(paths.In(o.wd, o.g.Path)))), o.wd)
}

// referencePath is the table paper.md compares with: -reference, else the
// paper's; none for a grid with paper = false, whose left-over paper.md is
// noted. forPaper says the caller is the paper analysis, which a grid
// with paper = false refuses without -reference.
func (o *openGrid) referencePath(reference string, forPaper bool, env cliEnv) (string, error) {
	switch {
	case reference != "":
		return paths.In(o.wd, reference), nil
	case o.g.NotPaper:
		if forPaper {
			return "", fmt.Errorf("%s says paper = false (its runs do not follow the paper's protocol): -analyze paper compares it only with -reference FILE", o.g.Path)
		}
		if _, err := os.Stat(filepath.Join(o.out, resultsdir.PaperMDName)); err == nil {
			fmt.Fprintf(env.stderr, "note: %s is left from before: %s says paper = false, so nothing writes it now; remove it\n",
				filepath.Join(o.out, resultsdir.PaperMDName), o.g.Path)
		}
		return "", nil
	}
	return filepath.Join(o.paperResults(), "paper-reference.tsv"), nil
}

// failer prints the command's usage and run errors.
func failer(env cliEnv) func(code int, format string, a ...any) int {
	return func(code int, format string, a ...any) int {
		fmt.Fprintf(env.stderr, "experiments: "+format+"\n", a...)
		return code
	}
}
