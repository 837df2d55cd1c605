package dist

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"gekc/graph"
	"gekc/internal/logmath"
	"gekc/kg"
	"gekc/models"
	"gekc/objectives"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// energyStep is a step of an energy-based model, whose conditionals'
// normalisers are log-sum-exps over every entity's score: a distributed
// log-sum-exp. Every process scores every query of the batch against its
// own rows (the queries' rows gathered into its spare rows), the row
// log-sum-exps are combined across the processes inside the step
// (graph.CombinedRowLogSumExp), and each process's loss holds:
//
//   - the normalisers of every query, weighted 1/n: their gradient at the
//     own candidates is the whole softmax's there, and at the queries'
//     rows this process's share of it (summed at the rows' owners);
//   - the scores, the relation conditionals and the penalties of its part
//     of the batch only, as the step of a GeKC.
//
// The loss it reports is its part's: the processes' sum is the batch's.
type energyStep struct {
	all, part *tensor.Dense // weights: 1/n for every triple; 1/n for the part's
	value     *G.Node       // the part's loss
	list      []int         // the entities of the spare rows: subjects, then objects
}

// energyObjective returns the PLL weights and the N3 and F2 penalties of
// an energy-based model's objective: PLL, regularised or not.
func energyObjective(obj objectives.Objective) (objectives.Weights, [2]float64, error) {
	var pen [2]float64
	if r, ok := obj.(objectives.Regularized); ok {
		obj, pen = r.Objective, [2]float64{r.N3, r.F2}
	}
	pll, ok := obj.(objectives.PLL)
	if !ok {
		return objectives.Weights{}, pen, fmt.Errorf("dist: an energy-based model trains by PLL (its log Z is intractable), not %s", obj.Name())
	}
	w := pll.Weights
	if w.Subject < 0 || w.Relation < 0 || w.Object < 0 || w.Subject+w.Relation+w.Object == 0 {
		return w, pen, fmt.Errorf("dist: PLL weights %+v", w)
	}
	for _, p := range pen {
		if !(p >= 0) || math.IsInf(p, 0) {
			return w, pen, fmt.Errorf("dist: penalty weight %g; want a finite weight ≥ 0", p)
		}
	}
	return w, pen, nil
}

// buildEnergy makes an energy-based model's step: its graph over the own
// rows and the batch's gathered rows, and the program.
func (st *Stepper) buildEnergy(obj objectives.Objective) error {
	w, pen, err := energyObjective(obj)
	if err != nil {
		return err
	}
	m, n := st.m, st.batch
	values := map[string]*tensor.Dense{}
	for _, name := range m.ParamNames() {
		values[name] = st.params[name]
	}
	for _, name := range m.Layout.EntityTables() { // in layout order, as every process
		values[name] = st.full[name]
		st.tables = append(st.tables, st.newEntityTable(name))
	}
	g := G.NewGraph()
	part, err := m.BindPart(g, values)
	if err != nil {
		return err
	}
	st.s, st.r, st.o = make([]int, n), make([]int, n), make([]int, n)
	b, err := part.NewBatch(graph.IndexVector(g, "s", st.s), graph.IndexVector(g, "r", st.r), graph.IndexVector(g, "o", st.o))
	if err != nil {
		return err
	}
	es := &energyStep{all: tensor.New(tensor.Of(m.Dtype), tensor.WithShape(n)), part: tensor.New(tensor.Of(m.Dtype), tensor.WithShape(n))}
	all := G.NewVector(g, m.Dtype, G.WithShape(n), G.WithName("all"), G.WithValue(es.all))
	mine := G.NewVector(g, m.Dtype, G.WithShape(n), G.WithName("part"), G.WithValue(es.part))
	var e graph.Builder
	phi := e.Use(part.LogScore(b))
	var grad, value G.Nodes
	own := st.hi - st.lo
	for _, t := range []struct {
		v models.Var
		w float64
	}{{models.Subject, w.Subject}, {models.Object, w.Object}} {
		if t.w == 0 {
			continue
		}
		cand := e.SliceCols(e.Use(part.Candidates(b, t.v)), 0, own)
		lse := e.CombinedRowLogSumExp(cand, st.combineLSE)
		grad = append(grad, e.Scale(e.Sub(e.Dot(lse, all), e.Dot(phi, mine)), t.w))
		value = append(value, e.Scale(e.Dot(e.Sub(lse, phi), mine), t.w))
	}
	if w.Relation > 0 {
		term := e.Scale(e.Dot(e.Use(part.LogConditional(b, models.Relation)), mine), -w.Relation)
		grad, value = append(grad, term), append(value, term)
	}
	for i, p := range []float64{3, 2} {
		if pen[i] > 0 {
			term := e.Scale(e.Dot(e.Use(part.LpPenalty(b, p)), mine), pen[i])
			grad, value = append(grad, term), append(value, term)
		}
	}
	loss := e.AddAll(grad...)
	es.value = e.AddAll(value...)
	if e.Err() != nil {
		return e.Err()
	}
	grads, err := graph.Backward(loss, part.Params()...)
	if err != nil {
		return err
	}
	st.grads = map[string]*G.Node{}
	for i, name := range m.ParamNames() {
		st.grads[name] = grads[i]
	}
	st.loss, st.energy = es.value, es
	st.outputs = append(G.Nodes{es.value}, grads...)
	st.prog, err = graph.Compile(st.outputs...)
	return err
}

// combineLSE replaces this process's row log-sum-exps by the whole rows'
// (their log-sum-exp over the processes, in rank order).
func (st *Stepper) combineLSE(lse []float64) error {
	np, k := st.comm.Size(), len(lse)
	all := make([]float64, np*k)
	if err := st.comm.AllgathervFloat64(lse, all, slices.Repeat([]int{k}, np), 1); err != nil {
		return err
	}
	col := make([]float64, np)
	for i := range lse {
		for q := range np {
			col[q] = all[q*k+i]
		}
		lse[i] = logmath.LogSumExp(col)
	}
	return nil
}

// stepEnergy is Step for an energy-based model.
func (st *Stepper) stepEnergy(batch []kg.Triple) (float64, error) {
	start, sent, inComm := time.Now(), st.counted.Sent, st.counted.Time
	defer func() {
		st.stats.Steps++
		st.stats.Seconds += time.Since(start).Seconds()
		st.stats.CommSeconds += (st.counted.Time - inComm).Seconds()
		st.stats.SentBytes += st.counted.Sent - sent
	}()
	es, n, own := st.energy, len(batch), st.hi-st.lo
	es.list = make([]int, 2*st.batch)
	for i, t := range batch {
		es.list[i], es.list[st.batch+i] = int(t.S), int(t.O)
	}
	if err := st.gatherSpare(es.list); err != nil {
		return 0, err
	}
	p, np := st.comm.Rank(), st.comm.Size()
	lo, hi := p*n/np, (p+1)*n/np
	allW, partW := make([]float64, st.batch), make([]float64, st.batch)
	for i := range st.s {
		r := 0
		if i < n {
			r = int(batch[i].R)
			allW[i] = 1 / float64(n)
			if i >= lo && i < hi {
				partW[i] = 1 / float64(n)
			}
		}
		st.s[i], st.r[i], st.o[i] = own+i, r, own+st.batch+i
	}
	graph.SetFloat64s(es.all, allW)
	graph.SetFloat64s(es.part, partW)
	loss, err := st.run()
	if err != nil {
		return loss, err
	}
	return loss, st.updateEnergy()
}

// updateEnergy completes an energy step's gradients (the replicated
// tables' summed, the gathered rows' sent to their owners and added to
// their rows') and steps the optimiser.
func (st *Stepper) updateEnergy() error {
	entity := st.m.Layout.EntityTables()
	var params, grads []*tensor.Dense
	own := st.hi - st.lo
	for _, name := range st.m.ParamNames() {
		g := st.grads[name].Value().(*tensor.Dense)
		if !slices.Contains(entity, name) {
			if err := sum(st.comm, g); err != nil {
				return err
			}
		} else {
			if err := st.returnSpare(g, own); err != nil {
				return err
			}
			g = graph.RowView(g, 0, own)
		}
		params, grads = append(params, st.params[name]), append(grads, g)
	}
	return st.stepOptimizer(params, grads)
}

// returnSpare sends the gradients of the spare rows of g (an entity
// table's whole gradient: own rows, then spare) to the owners of their
// entities (the energy step's list), which add them to their own rows'.
func (st *Stepper) returnSpare(g *tensor.Dense, own int) error {
	cols, list, me, np := g.Shape()[1], st.energy.list, st.comm.Rank(), st.comm.Size()
	// Every process holds a gradient for every spare row: each sends the
	// rows of the list to their owners and receives from every process
	// those it owns.
	send, recv := make([]int, np), make([]int, np)
	mine := 0
	for _, e := range list {
		q := st.rows.Owner(e)
		send[q] += cols
		if q == me {
			mine++
		}
	}
	for q := range recv {
		recv[q] = mine * cols
	}
	switch x := g.Data().(type) {
	case []float32:
		return returnSpareOf(st, x, cols, own, list, send, recv, st.comm.AlltoallvFloat32)
	case []float64:
		return returnSpareOf(st, x, cols, own, list, send, recv, st.comm.AlltoallvFloat64)
	}
	return errors.New("dist: gradient dtype")
}

func returnSpareOf[T float32 | float64](st *Stepper, g []T, cols, own int, list, send, recv []int,
	alltoallv func([]T, []int, []T, []int) error) error {
	np := st.comm.Size()
	out := make([]T, 0, len(list)*cols)
	for q := range np { // by owner, in list order
		for j, e := range list {
			if st.rows.Owner(e) == q {
				out = append(out, g[(own+j)*cols:(own+j+1)*cols]...)
			}
		}
	}
	total := 0
	for _, c := range recv {
		total += c
	}
	in := make([]T, total)
	if err := alltoallv(out, send, in, recv); err != nil {
		return err
	}
	at := 0
	for range np {
		for _, e := range list {
			if st.rows.Owner(e) != st.comm.Rank() {
				continue
			}
			row := g[(e-st.lo)*cols : (e-st.lo+1)*cols]
			for c := range row {
				row[c] += in[at+c]
			}
			at += cols
		}
	}
	return nil
}
