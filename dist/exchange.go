package dist

import (
	"fmt"
	"math"
	"slices"

	"gekc/graph"
	"gekc/internal/logmath"
	"gekc/kg"
	"gekc/models"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// neededRows returns, for each part of the batch, the sorted distinct
// entities its triples (and the padding triple) put in the given slots.
func neededRows(parts [][]kg.Triple, pad kg.Triple, slots []models.Var) [][]int {
	need := make([][]int, len(parts))
	for q, part := range parts {
		ids := make([]int, 0, (len(part)+1)*len(slots))
		for _, v := range slots {
			ids = append(ids, int(entityOf(pad, v)))
			for _, t := range part {
				ids = append(ids, int(entityOf(t, v)))
			}
		}
		slices.Sort(ids)
		need[q] = slices.Compact(ids)
	}
	return need
}

func entityOf(t kg.Triple, v models.Var) int32 {
	if v == models.Subject {
		return t.S
	}
	return t.O
}

// gatherRows fills t.rows with the rows this process's part reads, sent
// by their owners: every process knows every part, so no request is sent.
func (st *Stepper) gatherRows(t *entityTable, parts [][]kg.Triple, pad kg.Triple) error {
	t.need = neededRows(parts, pad, t.slots)
	var err error
	t.send, t.recv, err = exchangeRows(st.comm, st.rows, st.params[t.name], t.rows, t.need)
	return err
}

// exchangeRows fills dst with the rows of the table whose own rows are own
// that need[me] lists (sorted distinct entities), sent by their owners;
// every process passes every process's list. It returns the counts of
// values sent to and received from each process.
func exchangeRows(c Comm, rows Rows, own, dst *tensor.Dense, need [][]int) (send, recv []int, err error) {
	me, np := c.Rank(), c.Size()
	lo, hi, cols := rows.Lo(me), rows.Hi(me), own.Shape()[1]
	send, recv = make([]int, np), make([]int, np)
	for q := range np {
		send[q] = ownedIn(need[q], lo, hi) * cols
	}
	for _, e := range need[me] {
		recv[rows.Owner(e)] += cols
	}
	switch x := own.Data().(type) {
	case []float32:
		err = c.AlltoallvFloat32(rowsFor(x, need, cols, lo, hi), send, dst.Data().([]float32), recv)
	case []float64:
		err = c.AlltoallvFloat64(rowsFor(x, need, cols, lo, hi), send, dst.Data().([]float64), recv)
	default:
		err = fmt.Errorf("dist: dtype %v", own.Dtype())
	}
	return send, recv, err
}

// ownedIn counts the entries of a sorted list in [lo, hi).
func ownedIn(rows []int, lo, hi int) int {
	a, _ := slices.BinarySearch(rows, lo)
	b, _ := slices.BinarySearch(rows, hi)
	return b - a
}

// rowsFor lays out, process by process, the own rows (of entities
// [lo, hi)) each process's list reads.
func rowsFor[T float32 | float64](own []T, need [][]int, cols, lo, hi int) []T {
	var out []T
	for _, list := range need {
		for _, e := range list {
			if e >= lo && e < hi {
				out = append(out, own[(e-lo)*cols:(e-lo+1)*cols]...)
			}
		}
	}
	return out
}

// returnRows sends the gradients of the gathered rows back to their
// owners and adds those of the own rows into t.grad.
func (st *Stepper) returnRows(t *entityTable) error {
	g := st.grads[t.name].Value().(*tensor.Dense)
	n := len(t.need[st.comm.Rank()]) * t.cols
	switch grad := t.grad.Data().(type) {
	case []float32:
		return returnRowsOf(st, t, g.Data().([]float32)[:n], grad, st.comm.AlltoallvFloat32)
	case []float64:
		return returnRowsOf(st, t, g.Data().([]float64)[:n], grad, st.comm.AlltoallvFloat64)
	}
	return fmt.Errorf("dist: dtype %v", t.grad.Dtype())
}

func returnRowsOf[T float32 | float64](st *Stepper, t *entityTable, send, grad []T,
	alltoallv func([]T, []int, []T, []int) error) error {
	total := 0
	for _, c := range t.send {
		total += c
	}
	recv := make([]T, total)
	if err := alltoallv(send, t.recv, recv, t.send); err != nil {
		return err
	}
	at := 0
	for _, need := range t.need {
		for _, e := range need {
			if e < st.lo || e >= st.hi {
				continue
			}
			row := grad[(e-st.lo)*t.cols : (e-st.lo+1)*t.cols]
			for j := range row {
				row[j] += recv[at+j]
			}
			at += t.cols
		}
	}
	return nil
}

// shardStat computes the statistic of a process's own rows of an entity
// table (models.Model.EntityStat) and passes an upstream gradient of it
// on to the rows, each in a compiled program of its own.
type shardStat struct {
	nonNeg bool
	fwd    *graph.Program
	stat   *G.Node
	own    []float64 // non-negative: the own rows' column log-sums
	up     *tensor.Dense
	bwd    *graph.Program
	grad   *G.Node
}

func newShardStat(m *models.Model, rows *tensor.Dense) (*shardStat, error) {
	s := &shardStat{nonNeg: m.Semantics == models.NonNegative}
	var err error
	bind := func() (*G.Node, *G.Node, error) {
		g := G.NewGraph()
		x := G.NewMatrix(g, m.Dtype, G.WithShape(rows.Shape()...), G.WithName("own"), G.WithValue(rows))
		stat, err := m.EntityStat(x)
		return x, stat, err
	}
	if _, s.stat, err = bind(); err != nil {
		return nil, err
	}
	if s.fwd, err = graph.Compile(s.stat); err != nil {
		return nil, err
	}
	x, stat, err := bind()
	if err != nil {
		return nil, err
	}
	s.up = tensor.New(tensor.Of(m.Dtype), tensor.WithShape(stat.Shape()...))
	up := G.NewMatrix(x.Graph(), m.Dtype, G.WithShape(stat.Shape()...), G.WithName("upstream"), G.WithValue(s.up))
	// Seeded with the upstream gradient itself, the pass needs no forward
	// statistic: a Gram's gradient X(U + Uᵀ) is not a second Gram.
	grads, err := graph.BackwardFrom(stat, up, x)
	if err != nil {
		return nil, err
	}
	s.grad = grads[0]
	if s.bwd, err = graph.Compile(s.grad); err != nil {
		return nil, err
	}
	return s, nil
}

// sumStat sets t.stat to the whole table's statistic: the sum of the
// processes' Gram matrices, or the log-sum-exp of their column log-sums.
func (st *Stepper) sumStat(t *entityTable) error {
	s := t.shardStat
	if err := s.fwd.Run(); err != nil {
		return err
	}
	if !s.nonNeg {
		graph.CopyValues(t.stat, s.stat.Value().(*tensor.Dense))
		return sum(st.comm, t.stat)
	}
	own := graph.Float64s(s.stat.Value())
	s.own = append(s.own[:0], own...)
	np, k := st.comm.Size(), len(own)
	all := make([]float64, np*k)
	counts := slices.Repeat([]int{k}, np)
	if err := st.comm.AllgathervFloat64(own, all, counts, 1); err != nil {
		return err
	}
	out, col := make([]float64, k), make([]float64, np)
	for j := range out {
		for q := range np {
			col[q] = all[q*k+j]
		}
		out[j] = logmath.LogSumExp(col)
	}
	graph.SetFloat64s(t.stat, out)
	return nil
}

// statBackward passes the summed gradient of the whole table's statistic
// on to the own rows; t.grad becomes the result (the program's buffer),
// to which returnRows then adds the gathered rows' gradients.
func (st *Stepper) statBackward(t *entityTable) error {
	s := t.shardStat
	up := t.statGrad.Value().(*tensor.Dense)
	if !s.nonNeg {
		graph.CopyValues(s.up, up)
	} else {
		// d/dl_own of log Σ_q exp l_q is exp(l_own − L).
		whole := graph.Float64s(t.stat)
		g := graph.Float64s(up)
		out := make([]float64, len(g))
		for j := range out {
			out[j] = g[j] * math.Exp(s.own[j]-whole[j])
		}
		graph.SetFloat64s(s.up, out)
	}
	if err := s.bwd.Run(); err != nil {
		return err
	}
	t.grad = s.grad.Value().(*tensor.Dense)
	return nil
}
