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
)

// stepper is one optimisation step of a run: one process's (Stepper) or
// one process's part of a sharded step (shardedStepper).
type stepper interface {
	Step(batch []kg.Triple) (float64, error)
	Optimizer() graph.Optimizer
}

// shardedStepper is a dist.Stepper reporting divergence as Stepper does.
type shardedStepper struct{ *dist.Stepper }

func (s shardedStepper) Step(batch []kg.Triple) (float64, error) {
	loss, err := s.Stepper.Step(batch)
	if errors.Is(err, dist.ErrDiverged) {
		err = ErrDiverged
	}
	return loss, err
}

// newSteps builds a run's one-process step with the memory account of
// its parts.
func newSteps(cfg Config, m *models.Model, dom *models.Domain, opt graph.Optimizer) (stepper, Memory, error) {
	st, err := NewConstrainedStepper(m, dom, cfg.Objective, cfg.BatchSize, opt)
	if err != nil {
		return nil, Memory{}, err
	}
	return st, st.memory(len(opt.Slots()), keepsBestLL(cfg, m)), nil
}

// Shardable says why a run of cfg cannot be sharded (nil when it can):
// what a sharded run's processes do not compute from their parts yet.
func Shardable(cfg Config) error {
	e := cfg.Eval
	for _, c := range []struct {
		on   bool
		what string
	}{{cfg.Constrained, "domain constraints"}, {cfg.Init != nil, "distillation (initialising from a checkpoint)"},
		{e.Relations, "relation ranks"}, {len(e.SemK)+len(e.SemUnfilteredK) > 0, "Sem@k"}, {e.ECE, "calibration (ECE)"}} {
		if c.on {
			return fmt.Errorf("sharded runs do not take %s yet", c.what)
		}
	}
	return nil
}

// newShardedSteps builds this process's part of a sharded run's step
// (Config.Shard) and the model as this process holds it (its rows of the
// entity tables), with the memory account of its parts.
func newShardedSteps(cfg Config, sz models.Sizes, opt graph.Optimizer) (stepper, *dist.Stepper, *models.Model, Memory, error) {
	if err := Shardable(cfg); err != nil {
		return nil, nil, nil, Memory{}, fmt.Errorf("train: %s: %w", cfg.Model, err)
	}
	shard, err := dist.NewStepper(cfg.Shard, cfg.Model, sz, modelOptions(cfg), cfg.Objective, cfg.BatchSize, opt)
	if err != nil {
		return nil, nil, nil, Memory{}, fmt.Errorf("train: sharding %s over %d processes: %w", cfg.Model, cfg.Shard.Size(), err)
	}
	m, err := shard.PartModel()
	if err != nil {
		return nil, nil, nil, Memory{}, err
	}
	// The one-process step's graph over this process's part of the model,
	// built but not compiled, measures its parameters, gradients and
	// optimiser state; the sharded step its buffers.
	sg, err := buildStep(m, nil, cfg.Objective, partBatch(cfg.BatchSize, cfg.Shard.Size()))
	if err != nil {
		return nil, nil, nil, Memory{}, err
	}
	mem := sg.memory(len(opt.Slots()), keepsBestLL(cfg, m))
	// The graph's nodes have the layout's shapes, whole tables: the step
	// differentiates this process's rows, and holds its own buffers.
	mem.Gradients, mem.Step = mem.Parameters, shard.BufferBytes()
	return shardedStepper{shard}, shard, m, mem, nil
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
// its rows of the entity tables in every group, the whole of the others.
// Writing it gathers the rows (StatePart), so no process holds the whole
// state.
func (r *run) partState(epoch int, bestLL snapshot) *State {
	s := stateOf(r.m, r.best, bestLL, r.shard.Optimizer(), r.res, epoch, r.steps, r.stepTime.Seconds(), r.stop, r.resumeNotes)
	s.Part = r.statePart()
	return s
}

// statePart describes this process's part of a sharded run's tables.
func (r *run) statePart() *StatePart {
	rows, me := r.shard.Rows(), r.cfg.Shard.Rank()
	return &StatePart{Tables: r.m.Layout.EntityTables(), Lo: rows.Lo(me), Hi: rows.Hi(me), N: rows.N, Gather: r.shard.GatherRows}
}

// shardMemory turns a one-process memory account into one process's of a
// run whose entity tables are split over p: its rows of the entity tables
// and the whole of the others, in the parameters, the best ones, the
// gradients and the optimiser's state. entity is the entity tables' share
// of the parameters.
func shardMemory(mem Memory, entity float64, p int) Memory {
	if p <= 1 {
		return mem
	}
	own := func(b int64) int64 { return b - int64(entity*float64(b)*float64(p-1)/float64(p)) }
	mem.Parameters, mem.Best = own(mem.Parameters), own(mem.Best)
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

// PartRows says what process rank of a run of cfg on a data set of these
// sizes, sharded over p processes, holds of each entity table: rows
// [lo, hi) of the tables named (for ckpt.ReadStateRows).
func PartRows(cfg Config, entities, relations, rank, p int) (tables []string, lo, hi int, err error) {
	sf, _, err := models.Lookup(cfg.Model)
	if err != nil {
		return nil, 0, 0, err
	}
	rows, err := dist.NewRows(entities, p)
	if err != nil {
		return nil, 0, 0, err
	}
	l := sf.Layout(modelSizes(cfg, entities, relations))
	return l.EntityTables(), rows.Lo(rank), rows.Hi(rank), nil
}
