package train

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"gekc/graph"
	"gekc/kg"
	"gekc/models"

	"gorgonia.org/tensor"
)

// State is a run between two optimiser steps: everything Run carries from
// one step to the next. A run stopped after epoch k, or after step b of
// epoch k+1, and resumed from the State it saved then (Config.Resume) trains
// exactly as if it had never stopped: the same shuffles, the same
// optimiser state, the same early stopping.
type State struct {
	Epoch int // epochs completed
	// Batch is the number of steps of epoch Epoch+1 already taken (0 at an
	// epoch boundary); EpochLoss is their batch-size-weighted loss sum and
	// EpochSeconds their training time, so that the epoch's record comes
	// out as if it had not been cut.
	Batch        int
	EpochLoss    float64
	EpochSeconds float64
	Steps        int     // optimiser steps taken, also Adam's bias-correction count
	StepSeconds  float64 // seconds spent in those steps
	Best         float64 // best validation score so far; −Inf when none
	BestEpoch    int     // epoch of Best; -1 when none
	Since        int     // validations without improvement since BestEpoch
	// LL is the run's log-likelihood track (Result.LL); nil in a state
	// written before runs tracked it.
	LL      *LLTrack
	Epochs  []EpochRecord
	Initial map[string]float64 // Result.Initial of a distilled run
	Notes   []string           // notes of earlier resumptions
	// Params and BestParams are the model's current and best validated
	// parameters, keyed by parameter name; Slots the optimiser's state of
	// each (graph.Optimizer.Slots: "adam_m" and "adam_v" for Adam), keyed
	// by slot and then parameter name, absent before the first step.
	Params, BestParams map[string]*tensor.Dense
	Slots              map[string]map[string]*tensor.Dense
	// BestLLParams are the parameters at the best validation
	// log-likelihood (LL.Epoch) of a run that keeps them
	// (Config.KeepBestLL); nil when it does not.
	BestLLParams map[string]*tensor.Dense
	// Part, when set, makes the state one process's part of a sharded
	// run's (see StatePart); a writer writes it as the whole state.
	Part *StatePart
}

// StatePart describes a sharded run's state as one process holds it: in
// every group (parameters, best, slots) the entity tables (Tables) hold
// rows [Lo, Hi) of N, the other tables the whole. Gather returns rows
// [a, b) of the whole table one of them (t, this process's rows) is part
// of: a collective, which every process calls in the same order, with
// its own part of the same table (State.Entries' order, StateChunkRows
// rows at a time), so that one process can write the whole state without
// any holding it.
type StatePart struct {
	Tables    []string
	Lo, Hi, N int
	Gather    func(t *tensor.Dense, a, b int) (any, error)
}

// StateChunkRows is the number of rows of an entity table gathered at a
// time when a sharded state is written.
const StateChunkRows = 1 << 14

// StateEntry is one table of one group of a state, as written.
type StateEntry struct {
	Group, Table string
	T            *tensor.Dense
	// Cut: T is this process's rows of an entity table of a StatePart.
	Cut bool
}

// Entries lists the state's tables in the order they are written: the
// parameters, the best parameters, those of the best validation
// log-likelihood when kept, then each optimiser slot in name order; the
// tables of each in name order.
func (s *State) Entries() []StateEntry {
	groups := []string{"param", "best"}
	if s.BestLLParams != nil {
		groups = append(groups, "best_ll")
	}
	groups = append(groups, slices.Sorted(maps.Keys(s.Slots))...)
	var out []StateEntry
	for _, g := range groups {
		tables := s.group(g)
		for _, n := range slices.Sorted(maps.Keys(tables)) {
			cut := s.Part != nil && slices.Contains(s.Part.Tables, n)
			out = append(out, StateEntry{Group: g, Table: n, T: tables[n], Cut: cut})
		}
	}
	return out
}

// group returns the tables of a group of Entries.
func (s *State) group(g string) map[string]*tensor.Dense {
	switch g {
	case "param":
		return s.Params
	case "best":
		return s.BestParams
	case "best_ll":
		return s.BestLLParams
	}
	return s.Slots[g]
}

// rowsOf returns s with rows [lo, hi) of its tables named in tables that
// hold all n rows, sharing their values: a whole state (or one process's
// part, returned as it is) as one process of a sharded run restores it.
func (s *State) rowsOf(tables []string, lo, hi, n int) *State {
	out := *s
	cut := func(m map[string]*tensor.Dense) map[string]*tensor.Dense {
		if m == nil {
			return nil
		}
		c := maps.Clone(m)
		for name, t := range m {
			if slices.Contains(tables, name) && t.Dims() == 2 && t.Shape()[0] == n {
				c[name] = graph.RowView(t, lo, hi)
			}
		}
		return c
	}
	out.Params, out.BestParams, out.BestLLParams = cut(s.Params), cut(s.BestParams), cut(s.BestLLParams)
	if s.Slots != nil {
		out.Slots = map[string]map[string]*tensor.Dense{}
		for slot, ts := range s.Slots {
			out.Slots[slot] = cut(ts)
		}
	}
	return &out
}

// Whole returns the whole state of which s is a process's part, for a
// SaveState that keeps states in memory: a collective, the other
// processes calling Whole or GatherAll. A state that is no part is
// returned as it is.
func (s *State) Whole() (*State, error) {
	if s.Part == nil {
		return s, nil
	}
	out := *s
	out.Part = nil
	out.Params, out.BestParams = maps.Clone(s.Params), maps.Clone(s.BestParams)
	if s.BestLLParams != nil {
		out.BestLLParams = maps.Clone(s.BestLLParams)
	}
	out.Slots = map[string]map[string]*tensor.Dense{}
	for slot, ts := range s.Slots {
		out.Slots[slot] = maps.Clone(ts)
	}
	for _, e := range s.Entries() {
		if !e.Cut {
			continue
		}
		whole := tensor.New(tensor.Of(e.T.Dtype()), tensor.WithShape(s.Part.N, e.T.Shape()[1]))
		at := 0
		err := s.GatherRows(e, func(rows any) error {
			switch r := rows.(type) {
			case []float32:
				at += copy(whole.Data().([]float32)[at:], r)
			case []float64:
				at += copy(whole.Data().([]float64)[at:], r)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		out.group(e.Group)[e.Table] = whole
	}
	return &out, nil
}

// GatherRows calls fn with each chunk of rows of e, a cut entry of a
// sharded state, gathered from every process (StatePart.GatherTable).
// Every process gathers every cut entry in Entries' order; fn nil only
// gathers, as the processes that do not write do.
func (s *State) GatherRows(e StateEntry, fn func(rows any) error) error {
	return s.Part.GatherTable(e.T, fn)
}

// GatherTable calls fn with each chunk of rows of the whole table of
// which t holds this process's rows, gathered from every process,
// StateChunkRows rows at a time; fn nil only gathers. An error of fn is
// returned once the table's gathers are done: the other processes wait
// for them.
func (p *StatePart) GatherTable(t *tensor.Dense, fn func(rows any) error) error {
	var first error
	for a := 0; a < p.N; a += StateChunkRows {
		rows, err := p.Gather(t, a, min(a+StateChunkRows, p.N))
		if err != nil {
			return err
		}
		if fn != nil && first == nil {
			first = fn(rows)
		}
	}
	return first
}

// GatherModel takes part in the gathers of writing the model of which m
// is this process's part, without writing (GatherTable of each entity
// table in layout order, as the writer does).
func (p *StatePart) GatherModel(m *models.Model) error {
	for _, name := range m.ParamNames() {
		if slices.Contains(p.Tables, name) {
			if err := p.GatherTable(m.Param(name), nil); err != nil {
				return err
			}
		}
	}
	return nil
}

// GatherAll takes a sharded state's part in the gathers of its writing
// without writing (GatherRows of every cut entry).
func (s *State) GatherAll() error {
	for _, e := range s.Entries() {
		if e.Cut {
			if err := s.GatherRows(e, nil); err != nil {
				return err
			}
		}
	}
	return nil
}

// Seconds is the duration a state keeps as a number of seconds, rounded
// to the nanosecond: truncated, 0.128615561 s would come back a hair
// under 128,615,561 ns, and a state written again from what was read
// would lose 1 ns each time.
func Seconds(s float64) time.Duration { return time.Duration(math.Round(s * float64(time.Second))) }

// ResumePoint says where a run stopped after epoch epochs and batch steps
// of the next one goes on: "after epoch 2", "in epoch 3 after step 4".
func ResumePoint(epoch, batch int) string {
	if batch > 0 {
		return fmt.Sprintf("in epoch %d after step %d", epoch+1, batch)
	}
	return fmt.Sprintf("after epoch %d", epoch)
}

// ErrStateMismatch reports a resume State that does not fit the model or
// is inconsistent; a caller may then train from scratch instead.
var ErrStateMismatch = errors.New("resume state does not fit the run")

// stateOf describes the loop's state. Its tensors alias the live ones.
func stateOf(m *models.Model, best, bestLL snapshot, opt graph.Optimizer, res *Result, epoch, steps int, stepSeconds float64, stop *stopping, notes []string) *State {
	s := &State{Epoch: epoch, Steps: steps, StepSeconds: stepSeconds, Best: stop.best, BestEpoch: stop.bestEpoch, Since: stop.since,
		Epochs: res.Epochs, Initial: res.Initial, Notes: notes,
		Params: map[string]*tensor.Dense{}, BestParams: map[string]*tensor.Dense(best), Slots: map[string]map[string]*tensor.Dense{}}
	if stop.llTracked {
		ll := stop.ll
		s.LL = &ll
	}
	if bestLL != nil {
		s.BestLLParams = map[string]*tensor.Dense(bestLL)
	}
	for _, n := range m.ParamNames() {
		p := m.Param(n)
		s.Params[n] = p
		for _, slot := range opt.Slots() {
			if t := opt.Slot(p, slot); t != nil {
				if s.Slots[slot] == nil {
					s.Slots[slot] = map[string]*tensor.Dense{}
				}
				s.Slots[slot][n] = t
			}
		}
	}
	return s
}

// restore loads s into the model, the best snapshots and the optimiser,
// after checking that every tensor fits the model and the optimiser. The
// best-LL snapshot (nil when the run keeps none) is loaded when the state
// has it; a state without it leaves it as it is.
func (s *State) restore(m *models.Model, best, bestLL snapshot, opt graph.Optimizer) error {
	names := m.ParamNames()
	slots := opt.Slots()
	for slot := range s.Slots {
		if !slices.Contains(slots, slot) {
			return fmt.Errorf("train: resume state holds optimiser state %q, which this run's optimiser (keeping %v) does not: %w", slot, slots, ErrStateMismatch)
		}
	}
	for _, n := range names {
		p := m.Param(n)
		type set struct {
			what string
			set  map[string]*tensor.Dense
			must bool
		}
		sets := []set{{"parameter", s.Params, true}, {"best parameter", s.BestParams, true}}
		if s.BestLLParams != nil {
			sets = append(sets, set{"best-log-likelihood parameter", s.BestLLParams, true})
		}
		for _, slot := range slots {
			sets = append(sets, set{"optimiser state " + slot + " of", s.Slots[slot], false})
		}
		for _, t := range sets {
			x, ok := t.set[n]
			if !ok {
				if t.must {
					return fmt.Errorf("train: resume state has no %s %q: %w", t.what, n, ErrStateMismatch)
				}
				continue
			}
			if !x.Shape().Eq(p.Shape()) || x.Dtype() != p.Dtype() {
				return fmt.Errorf("train: resume state's %s %q is %v %v; the model needs %v %v: %w", t.what, n, x.Shape(), x.Dtype(), p.Shape(), p.Dtype(), ErrStateMismatch)
			}
		}
		// A parameter has all of its optimiser state or none (before its
		// first step).
		have := 0
		for _, slot := range slots {
			if s.Slots[slot][n] != nil {
				have++
			}
		}
		if have != 0 && have != len(slots) {
			return fmt.Errorf("train: resume state has %d of the %d optimiser states %v of %q: %w", have, len(slots), slots, n, ErrStateMismatch)
		}
	}
	if s.Steps > 0 && len(slots) > 0 && len(s.Slots) == 0 {
		return fmt.Errorf("train: resume state has taken %d steps but holds no optimiser state (the run's optimiser keeps %v): %w", s.Steps, slots, ErrStateMismatch)
	}
	if s.BestLLParams != nil && s.LL == nil {
		return fmt.Errorf("train: resume state has best-log-likelihood parameters but no log-likelihood track: %w", ErrStateMismatch)
	}
	for n := range s.BestLLParams {
		if !slices.Contains(names, n) {
			return fmt.Errorf("train: resume state has best-log-likelihood parameter %q, which model %s does not: %w", n, m.Name, ErrStateMismatch)
		}
	}
	for n := range s.Params {
		if !slices.Contains(names, n) {
			return fmt.Errorf("train: resume state has parameter %q, which model %s does not: %w", n, m.Name, ErrStateMismatch)
		}
	}
	if s.Epoch < 0 || s.Steps < 0 || s.BestEpoch > s.Epoch || s.Batch < 0 || s.Batch > s.Steps {
		return fmt.Errorf("train: resume state is inconsistent (epoch %d, steps %d, step %d of the next epoch, best epoch %d): %w",
			s.Epoch, s.Steps, s.Batch, s.BestEpoch, ErrStateMismatch)
	}
	if s.BestEpoch >= 0 && math.IsNaN(s.Best) {
		return fmt.Errorf("train: resume state has a best epoch %d without a score: %w", s.BestEpoch, ErrStateMismatch)
	}
	for _, n := range names {
		graph.CopyValues(m.Param(n), s.Params[n])
		graph.CopyValues(best[n], s.BestParams[n])
		if bestLL != nil && s.BestLLParams != nil {
			graph.CopyValues(bestLL[n], s.BestLLParams[n])
		}
		for _, slot := range slots {
			if t := s.Slots[slot][n]; t != nil {
				if err := opt.SetSlot(m.Param(n), slot, t); err != nil {
					return err
				}
			}
		}
	}
	opt.SetSteps(s.Steps)
	return nil
}

// shuffleEpoch permutes the training triples for an epoch. Each epoch
// permutes the previous epoch's order with its own seeded stream, so a
// resumed run replays the permutations of the epochs it skips.
func shuffleEpoch(train []kg.Triple, seed uint64, epoch int) {
	rng := rand.New(rand.NewPCG(seed, uint64(epoch)))
	rng.Shuffle(len(train), func(i, j int) { train[i], train[j] = train[j], train[i] })
}

// Clone returns a deep copy of s, for a SaveState that keeps states in
// memory.
func (s *State) Clone() *State {
	c := *s
	c.Epochs = slices.Clone(s.Epochs)
	c.Notes = slices.Clone(s.Notes)
	if s.LL != nil {
		ll := *s.LL
		c.LL = &ll
	}
	if s.Initial != nil {
		c.Initial = maps.Clone(s.Initial)
	}
	c.Params, c.BestParams = cloneTensors(s.Params), cloneTensors(s.BestParams)
	if s.BestLLParams != nil {
		c.BestLLParams = cloneTensors(s.BestLLParams)
	}
	if s.Slots != nil {
		c.Slots = map[string]map[string]*tensor.Dense{}
		for slot, ts := range s.Slots {
			c.Slots[slot] = cloneTensors(ts)
		}
	}
	return &c
}

func cloneTensors(ts map[string]*tensor.Dense) map[string]*tensor.Dense {
	out := make(map[string]*tensor.Dense, len(ts))
	for n, t := range ts {
		out[n] = t.Clone().(*tensor.Dense)
	}
	return out
}
