package runspec

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"gekc/grid"
	"gekc/kg"
	"gekc/models"
	"gekc/resultsdir"
	"gekc/train"
	"gekc/train/ckpt"
)

// Preflight checks, before any run trains, what a grid's runs need beyond
// the grid file itself: the data sets, and the settings that depend on
// them. It returns notes worth a line on stderr (once per sweep) and every
// problem found, so that a sweep never spends its epochs on a run that was
// bound to fail at test time. Train's is PreflightRuns; the tests'
// fake run functions need none.
type Preflight func(g *grid.Grid, dataRoot, out string, runs []grid.Run) (notes []string, err error)

// PreflightRuns loads each data set once (the runs reuse it: see
// loadDataset) and checks every run against it:
//
//   - eval.sem_k: each k at most the number of entities, and a schema;
//   - constraints = "domain": a schema the domain circuit accepts;
//   - distill_from: an .npz file, or the checkpoint of a finished run, with
//     an array of the right shape for every table of the run's model; a run
//     of this grid not trained yet is checked when it is;
//   - memory: the run's estimated memory within its budget (MemoryBudget).
//
// Problems are reported per block and problem, with the grid's file:line
// of the block, as grid errors are.
func PreflightRuns(g *grid.Grid, dataRoot, out string, runs []grid.Run) ([]string, error) {
	var notes []string
	var errs []error
	loaded := map[string]*kg.Dataset{}
	for _, name := range DatasetNames(runs) {
		ds, err := resultsdir.LoadDataset(filepath.Join(dataRoot, name))
		if err != nil {
			errs = append(errs, fmt.Errorf("dataset %s: %w", name, err))
			continue
		}
		// An empty split trains without complaint and then has nothing to
		// select on, or nothing to report.
		if len(ds.Valid) == 0 {
			errs = append(errs, fmt.Errorf("dataset %s: no validation triples: early stopping and model selection need them", name))
		}
		if len(ds.Test) == 0 {
			errs = append(errs, fmt.Errorf("dataset %s: no test triples: a run would have no results to report", name))
		}
		loaded[name] = ds
		u := ds.Unseen()
		if note := u.String(); note != "" {
			notes = append(notes, fmt.Sprintf("note: %s: %s", ds.Name, note))
		}
		if note := roleNote(ds, u, name, runs); note != "" {
			notes = append(notes, note)
		}
	}

	// A distill_from naming any run of the grid is checked when that run
	// has trained: it may be selected here, or trained by another process
	// (a SLURM array's other task, with -only).
	inGrid := map[string]bool{}
	for _, r := range g.Runs {
		inGrid[r.ID] = true
	}
	for _, r := range runs {
		inGrid[r.ID] = true
	}
	type problem struct {
		first grid.Run
		more  int
	}
	problems := map[string]*problem{} // "<block>\x00<message>"
	var order []string
	report := func(r grid.Run, msg string) {
		key := r.Block + "\x00" + msg
		if p, ok := problems[key]; ok {
			p.more++
			return
		}
		problems[key] = &problem{first: r}
		order = append(order, key)
	}
	for _, r := range runs {
		ds := loaded[r.Spec.Dataset]
		if ds == nil {
			continue
		}
		for _, msg := range checkRunAgainstData(r.Spec, ds) {
			report(r, msg)
		}
		if msg := checkDistillSource(r.Spec, ds, out, inGrid); msg != "" {
			report(r, msg)
		}
		other := loaded[r.Spec.Eval.TestOn]
		if other != nil {
			if msg := checkTestOn(ds, other); msg != "" {
				report(r, msg)
			}
		}
		if _, _, err := EstimateRun(r.Spec, train.RunSizes(ds, other)); err != nil {
			report(r, err.Error()+" (set the grid's memory key, -memory or GOMEMLIMIT, or make the run smaller)")
		}
	}
	for _, key := range order {
		p := problems[key]
		msg := strings.SplitN(key, "\x00", 2)[1]
		err := fmt.Errorf("%s:%d: %s: run %s: %s", g.Path, p.first.Line, p.first.Block, p.first.ID, msg)
		if p.more > 0 {
			err = fmt.Errorf("%w (and %d more runs of this block)", err, p.more)
		}
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return notes, grid.JoinCapped(errs, 20)
	}
	return notes, nil
}

// Unfinished returns the runs without a final record in out: the ones a
// sweep would train, and so the ones worth a preflight check.
func Unfinished(out string, runs []grid.Run) []grid.Run {
	var todo []grid.Run
	for _, r := range runs {
		rec, err := resultsdir.ReadRecord(resultsdir.RunDir(out, r.ID))
		if err != nil || rec == nil || !resultsdir.Final(rec.Status) {
			todo = append(todo, r)
		}
	}
	return todo
}

// DatasetNames lists the data sets of runs, sorted, each once.
func DatasetNames(runs []grid.Run) []string {
	var names []string
	for _, r := range runs {
		for _, name := range []string{r.Spec.Dataset, r.Spec.Eval.TestOn} {
			if name != "" && !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
	}
	sort.Strings(names)
	return names
}

// roleNote is the note on the valid and test triples of ds (data set
// name) that put an entity in a role training never gives it, where a run
// trains a model with a table per role on ds: that row meets no data term,
// and the normaliser drives it toward zero (README, Models). "" where no
// run's model has such tables or no triple does.
func roleNote(ds *kg.Dataset, u kg.Unseen, name string, runs []grid.Run) string {
	what := u.RoleString()
	if what == "" {
		return ""
	}
	var perRole []string
	for _, r := range runs {
		if r.Spec.Dataset != name || slices.Contains(perRole, r.Spec.Model) {
			continue
		}
		sf, _, err := models.Lookup(r.Spec.Model)
		if err != nil {
			continue // the grid's validation names it
		}
		l := sf.Layout(models.Sizes{Entities: ds.Entities.Len(), Relations: ds.Relations.Len(), Rank: r.Spec.Rank, RelationRank: r.Spec.RelationRank})
		if l.Subject != l.Object {
			perRole = append(perRole, r.Spec.Model)
		}
	}
	if perRole == nil {
		return ""
	}
	keep := "keep"
	if len(perRole) == 1 {
		keep = "keeps"
	}
	return fmt.Sprintf("note: %s: %s; %s %s a subject and an object table, so such a row meets no data term, only the normaliser, which drives it toward zero (README, Models)",
		ds.Name, what, strings.Join(perRole, ", "), keep)
}

// checkTestOn says what would fail in testing a model of ds on other's
// test split ("" if nothing).
func checkTestOn(ds, other *kg.Dataset) string {
	if other.Negatives != nil {
		return fmt.Sprintf("eval.test_on = %q: its shipped negatives are in its own ids; test on a data set without them", other.Name)
	}
	mapped, _ := other.InVocabularyOf(ds)
	if len(mapped.Test) == 0 {
		return fmt.Sprintf("eval.test_on = %q: none of its %d test triples names only entities and relations of %s", other.Name, len(other.Test), ds.Name)
	}
	return ""
}

// checkRunAgainstData returns what would fail in the run because of its
// data set, each a message naming the grid key.
func checkRunAgainstData(s grid.RunSpec, ds *kg.Dataset) []string {
	var msgs []string
	// sem_k is checked when Sem@k is asked for, and when it was set at all
	// (it differs from the default): a k beyond the entities is a mistake
	// either way.
	var sem bool
	for _, name := range []string{"sem", "sem_unfiltered"} {
		if !slices.Contains(s.Eval.Metrics, name) {
			continue
		}
		sem = true
		if ds.Schema == nil {
			msgs = append(msgs, fmt.Sprintf(`eval.metrics has %q, but data set %s has no schema (entity_types.tsv and relation_schema.tsv) to judge candidates by`, name, ds.Name))
		}
	}
	if sem || !slices.Equal(s.Eval.SemK, grid.DefaultRunSpec().Eval.SemK) {
		n := ds.Entities.Len()
		var tooBig []string
		for _, k := range s.Eval.SemK {
			if k > n {
				tooBig = append(tooBig, fmt.Sprint(k))
			}
		}
		if len(tooBig) > 0 {
			msgs = append(msgs, fmt.Sprintf("eval.sem_k %v: %s more than the %d entities of %s (the default is [1, 20, 100]; set eval.sem_k)",
				s.Eval.SemK, strings.Join(tooBig, ", "), n, ds.Name))
		}
	}
	if s.Constraints == "domain" {
		if ds.Schema == nil {
			msgs = append(msgs, fmt.Sprintf(`constraints = "domain", but data set %s has no schema (entity_types.tsv and relation_schema.tsv)`, ds.Name))
		} else if _, err := models.DomainFromSchema(ds.Schema); err != nil {
			msgs = append(msgs, fmt.Sprintf(`constraints = "domain": the schema of %s: %v`, ds.Name, err))
		}
	}
	return msgs
}

// checkDistillSource resolves distill_from as resolveDistill will and
// checks the checkpoint's arrays against the run's model on ds; "" when
// all is well or the source is a run of the grid still to be trained.
func checkDistillSource(s grid.RunSpec, ds *kg.Dataset, out string, inGrid map[string]bool) string {
	from := s.DistillFrom
	if from == "" {
		return ""
	}
	var path string
	switch {
	case strings.HasSuffix(from, ".npz"):
		path = from
	default:
		dir := from
		if !strings.ContainsRune(from, filepath.Separator) {
			if st, err := os.Stat(filepath.Join(out, resultsdir.RunsDirName, from)); err == nil && st.IsDir() {
				dir = filepath.Join(out, resultsdir.RunsDirName, from)
			}
		}
		rec, err := resultsdir.ReadRecord(dir)
		switch {
		case err != nil:
			return fmt.Sprintf("distill_from %q: %v", from, err)
		case (rec == nil || rec.Status != train.Finished) && inGrid[from]:
			return "" // a run of this grid, trained first; checked when it has a checkpoint
		case rec == nil:
			return fmt.Sprintf("distill_from %q: neither a run of this grid, nor a finished run in %s, nor a run directory, nor an .npz file",
				from, filepath.Join(out, resultsdir.RunsDirName))
		case rec.Status != train.Finished:
			return fmt.Sprintf("distill_from %q: that run is %s; it needs a finished run's checkpoint", from, rec.Status)
		}
		path = filepath.Join(dir, ckpt.CheckpointName)
	}
	if err := checkCheckpointLayout(path, s, ds); err != nil {
		return fmt.Sprintf("distill_from %q: %v", from, err)
	}
	return ""
}

// checkCheckpointLayout checks that path holds an array of the right shape
// for every table of s's model on ds, as ckpt.Load will need.
func checkCheckpointLayout(path string, s grid.RunSpec, ds *kg.Dataset) error {
	sf, _, err := models.Lookup(s.Model)
	if err != nil {
		return err
	}
	layout := sf.Layout(models.Sizes{Entities: ds.Entities.Len(), Relations: ds.Relations.Len(), Rank: s.Rank, RelationRank: s.RelationRank})
	err = ckpt.CheckLayout(path, layout)
	var misfit *ckpt.LayoutError
	if errors.As(err, &misfit) {
		return fmt.Errorf("%s does not fit %s with rank %d on %s: %s", path, s.Model, s.Rank, ds.Name, strings.Join(misfit.Misfits, "; "))
	}
	return err
}
