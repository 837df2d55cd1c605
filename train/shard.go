package train

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"slices"

	"gekc/dist"
	"gekc/graph"
	"gekc/kg"
	"gekc/models"

	"gorgonia.org/tensor"
)

// stepper is one optimisation step of a run: one process's (Stepper) or
// one process's part of a sharded step (shardedStepper).
type stepper interface {
	Step(batch []kg.Triple) (float64, error)
	Optimizer() graph.Optimizer
}

// shardedStepper is a dist.Stepper reporting divergence as Stepper does,
// whose optimiser's state reads and loads as one over the whole model m.
type shardedStepper struct {
	*dist.Stepper
	whole *dist.WholeOptimizer
}

func (s shardedStepper) Step(batch []kg.Triple) (float64, error) {
	loss, err := s.Stepper.Step(batch)
	if errors.Is(err, dist.ErrDiverged) {
		err = ErrDiverged
	}
	return loss, err
}

func (s shardedStepper) Optimizer() graph.Optimizer { return s.whole }

// newSteps builds a run's step, one process's or this process's part of a
// sharded one (Config.Shard), with the memory account of its parts.
func newSteps(cfg Config, m *models.Model, dom *models.Domain, opt graph.Optimizer) (stepper, *dist.Stepper, Memory, error) {
	if cfg.Shard == nil {
		st, err := NewConstrainedStepper(m, dom, cfg.Objective, cfg.BatchSize, opt)
		if err != nil {
			return nil, nil, Memory{}, err
		}
		return st, nil, st.memory(len(opt.Slots()), keepsBestLL(cfg, m)), nil
	}
	shard, err := newShard(cfg, m, dom, opt)
	if err != nil {
		return nil, nil, Memory{}, err
	}
	// The one-process step's graph, built but not compiled, measures the
	// parts this process holds a share of.
	sg, err := buildStep(m, dom, cfg.Objective, cfg.BatchSize)
	if err != nil {
		return nil, nil, Memory{}, err
	}
	share, err := entityShare(cfg, m.Sizes.Entities, m.Sizes.Relations)
	if err != nil {
		return nil, nil, Memory{}, err
	}
	mem := shardMemory(sg.memory(len(opt.Slots()), keepsBestLL(cfg, m)), share, cfg.Shard.Size())
	return shardedStepper{shard, shard.WholeOptimizer(m)}, shard, mem, nil
}

// newShard builds this process's part of a sharded run's step (see
// Config.Shard).
func newShard(cfg Config, m *models.Model, dom *models.Domain, opt graph.Optimizer) (*dist.Stepper, error) {
	if dom != nil {
		return nil, fmt.Errorf("train: %s: sharded runs do not take domain constraints yet", cfg.Model)
	}
	st, err := dist.NewStepperFrom(cfg.Shard, m, cfg.Objective, cfg.BatchSize, opt)
	if err != nil {
		return nil, fmt.Errorf("train: sharding %s over %d processes: %w", cfg.Model, cfg.Shard.Size(), err)
	}
	return st, nil
}

// boundary decides, at a step boundary, whether the run stops (the
// context's error, or context.Canceled) and whether it saves its state
// (due, here): the processes of a sharded run take every step together,
// so when any of them is told to stop, or finds a save due, all do.
func (r *run) boundary(due bool) (stop error, save bool, err error) {
	stop = r.ctx.Err()
	if r.shard == nil {
		return stop, due, nil
	}
	agreed, err := r.shard.Agree(stop != nil, due)
	if err != nil {
		return nil, false, err
	}
	if agreed[0] && stop == nil {
		stop = context.Canceled
	}
	return stop, agreed[1], nil
}

// saves says whether the run builds resume states: when it has a SaveState,
// and on every process of a sharded run of which one has (the optimiser's
// state is gathered from all), each handing them to its SaveState if it
// has one.
func (r *run) saves() bool { return r.cfg.SaveState != nil || r.groupSaves }

func (r *run) save(s *State) error {
	if r.cfg.SaveState == nil {
		if s.Part != nil {
			return s.GatherAll() // the writing process gathers the rows
		}
		return nil
	}
	return r.cfg.SaveState(s)
}

// partState is this process's part of a sharded run's state after epoch:
// its rows of the entity tables in every group (the current ones the
// stepper's, its optimiser's slots), the whole of the others. Writing it
// gathers the rows (StatePart), so no process holds the whole state.
func (r *run) partState(epoch int, bestLL snapshot) *State {
	entity := r.m.Layout.EntityTables()
	lo, hi := r.shard.Rows().Lo(r.cfg.Shard.Rank()), r.shard.Rows().Hi(r.cfg.Shard.Rank())
	cut := func(s snapshot) snapshot {
		if s == nil {
			return nil
		}
		out := snapshot{}
		for n, t := range s {
			out[n] = t
			if slices.Contains(entity, n) {
				out[n] = rowView(t, lo, hi)
			}
		}
		return out
	}
	s := stateOf(r.part, cut(r.best), cut(bestLL), r.shard.Optimizer(), r.res, epoch, r.steps, r.stepTime.Seconds(), r.stop, r.resumeNotes)
	s.Part = &StatePart{Tables: entity, Lo: lo, Hi: hi, N: r.m.Sizes.Entities, Gather: r.shard.GatherRows}
	return s
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

// shardMemory turns a one-process memory account into one process's of a
// run whose entity tables are split over p: each process still holds the
// whole model's parameters (it evaluates them) and the best ones, plus
// its own rows of the entity tables, and only those rows' gradient and
// optimiser state. entity is the entity tables' share of the parameters.
func shardMemory(mem Memory, entity float64, p int) Memory {
	if p <= 1 {
		return mem
	}
	own := func(b int64) int64 { return b - int64(entity*float64(b)*float64(p-1)/float64(p)) }
	mem.Parameters += int64(entity * float64(mem.Parameters) / float64(p))
	mem.Gradients, mem.Optimizer = own(mem.Gradients), own(mem.Optimizer)
	return mem
}

// entityShare is the entity tables' share of model's parameters at these
// sizes, from its layout: nothing is allocated.
func entityShare(cfg Config, entities, relations int) (float64, error) {
	sf, _, err := models.Lookup(cfg.Model)
	if err != nil {
		return 0, err
	}
	l := sf.Layout(models.Sizes{Entities: entities, Relations: relations, Rank: cfg.Rank, RelationRank: cfg.RelationRank})
	var all, ent float64
	for _, t := range l.Tables {
		n := float64(t.Rows) * float64(t.Cols)
		all += n
		if slices.Contains(l.EntityTables(), t.Name) {
			ent += n
		}
	}
	return ent / all, nil
}

// validationMetrics evaluates the model on the validation subset. Every
// process of a sharded run gets process 0's metrics, so that early
// stopping, the best epoch and a NaN's verdict are one decision, however
// the processes' own evaluations differ (another CPU, another BLAS).
func (r *run) validationMetrics() (map[string]float64, error) {
	vm, err := validationMetrics(r.evs, r.valid, r.filter, r.ds.Schema, r.cfg.Eval)
	if err != nil {
		return nil, err
	}
	return r.shared(vm)
}

// shared returns process 0's vm on every process of a sharded run, and vm
// itself on one process.
func (r *run) shared(vm map[string]float64) (map[string]float64, error) {
	if r.shard == nil {
		return vm, nil
	}
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(vm); err != nil { // gob keeps NaN and ±Inf
		return nil, err
	}
	msg, err := r.cfg.Shard.Broadcast(b.Bytes())
	if err != nil {
		return nil, err
	}
	var out map[string]float64
	if err := gob.NewDecoder(bytes.NewReader(msg)).Decode(&out); err != nil {
		return nil, fmt.Errorf("train: process 0's validation metrics: %w", err)
	}
	return out, nil
}
