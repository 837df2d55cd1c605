package dist

import (
	"fmt"
	"slices"

	"gekc/models"

	"gorgonia.org/tensor"
)

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
