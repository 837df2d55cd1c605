package train

import (
	"fmt"
	"slices"
	"strings"

	"gekc/graph"
	"gekc/kg"
	"gekc/metrics"
	"gekc/models"

	G "gorgonia.org/gorgonia"
)

// DefaultEvalBuffers caps the evaluator's buffers that grow with its batch
// when a run sets no cap (metrics.DefaultBatchBuffers).
const DefaultEvalBuffers = metrics.DefaultBatchBuffers

// Memory is what a run holds in memory, part by part, in bytes.
type Memory struct {
	Parameters int64 `json:"parameters"`
	Gradients  int64 `json:"gradients"`
	Optimizer  int64 `json:"optimizer"` // the optimiser's state: Adam's two moments, Adagrad's sums
	Best       int64 `json:"best"`      // the copy of the best validated parameters (two with Config.KeepBestLL)
	Step       int64 `json:"step"`      // the training step's other buffers
	Data       int64 `json:"data"`      // triples, vocabularies, the run's shuffled copy and the filter index
	Eval       int64 `json:"eval"`      // the evaluator's buffers
	EvalBatch  int   `json:"eval_batch"`
}

// Total returns the sum of the parts.
func (m Memory) Total() int64 {
	return m.Parameters + m.Gradients + m.Optimizer + m.Best + m.Step + m.Data + m.Eval
}

// String reads like "2.4 GiB: parameters 324 MiB, gradients 324 MiB, ...".
func (m Memory) String() string {
	parts := []string{}
	for _, p := range []struct {
		name string
		b    int64
	}{{"parameters", m.Parameters}, {"gradients", m.Gradients}, {"optimiser", m.Optimizer}, {"best parameters", m.Best},
		{"step buffers", m.Step}, {"data and filter", m.Data}, {"evaluation", m.Eval}} {
		parts = append(parts, p.name+" "+FormatBytes(p.b))
	}
	return fmt.Sprintf("%s: %s (evaluation batch %d)", FormatBytes(m.Total()), strings.Join(parts, ", "), m.EvalBatch)
}

// FormatBytes prints a size in binary units, e.g. "1.5 GiB".
func FormatBytes(b int64) string {
	const unit = 1024
	if b < unit {
		return fmt.Sprintf("%d B", b)
	}
	div, exp := int64(unit), 0
	for n := b / unit; n >= unit && exp < 4; n /= unit {
		div *= unit
		exp++
	}
	v := float64(b) / float64(div)
	if v >= 999.5 { // %.3g would write 1e+03
		return fmt.Sprintf("%.0f %ciB", v, "KMGTP"[exp])
	}
	return fmt.Sprintf("%.3g %ciB", v, "KMGTP"[exp])
}

// DataSizes are the sizes of a data set that a run's memory depends on.
type DataSizes struct {
	Entities, Relations int
	Train, Valid, Test  int
	Bytes               int64 // what the loaded data set holds (kg.Dataset.Bytes); 0: estimated
	// TestOn holds the sizes of the data set the run is tested on instead
	// of its own (EvalConfig.TestOn); nil: EstimateMemory takes them from
	// the Config, when it names one.
	TestOn *DataSizes
	// Shared says this data set is the run's own, loaded once (a TestOn
	// naming the training data set): its bytes are not counted twice.
	Shared bool
}

// RunSizes returns the sizes a run's memory depends on: those of its data
// set ds and, when it is tested on another (EvalConfig.TestOn; nil: none),
// that one's.
func RunSizes(ds, testOn *kg.Dataset) DataSizes {
	sz := SizesOf(ds)
	if testOn != nil {
		o := SizesOf(testOn)
		o.Shared = testOn == ds
		sz.TestOn = &o
	}
	return sz
}

// SizesOf returns the sizes of a loaded data set.
func SizesOf(ds *kg.Dataset) DataSizes {
	return DataSizes{Entities: ds.Entities.Len(), Relations: ds.Relations.Len(),
		Train: len(ds.Train), Valid: len(ds.Valid), Test: len(ds.Test), Bytes: ds.Bytes()}
}

// dataBytes is the data part of a run's memory: the data set, the run's
// own copy of the training triples (it shuffles them) and the filter
// (filter bytes, or < 0 to estimate them before the filter is built).
func dataBytes(sz DataSizes, filter int64) int64 {
	b := loadedBytes(sz)
	if filter < 0 {
		filter = kg.FilterBytes(sz.Train+sz.Valid+sz.Test, sz.Entities, sz.Relations)
	}
	return b + 12*int64(sz.Train) + filter
}

// loadedBytes is what the data set of these sizes holds loaded: Bytes, or
// before it is loaded 12 bytes a triple and, for a name, its bytes (a few
// dozen at most in the benchmarks) and 4-8 of kg.Vocab's arrays.
func loadedBytes(sz DataSizes) int64 {
	if sz.Bytes > 0 {
		return sz.Bytes
	}
	return 12*int64(sz.Train+sz.Valid+sz.Test) + 40*int64(sz.Entities+sz.Relations)
}

// shardStepBytes estimates the step buffers of one of cfg.Processes
// processes of a sharded run on e entities and r relations: the step's
// graph over the rows a process's step binds as its entity tables (the
// gathered rows of its part of the batch; for an energy-based model its
// own rows and the whole batch's), and those rows. Shapes only: nothing
// is allocated.
func shardStepBytes(cfg Config, e, r int) (int64, error) {
	p := cfg.Processes
	sf, sem, err := models.Lookup(cfg.Model)
	if err != nil {
		return 0, err
	}
	batch := partBatch(cfg.BatchSize, p)
	slots := 1 // subject and object read one table, or two tables one slot each
	l := sf.Layout(modelSizes(cfg, e, r))
	entity := l.EntityTables()
	if len(entity) == 1 {
		slots = 2
	}
	rows := slots * (batch + 1)
	if sem == models.Energy {
		batch = cfg.BatchSize
		rows = partBatch(e, p) + max(2*batch, 256) // own rows, then the spare rows (dist)
	}
	m, err := models.Describe(cfg.Model, modelSizes(cfg, rows, r), modelOptions(cfg))
	if err != nil {
		return 0, err
	}
	sg, err := buildStep(m, nil, cfg.Objective, batch)
	if err != nil {
		return 0, err
	}
	mem := sg.memory(0, false)
	var bound int64
	for _, t := range l.Tables {
		if slices.Contains(entity, t.Name) {
			bound += int64(rows) * int64(t.Cols) * int64(m.Dtype.Size())
		}
	}
	return mem.Step + mem.Gradients + bound, nil
}

// partBatch is the size of one process's part of a batch of b triples
// split over p processes (b itself for p ≤ 1).
func partBatch(b, p int) int { return (b + max(p, 1) - 1) / max(p, 1) }

// evalLimit bounds the evaluator's buffers: the ones that grow with the
// batch by the configured cap, and under a budget all of them by what the
// rest of the run leaves.
func evalLimit(cfg Config, rest int64) metrics.BufferLimit {
	l := metrics.BufferLimit{Batch: cfg.Eval.Buffers}
	if l.Batch <= 0 {
		l.Batch = DefaultEvalBuffers
	}
	if cfg.MemoryBudget > 0 {
		l.Total = max(cfg.MemoryBudget-rest, 1)
	}
	return l
}

// EstimateMemory returns what a run of cfg on a data set of these sizes
// will hold, part by part, without building its model: the parts are
// measured on models of the same rank, batch sizes and relations but a
// few entities (their graphs only: no buffer is allocated) and
// extrapolated, every part being linear in the number of entities. The
// evaluation batch is the one Run will choose, or under a MemoryBudget at
// most it: the data part is an upper bound until the data are filtered
// (and, for EvalConfig.TestOn, mapped). A constrained run is
// estimated without its constraint, whose per-type blocks are small beside
// the tables. Under a MemoryBudget that cannot hold the run with an
// evaluation batch of one query, it returns the estimate and an error that
// gives both.
func EstimateMemory(cfg Config, sz DataSizes) (Memory, error) {
	if err := cfg.validate(); err != nil {
		return Memory{}, err
	}
	if sz.Entities <= 0 || sz.Relations <= 0 {
		return Memory{}, fmt.Errorf("train: memory estimate for %d entities and %d relations", sz.Entities, sz.Relations)
	}
	// probe measures a model of e entities and r relations: its fixed
	// parts and the evaluator's bytes per query and for no query.
	type probe struct {
		fixed                 Memory
		evalOne, evalPerQuery int64
	}
	measure := func(e, r int) (p probe, err error) {
		m, err := models.Describe(cfg.Model, modelSizes(cfg, e, r), modelOptions(cfg)) // allocates no table
		if err != nil {
			return p, err
		}
		if p.fixed, err = stepMemory(m, cfg); err != nil {
			return p, err
		}
		if cfg.Processes > 1 {
			if p.fixed.Step, err = shardStepBytes(cfg, e, r); err != nil {
				return p, err
			}
		}
		one, err := metrics.NewEvaluatorWithin(m, nil, 1, metrics.BufferLimit{})
		if err != nil {
			return p, err
		}
		two, err := metrics.NewEvaluatorWithin(m, nil, 2, metrics.BufferLimit{})
		if err != nil {
			return p, err
		}
		p.evalPerQuery = two.BufferBytes() - one.BufferBytes()
		p.evalOne = one.BufferBytes()
		return p, nil
	}
	// Probes keep the true number of relations: a squared model sums
	// relations by the cheaper of two forms, which one depending on it.
	const e0 = 16
	base, err := measure(e0, sz.Relations)
	if err != nil {
		return Memory{}, err
	}
	moreE, err := measure(2*e0, sz.Relations)
	if err != nil {
		return Memory{}, err
	}
	at := func(f func(probe) int64) int64 {
		b := f(base)
		return b + int64(sz.Entities-e0)*(f(moreE)-b)/e0
	}
	est := Memory{
		Parameters: at(func(p probe) int64 { return p.fixed.Parameters }),
		Gradients:  at(func(p probe) int64 { return p.fixed.Gradients }),
		Optimizer:  at(func(p probe) int64 { return p.fixed.Optimizer }),
		Best:       at(func(p probe) int64 { return p.fixed.Best }),
		Step:       at(func(p probe) int64 { return p.fixed.Step }),
		Data:       dataBytes(sz, -1),
	}
	if cfg.Processes > 1 {
		share, err := entityShare(cfg, sz.Entities, sz.Relations)
		if err != nil {
			return Memory{}, err
		}
		est = shardMemory(est, share, cfg.Processes)
	}
	if sz.TestOn == nil && cfg.Eval.TestOn != nil {
		o := SizesOf(cfg.Eval.TestOn)
		sz.TestOn = &o
	}
	if o := sz.TestOn; o != nil {
		// That data set as loaded, its triples in the run's ids and their
		// filter: all of them, the ones naming what the run lacks being
		// dropped only when mapped.
		n := o.Train + o.Valid + o.Test
		est.Data += 12*int64(n) + kg.FilterBytes(n, sz.Entities, sz.Relations)
		if !o.Shared {
			est.Data += loadedBytes(*o)
		}
	}
	// A sharded run's processes rank against their own rows.
	perQuery := max(at(func(p probe) int64 { return p.evalPerQuery })/int64(max(cfg.Processes, 1)), 1)
	fixed := at(func(p probe) int64 { return p.evalOne }) - perQuery
	est.EvalBatch = evalLimit(cfg, est.Total()).Rows(fixed, perQuery, cfg.Eval.BatchSize)
	est.Eval = fixed + int64(est.EvalBatch)*perQuery
	if cfg.MemoryBudget > 0 && est.Total() > cfg.MemoryBudget {
		return est, fmt.Errorf("train: the run needs about %s but the memory budget is %s", est, FormatBytes(cfg.MemoryBudget))
	}
	return est, nil
}

// stepMemory measures the parameters, gradients, optimiser state and step
// buffers of training m under cfg, from the step's graph (not compiled):
// in a sharded run, the graph of one process's part of the batch.
func stepMemory(m *models.Model, cfg Config) (Memory, error) {
	st, err := buildStep(m, nil, cfg.Objective, partBatch(cfg.BatchSize, cfg.Processes))
	if err != nil {
		return Memory{}, err
	}
	return st.memory(cfg.Optimizer.Slots(), keepsBestLL(cfg, m)), nil
}

// memory returns the step's part of a run's memory under an optimiser
// keeping slots parameter-sized tensors per parameter, with one copy of
// the parameters for the best epoch and another when the run keeps those
// of its best validation log-likelihood (bestLL).
func (g *stepGraph) memory(slots int, bestLL bool) Memory {
	var mem Memory
	for _, t := range g.m.Layout.Tables {
		rows := t.Rows
		if p := g.m.Param(t.Name); p != nil {
			rows = p.Shape()[0] // a process's part of an entity table
		}
		mem.Parameters += int64(rows) * int64(t.Cols) * int64(g.m.Dtype.Size())
	}
	for _, gr := range g.grads {
		mem.Gradients += graph.ValueBytes(gr)
	}
	mem.Optimizer = int64(slots) * mem.Parameters
	mem.Best = mem.Parameters // the snapshot of the best epoch
	if bestLL {
		mem.Best *= 2
	}
	mem.Step = graph.Bytes(append([]*G.Node{g.loss}, g.grads...)...) - mem.Gradients
	return mem
}
