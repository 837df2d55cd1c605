package dist

import (
	"fmt"

	"gekc/graph"
	"gekc/kg"
	"gekc/metrics"
	"gekc/models"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// rankPart scores queries against this process's own rows. Each entity
// table is bound as its own rows followed by the spare rows its backing
// keeps (Stepper.full): the queries' subjects' rows go to spare rows
// [0, queries), their objects' to [queries, 2·queries), so a query's
// true answer is scored in the same run as the candidates.
type rankPart struct {
	queries, own int
	s, r, o      []int
	cand         [2]*G.Node // subject and object candidates, own rows first
	prog         [2]*graph.Program
}

// newRankPart builds the ranking programs for as many queries as keep
// the two candidate buffers within limit bytes (at least one).
func (st *Stepper) newRankPart(limit int64) (*rankPart, error) {
	one, err := st.buildRankPart(1)
	if err != nil {
		return nil, err
	}
	perQuery := max(graph.Bytes(one.cand[0])+graph.Bytes(one.cand[1]), 1)
	return st.buildRankPart(int(max(min(limit/perQuery, maxEvalQueries), 1)))
}

func (st *Stepper) buildRankPart(queries int) (*rankPart, error) {
	m := st.m
	rp := &rankPart{queries: queries, own: st.hi - st.lo}
	values := map[string]*tensor.Dense{}
	for _, name := range m.ParamNames() {
		values[name] = st.params[name]
	}
	for name, full := range st.full {
		values[name] = full
	}
	g := G.NewGraph()
	part, err := m.BindPart(g, values)
	if err != nil {
		return nil, err
	}
	rp.s, rp.r, rp.o = make([]int, queries), make([]int, queries), make([]int, queries)
	b, err := part.NewBatch(graph.IndexVector(g, "s", rp.s), graph.IndexVector(g, "r", rp.r), graph.IndexVector(g, "o", rp.o))
	if err != nil {
		return nil, err
	}
	for side, v := range []models.Var{models.Subject, models.Object} {
		if rp.cand[side], err = part.Candidates(b, v); err != nil {
			return nil, err
		}
		if rp.prog[side], err = graph.Compile(rp.cand[side]); err != nil {
			return nil, err
		}
	}
	return rp, nil
}

// count returns, for each triple of the batch (at most queries) and side
// (subject, object), the counts over every process's rows of the
// unfiltered candidates other than the true answer that score above and
// equal to it, and the number of true answers whose score (here) is not
// finite.
func (rp *rankPart) count(st *Stepper, batch []kg.Triple, filter *kg.Filter) ([2][]metrics.Counts, int64, error) {
	if err := rp.gather(st, batch); err != nil {
		return [2][]metrics.Counts{}, 0, err
	}
	for i := range rp.queries {
		t := kg.Triple{}
		if i < len(batch) {
			t = batch[i]
		}
		rp.s[i], rp.r[i], rp.o[i] = rp.own+i, int(t.R), rp.own+rp.queries+i
	}
	flat := make([]int64, 4*len(batch))
	var bad int64
	for side := range 2 {
		if err := rp.prog[side].Run(); err != nil {
			return [2][]metrics.Counts{}, 0, err
		}
		width := rp.own + st.spare
		for i, t := range batch {
			var c metrics.Counts
			var finite bool
			switch d := rp.cand[side].Value().Data().(type) {
			case []float32:
				c, finite = rp.countRow(d[i*width:(i+1)*width], i, side, t, st.lo, filter)
			case []float64:
				c, finite = rp.countRow(d[i*width:(i+1)*width], i, side, t, st.lo, filter)
			}
			flat[4*i+2*side], flat[4*i+2*side+1] = c.Greater, c.Equal
			if !finite {
				bad++
			}
		}
	}
	if err := st.comm.SumInt64(flat); err != nil {
		return [2][]metrics.Counts{}, 0, err
	}
	var out [2][]metrics.Counts
	for side := range 2 {
		out[side] = make([]metrics.Counts, len(batch))
		for i := range batch {
			out[side][i] = metrics.Counts{Greater: flat[4*i+2*side], Equal: flat[4*i+2*side+1]}
		}
	}
	return out, bad, nil
}

// countRow counts query i's own candidates (entities lo, lo+1, ...) against
// its true answer, scored in the query's spare row; it says whether that
// score is finite.
func (rp *rankPart) countRow(row any, i, side int, t kg.Triple, lo int, filter *kg.Filter) (metrics.Counts, bool) {
	var filtered []int32
	target, at := int(t.S), rp.own+i
	if side == 1 {
		target, at = int(t.O), rp.own+rp.queries+i
	}
	if filter != nil {
		if side == 0 {
			filtered = filter.Subjects(t.R, t.O)
		} else {
			filtered = filter.Objects(t.S, t.R)
		}
	}
	switch r := row.(type) {
	case []float32:
		return countOwn(r[:rp.own], r[at], lo, target, filtered), isFinite(float64(r[at]))
	case []float64:
		return countOwn(r[:rp.own], r[at], lo, target, filtered), isFinite(r[at])
	}
	panic(fmt.Sprintf("dist: scores of type %T", row))
}

func isFinite(x float64) bool { return x == x && x-x == 0 }

// countOwn counts the candidates own[j] (entity lo+j) above and equal to
// the true score t, leaving out the true answer and the filtered
// entities (sorted); a NaN t counts every other candidate as above it,
// as metrics ranks it last.
func countOwn[T float32 | float64](own []T, t T, lo, target int, filtered []int32) metrics.Counts {
	var c metrics.Counts
	f := 0
	for f < len(filtered) && int(filtered[f]) < lo {
		f++
	}
	nan := t != t
	for j, x := range own {
		e := lo + j
		for f < len(filtered) && int(filtered[f]) < e {
			f++
		}
		if e == target || (f < len(filtered) && int(filtered[f]) == e) {
			continue
		}
		tally(&c, x, t, nan)
	}
	return c
}

// tally counts score x against the true score t in c: above it when
// greater (or when t is NaN), tied when equal; a NaN x counts as neither.
func tally[T float32 | float64](c *metrics.Counts, x, t T, nan bool) {
	switch {
	case nan || x > t:
		c.Greater++
	case x == t:
		c.Equal++
	}
}

// gather copies the rows of the batch's subjects and objects from their
// owners into the spare rows of every entity table (padding with entity
// 0): subjects from spare row 0, objects from spare row queries.
func (rp *rankPart) gather(st *Stepper, batch []kg.Triple) error {
	list := make([]int, 2*rp.queries)
	for i, t := range batch {
		list[i], list[rp.queries+i] = int(t.S), int(t.O)
	}
	return st.gatherSpare(list)
}

// gatherSpare copies the rows of the entities in list from their owners
// into the spare rows of every entity table, list[j] into spare row j, in
// one all-gather per table.
func (st *Stepper) gatherSpare(list []int) error {
	np := st.comm.Size()
	counts := make([]int, np)
	var mine []int // positions in list of the entities this process owns
	for j, e := range list {
		q := st.rows.Owner(e)
		counts[q]++
		if q == st.comm.Rank() {
			mine = append(mine, j)
		}
	}
	own := st.hi - st.lo
	for _, name := range st.m.Layout.EntityTables() {
		var err error
		switch full := st.full[name].Data().(type) {
		case []float32:
			err = gatherSpare(st, full, st.full[name].Shape()[1], own, list, mine, counts, st.comm.AllgathervFloat32)
		case []float64:
			err = gatherSpare(st, full, st.full[name].Shape()[1], own, list, mine, counts, st.comm.AllgathervFloat64)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func gatherSpare[T float32 | float64](st *Stepper, full []T, cols, own int, list, mine, counts []int, allgatherv func(send, recv []T, counts []int, unit int) error) error {
	send := make([]T, 0, len(mine)*cols)
	for _, j := range mine {
		e := list[j] - st.lo
		send = append(send, full[e*cols:(e+1)*cols]...)
	}
	recv := make([]T, len(list)*cols)
	if err := allgatherv(send, recv, counts, cols); err != nil {
		return err
	}
	next := make([]int, len(counts)) // the next row of each process's segment
	for q := 1; q < len(counts); q++ {
		next[q] = next[q-1] + counts[q-1]
	}
	for j, e := range list {
		q := st.rows.Owner(e)
		copy(full[(own+j)*cols:(own+j+1)*cols], recv[next[q]*cols:(next[q]+1)*cols])
		next[q]++
	}
	return nil
}
