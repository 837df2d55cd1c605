package dist

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"gekc/graph"
	"gekc/kg"
	"gekc/models"
	"gekc/objectives"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Stepper is one process's part of an optimisation step of an
// entity-sharded model: the same step as train.Stepper's on the whole
// model, up to the order of floating-point sums. Every process holds rows
// [Lo, Hi) of each entity table with their gradient and optimiser slots,
// and the whole of every other table (relations, TuckER's core), whose
// gradient is summed over the processes so that the copies stay equal.
//
// A step of a global batch gives each process a contiguous part of it.
// Each process gathers the entity rows its part reads from their owners,
// while the owners' whole-table statistics (Gram matrices, or column
// log-sums) are summed over the processes; each then runs the model's
// loss and gradient graph on its part (models.Part), sends the gradients
// of the gathered rows back to their owners, and sums the gradient of the
// statistics, which each owner passes on to its own rows.
type Stepper struct {
	comm    Comm
	counted *Counted // comm, counting
	stats   StepStats
	m       *models.Model
	rows    Rows
	lo, hi  int
	batch   int // global batch size
	local   int // the compiled size of a process's part
	params  map[string]*tensor.Dense
	full    map[string]*tensor.Dense // of each entity table: the own rows, then spare rows
	spare   int                      // for the evaluator's and an energy step's gathered rows
	energy  *energyStep              // an energy-based model's step; nil for a GeKC
	opt     graph.Optimizer

	tables   []*entityTable // in layout order
	s, r, o  []int
	w, share *tensor.Dense
	loss     *G.Node
	grads    map[string]*G.Node // of every table, in the step's graph
	outputs  G.Nodes            // the step program's
	prog     *graph.Program
}

// entityTable is one entity table's part of a step.
type entityTable struct {
	name       string
	cols       int
	slots      []models.Var  // the slots that read it
	rows       *tensor.Dense // the rows this process's part reads
	stat       *tensor.Dense // the whole table's statistic
	statGrad   *G.Node       // the step's gradient of it
	grad       *tensor.Dense // the gradient of the own rows (a program's buffer)
	shardStat  *shardStat
	need       [][]int // per process, the sorted rows its part reads
	send, recv []int   // counts of the row exchange, in values
}

// NewStepper builds process comm.Rank()'s part of a step of the model
// registered under name (sizes sz, initialised as models.New would with
// opt) under a Divisible objective, for global batches of size batch.
// A squared model's processes never hold a whole entity table; others
// draw one at a time in float64 and keep their rows (models.NewPart).
func NewStepper(comm Comm, name string, sz models.Sizes, opt models.Options, obj objectives.Objective, batch int, o graph.Optimizer) (*Stepper, error) {
	rows, err := NewRows(sz.Entities, comm.Size())
	if err != nil {
		return nil, err
	}
	p := comm.Rank()
	m, params, err := models.NewPart(name, sz, opt, rows.Lo(p), rows.Hi(p))
	if err != nil {
		return nil, err
	}
	return newStepper(comm, rows, m, params, obj, batch, o)
}

func newStepper(comm Comm, rows Rows, m *models.Model, params map[string]*tensor.Dense, obj objectives.Objective, batch int, o graph.Optimizer) (*Stepper, error) {
	if batch <= 0 || o == nil {
		return nil, fmt.Errorf("dist: batch %d, optimiser %v", batch, o)
	}
	p := comm.Rank()
	counted := &Counted{Comm: comm}
	st := &Stepper{comm: counted, counted: counted, rows: rows, lo: rows.Lo(p), hi: rows.Hi(p), batch: batch,
		local: (batch + comm.Size() - 1) / comm.Size(), opt: o, m: m, params: params, full: map[string]*tensor.Dense{},
		spare: spareRows}
	if m.Semantics == models.Energy {
		st.spare = max(spareRows, 2*batch) // every query's rows, for the candidates' log-sum-exps
	}
	for _, name := range m.Layout.EntityTables() {
		own := params[name]
		rows, cols := own.Shape()[0], own.Shape()[1]
		full := tensor.New(tensor.Of(own.Dtype()), tensor.WithShape(rows+st.spare, cols))
		params[name] = graph.RowView(full, 0, rows)
		graph.CopyValues(params[name], own)
		st.full[name] = full
	}
	if m.Semantics == models.Energy {
		return st, st.buildEnergy(obj)
	}
	div, ok := obj.(objectives.Divisible)
	if !ok {
		return nil, fmt.Errorf("dist: the objective %s does not split over parts of a batch", obj.Name())
	}
	if err := st.build(div); err != nil {
		return nil, err
	}
	return st, nil
}

// build makes the step's graph and program and each entity table's
// statistic programs.
func (st *Stepper) build(obj objectives.Divisible) error {
	m := st.m
	values := map[string]*tensor.Dense{}
	for _, name := range m.ParamNames() {
		values[name] = st.params[name]
	}
	for _, name := range m.Layout.EntityTables() {
		t := st.newEntityTable(name)
		t.rows = tensor.New(tensor.Of(m.Dtype), tensor.WithShape(len(t.slots)*(st.local+1), t.cols))
		values[name] = t.rows
		var err error
		if t.shardStat, err = newShardStat(m, st.params[name]); err != nil {
			return err
		}
		st.tables = append(st.tables, t)
	}
	g := G.NewGraph()
	part, err := m.BindPart(g, values)
	if err != nil {
		return err
	}
	st.s, st.r, st.o = make([]int, st.local), make([]int, st.local), make([]int, st.local)
	b, err := part.NewBatch(graph.IndexVector(g, "s", st.s), graph.IndexVector(g, "r", st.r), graph.IndexVector(g, "o", st.o))
	if err != nil {
		return err
	}
	st.w = tensor.New(tensor.Of(m.Dtype), tensor.WithShape(st.local))
	st.share = scalarTensor(m.Dtype)
	wn := G.NewVector(g, m.Dtype, G.WithShape(st.local), G.WithName("weights"), G.WithValue(st.w))
	sn := G.NewScalar(g, m.Dtype, G.WithName("share"), G.WithValue(st.share))
	if st.loss, err = obj.PartLoss(part.Circuit, b, wn, sn); err != nil {
		return err
	}
	wrt := part.Params()
	for _, t := range st.tables {
		wrt = append(wrt, part.Stats[t.name])
		t.stat = part.Stats[t.name].Value().(*tensor.Dense)
	}
	grads, err := graph.Backward(st.loss, wrt...)
	if err != nil {
		return err
	}
	st.grads = map[string]*G.Node{}
	for i, name := range m.ParamNames() {
		st.grads[name] = grads[i]
	}
	for i, t := range st.tables {
		t.statGrad = grads[len(m.ParamNames())+i]
	}
	st.outputs = append(G.Nodes{st.loss}, grads...)
	st.prog, err = graph.Compile(st.outputs...)
	return err
}

// BufferBytes returns the bytes of the step's buffers once it has run,
// beside the parameters and their gradient and optimiser state: the
// part's graph, the gathered rows, and the statistics' programs (less
// the own rows' gradient, which is the parameters' gradient).
func (st *Stepper) BufferBytes() int64 {
	total := graph.Bytes(st.outputs...)
	for _, t := range st.tables {
		if s := t.shardStat; s != nil { // nil for an energy-based model
			total += int64(t.rows.DataSize()) * int64(t.rows.Dtype().Size())
			total += graph.Bytes(s.stat) + graph.Bytes(s.grad) - graph.ValueBytes(s.grad)
		}
	}
	return total
}

// newEntityTable describes entity table name of the step: its columns
// and the slots (subject, object) that read it.
func (st *Stepper) newEntityTable(name string) *entityTable {
	t := &entityTable{name: name, cols: st.params[name].Shape()[1]}
	for _, v := range models.Vars {
		if v != models.Relation && st.m.Layout.TableOf(v) == name {
			t.slots = append(t.slots, v)
		}
	}
	return t
}

// stepOptimizer steps the optimiser on this process's parameters and
// their complete gradients; it returns ErrDiverged on every process when
// a gradient was not finite on any.
func (st *Stepper) stepOptimizer(params, grads []*tensor.Dense) error {
	bad, err := st.opt.Step(params, grads)
	if err != nil {
		return err
	}
	n := []int64{int64(bad)}
	if err := st.comm.SumInt64(n); err != nil {
		return err
	}
	if n[0] > 0 {
		return ErrDiverged
	}
	return nil
}

// scalarTensor returns a scalar of dtype dt that setScalar writes.
func scalarTensor(dt tensor.Dtype) *tensor.Dense {
	if dt == tensor.Float64 {
		return tensor.New(tensor.WithShape(), tensor.WithBacking([]float64{0}))
	}
	return tensor.New(tensor.WithShape(), tensor.WithBacking([]float32{0}))
}

func setScalar(t *tensor.Dense, v float64) {
	if t.Dtype() == tensor.Float64 {
		t.Set(0, v)
		return
	}
	t.Set(0, float32(v))
}

// Model returns the model's description (sizes, layout, semantics); its
// parameters are the processes' parts (Param).
func (st *Stepper) Model() *models.Model { return st.m }

// Rows returns the split of the entity rows over the processes.
func (st *Stepper) Rows() Rows { return st.rows }

// Param returns this process's part of a table: rows [Lo, Hi) of an
// entity table, the whole of any other.
func (st *Stepper) Param(name string) *tensor.Dense { return st.params[name] }

// Optimizer returns the optimiser of this process's parameters.
func (st *Stepper) Optimizer() graph.Optimizer { return st.opt }

// Step trains on a global batch of up to the batch size's triples, the
// same on every process, and returns the batch's mean loss (the same on
// every process). It returns ErrDiverged on every process when the loss
// or a gradient is not finite on any.
func (st *Stepper) Step(batch []kg.Triple) (float64, error) {
	if len(batch) == 0 || len(batch) > st.batch {
		return 0, fmt.Errorf("dist: step on %d triples with batch size %d", len(batch), st.batch)
	}
	if st.energy != nil {
		return st.stepEnergy(batch)
	}
	start, sent, inComm := time.Now(), st.counted.Sent, st.counted.Time
	defer func() {
		st.stats.Steps++
		st.stats.Seconds += time.Since(start).Seconds()
		st.stats.CommSeconds += (st.counted.Time - inComm).Seconds()
		st.stats.SentBytes += st.counted.Sent - sent
	}()
	p, np := st.comm.Rank(), st.comm.Size()
	parts := make([][]kg.Triple, np)
	for q := range parts {
		parts[q] = batch[q*len(batch)/np : (q+1)*len(batch)/np]
	}
	for _, t := range st.tables {
		if err := st.gatherRows(t, parts, batch[0]); err != nil {
			return 0, err
		}
		if err := st.sumStat(t); err != nil {
			return 0, err
		}
	}
	st.load(parts[p], batch[0], len(batch))
	loss, err := st.run()
	if err != nil {
		return loss, err
	}
	return loss, st.update()
}

// run runs the step's program and sums the processes' losses; it returns
// an error on every process when the program failed on any, and
// ErrDiverged when the loss is not finite.
func (st *Stepper) run() (float64, error) {
	runErr := st.prog.Run()
	loss, failures, err := st.sumLoss(runErr != nil)
	switch {
	case err != nil:
		return 0, err
	case runErr != nil:
		return 0, runErr
	case failures > 0:
		return 0, fmt.Errorf("dist: the step failed on %d other processes", failures)
	case math.IsNaN(loss) || math.IsInf(loss, 0):
		return loss, ErrDiverged
	}
	return loss, nil
}

// StepStats is what this process's steps took and sent.
type StepStats struct {
	Steps                int
	Seconds, CommSeconds float64 // in steps, and of that in collectives (waiting included)
	SentBytes            int64   // handed to collectives to send
}

// Stats returns what this process's steps took and sent so far.
func (st *Stepper) Stats() StepStats { return st.stats }

// ErrDiverged reports a non-finite loss or gradient on any process.
var ErrDiverged = errors.New("training diverged: non-finite loss or gradient")

// load writes this process's part of the batch into the step's index
// vectors, as indices into the gathered rows, with the weights 1/n of
// the batch's n triples (0 for padding) and the part's share of them.
func (st *Stepper) load(part []kg.Triple, pad kg.Triple, n int) {
	index := func(v models.Var, e int32) int {
		for _, t := range st.tables {
			if slices.Contains(t.slots, v) {
				i, _ := slices.BinarySearch(t.need[st.comm.Rank()], int(e))
				return i
			}
		}
		panic("dist: no entity table for " + v.String())
	}
	for i := range st.s {
		t := pad
		if i < len(part) {
			t = part[i]
		}
		st.s[i], st.r[i], st.o[i] = index(models.Subject, t.S), int(t.R), index(models.Object, t.O)
	}
	w, share := 1/float64(n), float64(len(part))/float64(n)
	switch x := st.w.Data().(type) {
	case []float32:
		for i := range x {
			x[i] = float32(bool2f(i < len(part)) * w)
		}
		setScalar(st.share, share)
	case []float64:
		for i := range x {
			x[i] = bool2f(i < len(part)) * w
		}
		setScalar(st.share, share)
	}
}

func bool2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// sumLoss sums the processes' part losses and counts the processes whose
// step failed, so that every process takes the same branch afterwards.
func (st *Stepper) sumLoss(failed bool) (float64, int, error) {
	x := []float64{0, bool2f(failed)}
	if !failed {
		x[0] = graph.Scalar(st.loss.Value())
	}
	if err := st.comm.SumFloat64(x); err != nil {
		return 0, 0, err
	}
	return x[0], int(x[1]) - int(bool2f(failed)), nil
}
