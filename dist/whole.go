package dist

import (
	"fmt"
	"gekc/graph"
	"slices"

	"gekc/models"

	"gorgonia.org/tensor"
)

// WholeOptimizer presents the processes' optimiser as one over m, the whole
// model the stepper was built from, for saving and restoring a run's state
// in the one-process format (any process count reads it back):
//
//   - Slot of an entity table gathers every process's rows of the slot
//     into a tensor of the whole table's shape (a collective: every
//     process asks for the same slots in the same order);
//   - SetSlot of an entity table keeps this process's rows of t;
//   - the replicated tables' slots are the optimiser's own.
//
// Step is refused: the stepper steps. Slot has no error to return: a
// failed gather makes it return nil, and Err the error, which a state
// built from it must be checked for.
func (st *Stepper) WholeOptimizer(m *models.Model) *WholeOptimizer {
	return &WholeOptimizer{st: st, m: m}
}

// WholeOptimizer is a sharded run's optimiser as one over the whole model
// (Stepper.WholeOptimizer).
type WholeOptimizer struct {
	st  *Stepper
	m   *models.Model
	err error
}

// Err returns the first error of a gather behind Slot.
func (w *WholeOptimizer) Err() error { return w.err }

func (w *WholeOptimizer) Step(params, grads []*tensor.Dense) (int, error) {
	return 0, fmt.Errorf("dist: a sharded run's optimiser steps through its Stepper")
}

func (w *WholeOptimizer) Steps() int      { return w.st.opt.Steps() }
func (w *WholeOptimizer) SetSteps(n int)  { w.st.opt.SetSteps(n) }
func (w *WholeOptimizer) Slots() []string { return w.st.opt.Slots() }
func (w *WholeOptimizer) own(p *tensor.Dense) (string, bool) {
	for _, name := range w.st.m.Layout.EntityTables() {
		if w.m.Param(name) == p {
			return name, true
		}
	}
	return "", false
}

func (w *WholeOptimizer) Slot(p *tensor.Dense, slot string) *tensor.Dense {
	name, ok := w.own(p)
	if !ok {
		return w.st.opt.Slot(p, slot)
	}
	part := w.st.opt.Slot(w.st.params[name], slot)
	if part == nil {
		return nil // before the first step, on every process alike
	}
	whole := tensor.New(tensor.Of(p.Dtype()), tensor.WithShape(p.Shape()...))
	if err := w.st.gather(part, whole); err != nil {
		if w.err == nil {
			w.err = fmt.Errorf("dist: gathering %s's %s: %w", name, slot, err)
		}
		return nil
	}
	return whole
}

func (w *WholeOptimizer) SetSlot(p *tensor.Dense, slot string, t *tensor.Dense) error {
	name, ok := w.own(p)
	if !ok {
		return w.st.opt.SetSlot(p, slot, t)
	}
	if !t.Shape().Eq(p.Shape()) || t.Dtype() != p.Dtype() {
		return fmt.Errorf("dist: %s's %s is %v %v, the table %v %v", name, slot, t.Shape(), t.Dtype(), p.Shape(), p.Dtype())
	}
	return w.st.opt.SetSlot(w.st.params[name], slot, w.st.ownRows(t))
}

// gather writes every process's rows (part, this process's) into whole.
func (st *Stepper) gather(part, whole *tensor.Dense) error {
	cols := part.Shape()[1]
	rows := make([]int, st.rows.P)
	for q := range rows {
		rows[q] = st.rows.Hi(q) - st.rows.Lo(q)
	}
	switch x := part.Data().(type) {
	case []float32:
		return st.comm.AllgathervFloat32(x, whole.Data().([]float32), rows, cols)
	case []float64:
		return st.comm.AllgathervFloat64(x, whole.Data().([]float64), rows, cols)
	}
	return fmt.Errorf("dist: dtype %v", part.Dtype())
}

// ownRows returns a copy of this process's rows of a whole table's tensor.
func (st *Stepper) ownRows(t *tensor.Dense) *tensor.Dense { return rowsOf(t, st.lo, st.hi) }

// rowsOf returns a copy of rows [lo, hi) of a table.
func rowsOf(t *tensor.Dense, lo, hi int) *tensor.Dense {
	return rowView(t, lo, hi).Clone().(*tensor.Dense)
}

// rowView returns rows [lo, hi) of a table, sharing its values.
func rowView(t *tensor.Dense, lo, hi int) *tensor.Dense {
	cols := t.Shape()[1]
	var backing any
	switch x := t.Data().(type) {
	case []float32:
		backing = x[lo*cols : hi*cols]
	case []float64:
		backing = x[lo*cols : hi*cols]
	}
	return tensor.New(tensor.WithShape(hi-lo, cols), tensor.WithBacking(backing))
}

// Reload copies this process's rows of m's entity tables into its part,
// after m was set from outside (a resumed state): no collective.
func (st *Stepper) Reload(m *models.Model) {
	for _, name := range st.m.Layout.EntityTables() {
		graph.CopyValues(st.params[name], rowView(m.Param(name), st.lo, st.hi))
	}
}

// Agree tells every process, for each flag, whether any process raised
// it: processes of one run take every step together, so they must stop,
// or save their state, at the same step boundary.
func (st *Stepper) Agree(flags ...bool) ([]bool, error) {
	x := make([]int64, len(flags))
	for i, f := range flags {
		if f {
			x[i] = 1
		}
	}
	if err := st.comm.MaxInt64(x); err != nil {
		return nil, err
	}
	out := make([]bool, len(flags))
	for i, v := range x {
		out[i] = v > 0
	}
	return out, nil
}

// ProcessStats is one process's account of a sharded run: what its steps
// took and sent, and its peak resident memory.
type ProcessStats struct {
	Rank             int     `json:"rank"`
	PeakRSSBytes     int64   `json:"peak_rss_bytes"`
	Steps            int     `json:"steps"`
	StepSeconds      float64 `json:"step_seconds"`        // mean per step
	CommShare        float64 `json:"comm_share"`          // of the step time, inside collectives
	SentBytesPerStep float64 `json:"sent_bytes_per_step"` // handed to collectives to send
}

// Processes gathers every process's ProcessStats (this one's peak RSS is
// rss), in rank order, on every process.
func (st *Stepper) Processes(rss int64) ([]ProcessStats, error) {
	s := st.stats
	mine := []float64{float64(rss), float64(s.Steps), s.Seconds, s.CommSeconds, float64(s.SentBytes)}
	all := make([]float64, len(mine)*st.rows.P)
	if err := st.comm.AllgathervFloat64(mine, all, slices.Repeat([]int{len(mine)}, st.rows.P), 1); err != nil {
		return nil, err
	}
	out := make([]ProcessStats, st.rows.P)
	for q := range out {
		x := all[q*len(mine):]
		steps := max(x[1], 1)
		out[q] = ProcessStats{Rank: q, PeakRSSBytes: int64(x[0]), Steps: int(x[1]), StepSeconds: x[2] / steps,
			SentBytesPerStep: x[4] / steps}
		if x[2] > 0 {
			out[q].CommShare = x[3] / x[2]
		}
	}
	return out, nil
}

var _ graph.Optimizer = (*WholeOptimizer)(nil)

// GatherRows returns rows [a, b) of the whole entity table of which t
// holds this process's rows (of any group of a state: parameters, best,
// optimiser slots), as a []float32 or []float64 on every process: a
// collective (train.StatePart.Gather).
func (st *Stepper) GatherRows(t *tensor.Dense, a, b int) (any, error) {
	if t.Dims() != 2 || t.Shape()[0] != st.hi-st.lo || a < 0 || b > st.rows.N || a > b {
		return nil, fmt.Errorf("dist: rows [%d, %d) of a table of which %v is rows [%d, %d)", a, b, t.Shape(), st.lo, st.hi)
	}
	counts := make([]int, st.comm.Size())
	for q := range counts {
		counts[q] = max(0, min(b, st.rows.Hi(q))-max(a, st.rows.Lo(q)))
	}
	cols := t.Shape()[1]
	from, to := (min(max(a, st.lo), st.hi)-st.lo)*cols, (max(min(b, st.hi), st.lo)-st.lo)*cols
	switch x := t.Data().(type) {
	case []float32:
		recv := make([]float32, (b-a)*cols)
		return recv, st.comm.AllgathervFloat32(x[from:max(from, to)], recv, counts, cols)
	case []float64:
		recv := make([]float64, (b-a)*cols)
		return recv, st.comm.AllgathervFloat64(x[from:max(from, to)], recv, counts, cols)
	}
	return nil, fmt.Errorf("dist: dtype %v", t.Dtype())
}

// PartModel returns the model as this process holds it: its rows of the
// entity tables, the whole of the others.
func (st *Stepper) PartModel() (*models.Model, error) { return st.m.WithParams(st.params) }
