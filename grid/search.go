package grid

import (
	"fmt"
	"slices"
)

// Search is a grid's [search] section: how its configurations share the
// training budget. A grid without one trains every run to its epochs.
//
// Successive halving (Method "halving") trains every configuration for
// the first rung's epochs, keeps the best 1/Eta of them by the validation
// Metric (the mean over a configuration's seeds, higher is better), and
// continues those from their resume state to the next rung's epochs, until
// MaxEpochs. Every run's epochs is MaxEpochs: a run that reaches the last
// rung is the run the grid without [search] trains.
type Search struct {
	Method    string `toml:"method" json:"method"`         // "halving"
	MinEpochs int    `toml:"min_epochs" json:"min_epochs"` // the first rung's epochs
	MaxEpochs int    `toml:"max_epochs" json:"max_epochs"` // the last rung's epochs, every run's epochs
	Eta       int    `toml:"eta" json:"eta"`               // each rung keeps the best 1/Eta configurations
	Metric    string `toml:"metric" json:"metric"`         // "mrr" or "ll" (validation); "" means "mrr"
	Line      int    `toml:"-" json:"-"`                   // the section's line in the grid file
	// Replaced names the epochs keys of the grid that max_epochs replaced,
	// as "file:line: block epochs = value", for the command to say.
	Replaced []string `toml:"-" json:"-"`
}

// Same reports whether s and o search alike (their lines aside).
func (s *Search) Same(o *Search) bool {
	return s.Method == o.Method && s.MinEpochs == o.MinEpochs && s.MaxEpochs == o.MaxEpochs && s.Eta == o.Eta && s.Metric == o.Metric
}

// SearchMetrics are the validation metrics a search may rank by.
var SearchMetrics = []string{"mrr", "ll"}

// Rungs returns the epochs each rung trains its runs to: MinEpochs·Eta^k
// while below MaxEpochs, then MaxEpochs.
func (s *Search) Rungs() []int {
	var rungs []int
	if s.MinEpochs < 1 || s.Eta < 2 { // not a valid section: no rungs but the last
		return []int{s.MaxEpochs}
	}
	for e := s.MinEpochs; e < s.MaxEpochs; e *= s.Eta {
		rungs = append(rungs, e)
		if e > s.MaxEpochs/s.Eta { // the next would pass MaxEpochs (or overflow)
			break
		}
	}
	return append(rungs, s.MaxEpochs)
}

// Survivors returns how many of n configurations each rung trains: all of
// them first, then 1/Eta of the rung before (rounded down), at least one.
func (s *Search) Survivors(n int) []int {
	counts := make([]int, len(s.Rungs()))
	for k := range counts {
		counts[k] = n
		n = max(n/s.Eta, 1)
	}
	return counts
}

// check reports the section's mistakes; every's are the eval.every values
// of the grid's runs, on which each rung must end (a rung ends with a
// validation; one between a run's own would change its early stopping).
func (s *Search) check(path string, every []int) []error {
	at := func(format string, a ...any) error {
		return fmt.Errorf("%s:%d: [search]: %s", path, max(s.Line, 1), fmt.Sprintf(format, a...))
	}
	if s.Metric == "" {
		s.Metric = "mrr"
	}
	var errs []error
	switch {
	case s.Method == "":
		errs = append(errs, at(`method is required: method = "halving"`))
	case s.Method != "halving":
		errs = append(errs, at(`method %q: the one method is "halving"`, s.Method))
	}
	if !slices.Contains(SearchMetrics, s.Metric) {
		errs = append(errs, at("metric %q: want one of %q", s.Metric, SearchMetrics))
	}
	if s.Eta < 2 {
		errs = append(errs, at("eta %d: want at least 2 (each rung keeps 1/eta)", s.Eta))
	}
	if s.MinEpochs < 1 || s.MaxEpochs < s.MinEpochs {
		errs = append(errs, at("min_epochs %d, max_epochs %d: want 1 <= min_epochs <= max_epochs", s.MinEpochs, s.MaxEpochs))
	}
	if len(errs) > 0 {
		return errs
	}
	for _, ev := range every {
		for _, e := range s.Rungs() {
			if e%ev != 0 {
				return append(errs, at("rung of %d epochs is not a multiple of eval.every %d: a rung ends with a validation, which must be one the run makes anyway", e, ev))
			}
		}
	}
	return errs
}

// searchEpochs makes [search] max_epochs every run's epochs. An epochs
// key beside it is dropped, and said in Search.Replaced: the rungs set the
// runs' budgets.
func searchEpochs(path string, ix *lineIndex, raw *rawGrid) {
	if v, ok := raw.Defaults["epochs"]; ok {
		raw.Search.Replaced = append(raw.Search.Replaced, fmt.Sprintf("%s:%d: [defaults] epochs = %v", path, max(ix.line("defaults", "epochs"), 1), v))
		delete(raw.Defaults, "epochs")
	}
	for i, b := range raw.Sweep {
		if v, ok := b["epochs"]; ok {
			raw.Search.Replaced = append(raw.Search.Replaced, fmt.Sprintf("%s:%d: [[sweep]] block %d epochs = %v", path, max(ix.line(sweepBlockName(i), "epochs"), 1), i+1, v))
			delete(b, "epochs")
		}
	}
	if raw.Defaults == nil {
		raw.Defaults = map[string]any{}
	}
	raw.Defaults["epochs"] = int64(max(raw.Search.MaxEpochs, 1)) // 0 is reported by Search.check
}

// everyOf returns the distinct eval.every values of runs.
func everyOf(runs []Run) []int {
	var every []int
	for _, r := range runs {
		if !slices.Contains(every, r.Spec.Eval.Every) {
			every = append(every, r.Spec.Eval.Every)
		}
	}
	return every
}

// String is the section as a grid writes it, on one line.
func (s *Search) String() string {
	return fmt.Sprintf("method = %q, min_epochs = %d, max_epochs = %d, eta = %d, metric = %q", s.Method, s.MinEpochs, s.MaxEpochs, s.Eta, s.Metric)
}

// Configurations groups runs by configuration (RunSpec.ConfigID: a
// configuration's runs are its seeds), in the order of their first run:
// what a search ranks.
func Configurations(runs []Run) (ids []string, byID map[string][]Run) {
	byID = map[string][]Run{}
	for _, r := range runs {
		id := r.Spec.ConfigID()
		if _, ok := byID[id]; !ok {
			ids = append(ids, id)
		}
		byID[id] = append(byID[id], r)
	}
	return ids, byID
}

// RunsPerRung returns the most runs each rung of the search over runs
// trains: its survivors times the most seeds of a configuration (the size
// of a rung's SLURM array).
func (s *Search) RunsPerRung(runs []Run) []int {
	ids, byID := Configurations(runs)
	seeds := 0
	for _, id := range ids {
		seeds = max(seeds, len(byID[id]))
	}
	counts := s.Survivors(len(ids))
	for k := range counts {
		counts[k] *= seeds
	}
	return counts
}
