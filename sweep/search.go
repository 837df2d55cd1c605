package sweep

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"gekc/grid"
	"gekc/internal/atomicfile"
	"gekc/internal/jsonfloat"
	"gekc/models"
	"gekc/report"
	"gekc/resultsdir"
	"gekc/train"
	"gekc/train/ckpt"
)

// SearchRecord is search.json: the search and each rung decided so far.
// A rung is decided once, when all its runs are final; a resumed search
// reads its decisions back rather than deciding again.
type SearchRecord struct {
	Grid   string      `json:"grid"`
	Search grid.Search `json:"search"`
	// Selected is the configuration the last rung ranks first; "" until
	// it is decided.
	Selected string `json:"selected"`
	// EpochsTrained is the epochs every run had trained when the latest
	// rung was decided (its EpochsSoFar).
	EpochsTrained int            `json:"epochs_trained"`
	Rungs         []RungDecision `json:"rungs"`
}

// RungDecision is one rung's outcome: its configurations best first, which
// go on to the next rung, and why.
type RungDecision struct {
	Rung    int           `json:"rung"` // 0 is the first
	Epochs  int           `json:"epochs"`
	Configs []ConfigScore `json:"configs"`
	// Promoted is how many configurations go on; 0 at the last rung,
	// whose first configuration is the one the search selects.
	Promoted int `json:"promoted"`
	// EpochsSoFar is the epochs every run of the search had trained when
	// the rung was decided (early stopping included).
	EpochsSoFar int       `json:"epochs_so_far"`
	DecidedAt   time.Time `json:"decided_at"`
}

// ConfigScore is a configuration's score in a rung: the mean over its
// seeds of the validation metric of the parameters each kept.
type ConfigScore struct {
	Config   string            `json:"config"`
	Runs     []string          `json:"runs"`
	Score    jsonfloat.Float   `json:"score"` // NaN when no seed has a finite value
	Seeds    []jsonfloat.Float `json:"seeds"`
	Promoted bool              `json:"promoted"`
	Why      string            `json:"why"`
}

// searchPlan is a search over a selection of runs: the configurations in
// grid order, each with its seeds' runs.
type searchPlan struct {
	search  *grid.Search
	rungs   []int // epochs per rung
	configs []string
	runs    map[string][]grid.Run
	all     []grid.Run
}

func newSearchPlan(g *grid.Grid, runs []grid.Run) *searchPlan {
	p := &searchPlan{search: g.Search, rungs: g.Search.Rungs(), all: runs}
	p.configs, p.runs = grid.Configurations(runs)
	return p
}

// epochs returns what the plan trains at most, rung by rung (a promoted
// run continues, so rung k adds its runs' epochs beyond rung k-1's), and
// what the grid without [search] trains at most.
func (p *searchPlan) epochs() (perRung []int, full int) {
	prev := 0
	for k, n := range p.search.RunsPerRung(p.all) {
		perRung = append(perRung, n*(p.rungs[k]-prev))
		prev = p.rungs[k]
	}
	return perRung, len(p.all) * p.search.MaxEpochs
}

// rungConfigs returns the configurations rung k trains: all of them for
// the first, those rung k-1 promoted for the others (in grid order); ok is
// false when rung k-1 is not decided yet.
func (p *searchPlan) rungConfigs(rec *SearchRecord, k int) (configs []string, ok bool) {
	if k == 0 {
		return p.configs, true
	}
	if len(rec.Rungs) < k {
		return nil, false
	}
	promoted := map[string]bool{}
	for _, c := range rec.Rungs[k-1].Configs {
		promoted[c.Config] = c.Promoted
	}
	for _, c := range p.configs {
		if promoted[c] {
			configs = append(configs, c)
		}
	}
	return configs, true
}

func (p *searchPlan) runsOf(configs []string) []grid.Run {
	var runs []grid.Run
	for _, c := range configs {
		runs = append(runs, p.runs[c]...)
	}
	return runs
}

// checkSearch refuses what a search cannot do: distillation (its teacher
// would be a rung's partial run), runs that save no state (a promoted run
// continues from it), and a metric the runs do not validate.
func (s *Sweep) checkSearch() error {
	sr := s.grid.Search
	switch {
	case sr == nil && (s.onlyRung != 0 || s.promoteOnly || s.rungTask >= 0):
		return fmt.Errorf("-rung, -task and -promote go with a grid that has a [search] section; %s has none", s.grid.Path)
	case sr == nil:
		return nil
	case s.onlyRung < 0 || s.onlyRung > len(sr.Rungs()):
		return fmt.Errorf("-rung %d: the search has rungs 1 to %d", s.onlyRung, len(sr.Rungs()))
	case s.onlyRung == 0 && (s.promoteOnly || s.rungTask >= 0):
		return errors.New("-task and -promote go with -rung")
	case len(s.runs) != len(s.grid.Runs):
		return fmt.Errorf("a search ranks all of its grid's configurations: -only selected %d of %d runs", len(s.runs), len(s.grid.Runs))
	}
	if s.stateEvery < 0 {
		return errors.New("-state-every: a search continues promoted runs from their resume state, which this setting never saves")
	}
	for _, r := range s.runs {
		switch {
		case r.Spec.DistillFrom != "":
			return fmt.Errorf("run %s: distill_from: a search does not distil; train the teacher in a grid of its own", r.ID)
		case !slices.Contains(r.Spec.Eval.Metrics, sr.Metric):
			return fmt.Errorf("run %s: [search] metric %q is not among its eval.metrics %q", r.ID, sr.Metric, r.Spec.Eval.Metrics)
		}
		if _, sem, err := models.Lookup(r.Spec.Model); err == nil && sem == models.Energy && sr.Metric == "ll" {
			return fmt.Errorf("run %s: [search] metric \"ll\": model %q is energy-based, with no log-likelihood", r.ID, r.Spec.Model)
		}
	}
	return nil
}

// runSearch trains the rungs in turn (only Options.Rung when set),
// deciding each once its runs are final; it stops early when ctx is
// cancelled or a rung cannot be decided (a run failed, or another process
// is training it).
func (s *Sweep) runSearch(ctx context.Context) {
	p := newSearchPlan(s.grid, s.runs)
	first, last := 0, len(p.rungs)-1
	if s.onlyRung > 0 {
		first, last = s.onlyRung-1, s.onlyRung-1
	}
	for k := first; k <= last; k++ {
		runs, err := s.rungRuns(p, k)
		if err != nil {
			s.problem(err)
			return
		}
		s.rung = &resultsdir.RungMark{Index: k, Of: len(p.rungs), Epochs: p.rungs[k]}
		if !s.promoteOnly {
			s.stderr.printf("rung %s: %d runs to %d epochs\n", s.rung, len(runs), p.rungs[k])
			s.runAll(ctx, runs)
		}
		if ctx.Err() != nil {
			return
		}
		_, d, err := s.decideRung(p, k)
		switch {
		case err != nil && s.rungTask >= 0:
			// Other array tasks still train the rung: the last, or the
			// promote step, decides it.
			s.stderr.printf("rung %s not decided yet: %v\n", s.rung, err)
			return
		case err != nil:
			s.problem(err)
			return
		}
		s.stderr.printf("%s", d.summary(k == len(p.rungs)-1))
	}
}

// rungRuns returns the runs rung k trains (only the one of Options.RungTask
// when set), deciding rung k-1 first if no process has.
func (s *Sweep) rungRuns(p *searchPlan, k int) ([]grid.Run, error) {
	configs := p.configs
	if k > 0 {
		rec, _, err := s.decideRung(p, k-1)
		if err != nil {
			return nil, err
		}
		configs, _ = p.rungConfigs(rec, k)
	}
	runs := p.runsOf(configs)
	if s.rungTask < 0 || s.promoteOnly {
		return runs, nil
	}
	if s.rungTask >= len(runs) {
		s.stderr.printf("rung %d/%d has %d runs: task %d has none to train\n", k+1, len(p.rungs), len(runs), s.rungTask+1)
		return nil, nil
	}
	return runs[s.rungTask : s.rungTask+1], nil
}

// advanceRung makes a promoted run trainable again: its record of an
// earlier rung k/n becomes rung-<k>.json, and the run continues from its
// state. Other records are returned as they are.
func (s *Sweep) advanceRung(dir string, prev *resultsdir.Record) (*resultsdir.Record, error) {
	if s.rung == nil || prev == nil || !final(prev.Status) || prev.Rung == nil || prev.Rung.Index >= s.rung.Index {
		return prev, nil
	}
	keep := filepath.Join(dir, resultsdir.RungRecordName(prev.Rung.Index+1)) // counted as shown: rung-1.json is rung 1/n
	if err := os.Rename(filepath.Join(dir, resultsdir.MetricsName), keep); err != nil {
		return nil, fmt.Errorf("promoting to rung %s: %w", s.rung, err)
	}
	return nil, nil
}

// rungSpec is the spec a run trains in the current rung: its epochs the
// rung's, and no samples before the last.
func (s *Sweep) rungSpec(spec grid.RunSpec) grid.RunSpec {
	if s.rung == nil {
		return spec
	}
	spec = spec.Clone()
	spec.Epochs = s.rung.Epochs
	if !s.rung.Last() {
		spec.Samples = 0
	}
	return spec
}

func (s *Sweep) readSearch() (*SearchRecord, error) {
	rec := &SearchRecord{Grid: s.grid.Name, Search: *s.grid.Search}
	b, err := os.ReadFile(s.path(resultsdir.SearchJSONName))
	if errors.Is(err, fs.ErrNotExist) {
		return rec, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, rec); err != nil {
		return nil, fmt.Errorf("%s: %w", s.path(resultsdir.SearchJSONName), err)
	}
	if !rec.Search.Same(s.grid.Search) {
		return nil, fmt.Errorf("%s was written by another search (%s), not this grid's (%s): use another -out",
			s.path(resultsdir.SearchJSONName), rec.Search.String(), s.grid.Search.String())
	}
	return rec, nil
}

// decideRung scores rung k's configurations and records which go on,
// under the results lock; a rung decided before is read back as it was.
// rec is search.json with the decision.
func (s *Sweep) decideRung(p *searchPlan, k int) (rec *SearchRecord, d *RungDecision, err error) {
	err = s.withResultsLock(func() error {
		if rec, err = s.readSearch(); err != nil {
			return err
		}
		if len(rec.Rungs) > k {
			d = &rec.Rungs[k]
			return nil
		}
		configs, ok := p.rungConfigs(rec, k)
		if !ok {
			return fmt.Errorf("rung %d/%d: rung %d is not decided yet", k+1, len(p.rungs), k)
		}
		if d, err = s.scoreRung(p, k, configs); err != nil {
			return err
		}
		rec.Rungs = append(rec.Rungs, *d)
		rec.EpochsTrained = d.EpochsSoFar
		if best, ok := d.selected(); ok && len(rec.Rungs) == len(p.rungs) {
			rec.Selected = best.Config
		}
		return s.writeSearch(rec)
	})
	if err != nil {
		return nil, nil, err
	}
	s.dropStates(p, d)
	return rec, d, nil
}

// scoreRung reads the records of rung k's runs and ranks their
// configurations; every run must be final at rung k.
func (s *Sweep) scoreRung(p *searchPlan, k int, configs []string) (*RungDecision, error) {
	d := &RungDecision{Rung: k, Epochs: p.rungs[k], DecidedAt: time.Now().UTC()}
	var open []string
	for _, c := range configs {
		cs := ConfigScore{Config: c}
		var sum float64
		var n int
		for _, r := range p.runs[c] {
			cs.Runs = append(cs.Runs, r.ID)
			rec, err := resultsdir.ReadRecord(s.runDir(r.ID))
			if err != nil || rec == nil || !final(rec.Status) || rec.Rung == nil || rec.Rung.Index != k {
				open = append(open, r.ID)
				continue
			}
			x := math.NaN()
			if v, ok := rec.Valid[p.search.Metric]; ok && rec.Status == train.Finished {
				x = float64(v)
			}
			cs.Seeds = append(cs.Seeds, jsonfloat.Float(x))
			if !math.IsNaN(x) && !math.IsInf(x, 0) {
				sum, n = sum+x, n+1
			}
		}
		cs.Score = jsonfloat.Float(math.NaN())
		if n > 0 {
			cs.Score = jsonfloat.Float(sum / float64(n))
		}
		d.Configs = append(d.Configs, cs)
	}
	if len(open) > 0 {
		return nil, fmt.Errorf("rung %d/%d cannot be decided: %d runs are not finished at it (failed, interrupted or being trained elsewhere), e.g. %s; run the sweep again to finish them",
			k+1, len(p.rungs), len(open), open[0])
	}
	rankRung(d, p.search, len(p.rungs))
	d.EpochsSoFar = s.epochsSoFar(p)
	return d, nil
}

// rankRung orders d's configurations best first (NaN last, ties in grid
// order) and promotes those the next rung trains.
func rankRung(d *RungDecision, sr *grid.Search, rungs int) {
	slices.SortStableFunc(d.Configs, func(a, b ConfigScore) int {
		x, y := float64(a.Score), float64(b.Score)
		switch {
		case math.IsNaN(x) || math.IsNaN(y):
			return cmp.Compare(boolInt(math.IsNaN(x)), boolInt(math.IsNaN(y)))
		}
		return cmp.Compare(y, x)
	})
	keep := 0
	if d.Rung < rungs-1 {
		keep = max(len(d.Configs)/sr.Eta, 1)
	}
	n := len(d.Configs)
	for i := range d.Configs {
		c := &d.Configs[i]
		switch {
		case math.IsNaN(float64(c.Score)):
			c.Why = fmt.Sprintf("no seed has a finite validation %s (diverged)", sr.Metric)
		case keep == 0 && i == 0:
			c.Why = fmt.Sprintf("selected: best validation %s of %d at the last rung", sr.Metric, n)
		case keep == 0:
			c.Why = fmt.Sprintf("rank %d of %d at the last rung", i+1, n)
		case i < keep:
			c.Promoted, d.Promoted = true, d.Promoted+1
			c.Why = fmt.Sprintf("rank %d of %d: in the best %d (1/%d)", i+1, n, keep, sr.Eta)
		default:
			c.Why = fmt.Sprintf("rank %d of %d: below the best %d (1/%d)", i+1, n, keep, sr.Eta)
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// epochsSoFar sums the epochs every run of the plan has trained, from
// their latest records.
func (s *Sweep) epochsSoFar(p *searchPlan) int {
	total := 0
	for _, c := range p.configs {
		for _, r := range p.runs[c] {
			if rec, err := resultsdir.ReadRecord(s.runDir(r.ID)); err == nil && rec != nil {
				total += resultsdir.TrainedEpochs(rec.Epochs)
			}
		}
	}
	return total
}

// dropStates removes the resume states of the runs d did not promote: no
// rung continues them.
func (s *Sweep) dropStates(p *searchPlan, d *RungDecision) {
	for _, c := range d.Configs {
		if c.Promoted {
			continue
		}
		for _, id := range c.Runs {
			err := os.Remove(filepath.Join(s.runDir(id), ckpt.StateName))
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				s.problem(fmt.Errorf("run %s: %w", id, err))
			}
		}
	}
}

func (s *Sweep) writeSearch(rec *SearchRecord) error {
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(s.path(resultsdir.SearchJSONName), append(b, '\n'), 0o644); err != nil {
		return err
	}
	md, err := searchMarkdown(rec)
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(s.path(resultsdir.SearchMDName), md, 0o644)
}

func (d *RungDecision) summary(last bool) string {
	best, ok := d.selected()
	switch {
	case last && ok:
		return fmt.Sprintf("rung %d: selected %s (validation %s); %d epochs trained in all\n",
			d.Rung+1, best.Config, resultsdir.FormatMetric(float64(best.Score)), d.EpochsSoFar)
	case last:
		return fmt.Sprintf("rung %d: no configuration has a finite score: none selected; %d epochs trained in all\n", d.Rung+1, d.EpochsSoFar)
	}
	return fmt.Sprintf("rung %d: %d of %d configurations promoted; %d epochs trained so far\n",
		d.Rung+1, d.Promoted, len(d.Configs), d.EpochsSoFar)
}

// selected is the rung's best configuration; ok is false when it has
// none with a finite score (every run diverged, or none reached it).
func (d *RungDecision) selected() (ConfigScore, bool) {
	if len(d.Configs) == 0 || math.IsNaN(float64(d.Configs[0].Score)) {
		return ConfigScore{}, false
	}
	return d.Configs[0], true
}

// searchMarkdown renders search.json as search.md: the selection, the
// epochs spent, and a table per decided rung.
func searchMarkdown(rec *SearchRecord) ([]byte, error) {
	var b strings.Builder
	sr := rec.Search
	fmt.Fprintf(&b, "# Search: %s\n\nSuccessive halving, eta %d, by validation %s (mean over seeds); rungs of %s epochs.\n\n",
		rec.Grid, sr.Eta, sr.Metric, strings.Trim(strings.Join(strings.Fields(fmt.Sprint(sr.Rungs())), ", "), "[]"))
	if n := len(rec.Rungs); n > 0 {
		last := rec.Rungs[n-1]
		if best, ok := last.selected(); ok && n == len(sr.Rungs()) {
			fmt.Fprintf(&b, "Selected: `%s` (validation %s %s). ", best.Config, sr.Metric, resultsdir.FormatMetric(float64(best.Score)))
		}
		fmt.Fprintf(&b, "Epochs trained by all runs: %d after rung %d of %d.\n", last.EpochsSoFar, n, len(sr.Rungs()))
	}
	for _, d := range rec.Rungs {
		fmt.Fprintf(&b, "\n## Rung %d/%d: %d epochs, %d configurations, %d promoted\n\n", d.Rung+1, len(sr.Rungs()), d.Epochs, len(d.Configs), d.Promoted)
		var rows [][]string
		for i, c := range d.Configs {
			seeds := make([]string, len(c.Seeds))
			for j, x := range c.Seeds {
				seeds[j] = resultsdir.FormatMetric(float64(x))
			}
			rows = append(rows, []string{strconv.Itoa(i + 1), "`" + c.Config + "`", resultsdir.FormatMetric(float64(c.Score)),
				strings.Join(seeds, " "), yesNo(c.Promoted), c.Why})
		}
		if err := report.MarkdownTable(&b, []string{"rank", "config", "valid " + sr.Metric, "seeds", "promoted", "why"}, rows); err != nil {
			return nil, err
		}
	}
	return []byte(b.String()), nil
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// sameKind refuses a finished run of a search in a sweep without one, and
// the other way round: a run stopped at an early rung is not the grid's
// run, and one trained to its end has no rung to be promoted from.
func (s *Sweep) sameKind(rec *resultsdir.Record) error {
	if rec == nil || !final(rec.Status) || (rec.Rung == nil) == (s.grid.Search == nil) {
		return nil
	}
	if rec.Rung != nil {
		return fmt.Errorf("run %s in %s was trained by a successive-halving search (rung %s), and this grid has no [search]: use another -out", rec.ID, s.out, rec.Rung)
	}
	return fmt.Errorf("run %s in %s was trained to its end by a grid without [search]: a search needs a results directory of its own (-out)", rec.ID, s.out)
}

// writeSearchPlan writes the rungs a search plans, with the epochs each
// trains at most, beside what the grid without [search] trains at most
// (early stopping can only shorten both).
func writeSearchPlan(w io.Writer, p *searchPlan) error {
	perRung, full := p.epochs()
	fmt.Fprintf(w, "\nsuccessive halving (eta %d, by validation %s, mean over seeds):\n", p.search.Eta, p.search.Metric)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "rung\tepochs\tconfigurations\tepochs trained at most")
	total := 0
	for k, n := range p.search.Survivors(len(p.configs)) {
		total += perRung[k]
		fmt.Fprintf(tw, "%d/%d\t%d\t%d\t%d\n", k+1, len(p.rungs), p.rungs[k], n, perRung[k])
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "budget: at most %d epochs, %.1f%% of the %d the grid without [search] trains at most\n",
		total, 100*float64(total)/float64(max(full, 1)), full)
	for _, r := range p.search.Replaced {
		if _, err := fmt.Fprintf(w, "note: %s is replaced by max_epochs = %d\n", r, p.search.MaxEpochs); err != nil {
			return err
		}
	}
	return nil
}

// printSearch tells stdout how far the search went, what it selected and
// the epochs it spent against the grid without [search].
func (s *Sweep) printSearch() error {
	rec, err := s.readSearch()
	if err != nil {
		return err
	}
	p := newSearchPlan(s.grid, s.runs)
	_, full := p.epochs()
	n := len(rec.Rungs)
	if n == 0 {
		_, err := fmt.Fprintf(s.stdout, "\nsearch: no rung decided yet (%s)\n", s.path(resultsdir.SearchMDName))
		return err
	}
	last := rec.Rungs[n-1]
	what := fmt.Sprintf("rung %d of %d decided", n, len(p.rungs))
	if n == len(p.rungs) {
		what = "no configuration selected: none has a finite score"
		if best, ok := last.selected(); ok {
			what = fmt.Sprintf("selected %s (validation %s %s)", best.Config, p.search.Metric, resultsdir.FormatMetric(float64(best.Score)))
		}
	}
	_, err = fmt.Fprintf(s.stdout, "\nsearch: %s; %d epochs trained, %.1f%% of the %d the grid without [search] trains at most (%s)\n",
		what, last.EpochsSoFar, 100*float64(last.EpochsSoFar)/float64(max(full, 1)), full, s.path(resultsdir.SearchMDName))
	return err
}
