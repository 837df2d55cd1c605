package sweep

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime/debug"
	"slices"
	"time"

	"gekc/kg"
	"gekc/models"
	"gekc/resultsdir"
	"gekc/runspec"
	"gekc/train"
	"gekc/train/ckpt"
)

// Train is the RunFunc of the command: it trains job's run with package
// train, resuming from job.StatePath when it holds a state, and writes the
// run's checkpoint.npz, curves.png (and calibration.png, samples.tsv when
// the spec asks for them) into job.RunDir.
func Train(ctx context.Context, job Job) (*Outcome, error) {
	budget, err := runspec.MemoryBudget(job.Spec)
	if err != nil {
		return nil, err
	}
	cfg, ds, err := runConfig(job, budget)
	if err != nil {
		return nil, err
	}
	job.Observer.Log(ds.String())
	a := newAttempt(job, &cfg, ds)
	res, err := a.run(ctx, job, cfg, ds)
	if err != nil {
		return nil, err
	}
	out := a.outcome(job, cfg, ds, res)
	if err := writeArtefacts(job, ds, res, out); err != nil {
		return nil, err
	}
	if err := writeSamples(job, ds, res, out); err != nil {
		return nil, err
	}
	return out, nil
}

// attempt is this process's share of a run: when it started, what earlier
// attempts left (their wall time and processes, from the resume state),
// and notes on the state.
type attempt struct {
	started    time.Time
	earlier    time.Duration  // wall time of earlier attempts
	segments   []ckpt.Segment // the processes of earlier attempts
	seg        ckpt.Segment   // this one's share, its times and epochs filled as it goes
	stateNotes []string
	resumed    bool
}

// newAttempt reads job's resume state into cfg.Resume, when there is one,
// and has cfg save the state as the job asks.
func newAttempt(job Job, cfg *train.Config, ds *kg.Dataset) *attempt {
	a := &attempt{started: time.Now(), seg: thisProcess()}
	a.seg.Started = a.started.UTC()
	if job.StatePath == "" {
		return a
	}
	st, info, err := readState(job, *cfg, ds)
	switch {
	case errors.Is(err, ckpt.ErrNoState):
	case err != nil:
		// A state that cannot be read costs the epochs it held, not the run.
		a.stateNotes = append(a.stateNotes, fmt.Sprintf("resume state ignored, trained from scratch: %v", err))
		job.Observer.Log(a.stateNotes[0])
	default:
		cfg.Resume, a.resumed = st, true
		a.earlier = info.Wall
		a.seg.FromEpoch, a.seg.FromBatch = info.Epoch, info.Batch
		a.segments = info.Segments
		if a.segments == nil {
			// A state written before the account: of its processes
			// only their wall time and where they left the run are known.
			a.segments = []ckpt.Segment{{WallSeconds: info.Wall.Seconds(), ToEpoch: info.Epoch, ToBatch: info.Batch}}
		}
	}
	if job.StateEvery >= 0 {
		cfg.StateEvery = job.StateEvery
		cfg.SaveState = func(s *train.State) error { a.saveState(job, s); return nil }
	}
	return a
}

// saveState writes s as job's resume state; a state that cannot be
// written is noted, not fatal: the run goes on, it just cannot resume from
// there.
func (a *attempt) saveState(job Job, s *train.State) {
	a.seg.WallSeconds, a.seg.ToEpoch, a.seg.ToBatch = time.Since(a.started).Seconds(), s.Epoch, s.Batch
	all := append(slices.Clip(a.segments), a.seg)
	if err := ckpt.WriteState(job.StatePath, job.ID, s, a.earlier+time.Since(a.started), all); err != nil {
		msg := fmt.Sprintf("resume state %s not saved: %v", train.ResumePoint(s.Epoch, s.Batch), err)
		job.Observer.Log(msg)
		if len(a.stateNotes) < 3 {
			a.stateNotes = append(a.stateNotes, msg)
		}
	}
}

// run trains cfg, from its resume state when it has one, and from scratch
// when the state does not fit the model (say, saved by another version
// with other tables).
func (a *attempt) run(ctx context.Context, job Job, cfg train.Config, ds *kg.Dataset) (*train.Result, error) {
	first := cfg
	cfg.Resume = nil // only first holds the state, and Run lets go of it once restored
	// Each attempt appends to the run's event file, kept up to the epoch it
	// starts after.
	run := func(cfg train.Config, keep int) (*train.Result, error) {
		obs, closeEvents := withEvents(job, job.Observer, cfg.LearningRate, keep)
		defer closeEvents()
		return train.Run(ctx, cfg, ds, obs)
	}
	res, err := run(first, a.seg.FromEpoch)
	if errors.Is(err, train.ErrStateMismatch) {
		msg := fmt.Sprintf("resume state ignored, trained from scratch: %v", err)
		job.Observer.Log(msg)
		a.stateNotes = append(a.stateNotes, msg)
		a.resumed, a.earlier, a.segments = false, 0, nil
		a.seg.FromEpoch, a.seg.FromBatch = 0, 0
		res, err = run(cfg, 0)
	}
	return res, err
}

// outcome is what the run reports from res: its metrics, times, memory
// and the account of its processes.
func (a *attempt) outcome(job Job, cfg train.Config, ds *kg.Dataset, res *train.Result) *Outcome {
	out := &Outcome{Status: res.Status, BestEpoch: res.BestEpoch, Valid: res.Valid, Test: res.Test, Notes: append(res.Notes, a.stateNotes...),
		Memory: &resultsdir.Memory{Memory: res.Memory, Total: res.Memory.Total(), Budget: cfg.MemoryBudget}, Data: resultsdir.DataOf(ds),
		Epochs: res.Epochs, Processes: res.Processes}
	if e := res.LL.Epoch; e >= 0 {
		out.LLEpoch = &e
	}
	if a.resumed {
		out.WallSeconds = (a.earlier + time.Since(a.started)).Seconds()
		a.seg.WallSeconds, a.seg.ToEpoch, a.seg.ToBatch = time.Since(a.started).Seconds(), lastEpoch(res.Epochs), 0
		out.Segments = append(slices.Clip(a.segments), a.seg)
	}
	if out.Test == nil {
		out.Test = map[string]float64{}
	}
	for k, v := range res.Initial {
		out.Test["init_"+k] = v // the distilled model before fine-tuning
	}
	got := 1
	if job.Shard != nil {
		got = job.Shard.Size()
	}
	if asked := max(job.Spec.Processes, 1); asked != got {
		out.Notes = append(out.Notes, fmt.Sprintf("the grid asks for %d processes (processes); %d trained it (bin/gekc-mpi under mpirun -np %d or srun gives it %[1]d)", asked, got, asked))
	}
	out.Test["step_ms"] = 1000 * res.StepSeconds
	return out
}

// writeArtefacts writes the run's figures and, when it finished, its
// checkpoint (and that of its best validation LL, when samples come from
// it) with the names of its rows.
func writeArtefacts(job Job, ds *kg.Dataset, res *train.Result, out *Outcome) error {
	spec := job.Spec
	// A figure that cannot be drawn is noted, not fatal: the run's metrics
	// and checkpoint are what hours of training bought, and -analyze plots
	// or -analyze calibration can draw the figures again.
	if err := resultsdir.WriteCurves(job.RunDir, spec, out.Epochs, out.BestEpoch); err != nil {
		out.Notes = append(out.Notes, fmt.Sprintf("%s not written: %v", resultsdir.CurvesName, err))
	}
	if res.Calibration != nil {
		if err := resultsdir.WriteCalibrationPlot(job.RunDir, spec, res.Calibration); err != nil {
			out.Notes = append(out.Notes, fmt.Sprintf("%s not written: %v", resultsdir.CalibrationPlotName, err))
		}
	}
	if out.Status != train.Finished {
		return nil
	}
	if err := ckpt.WritePart(filepath.Join(job.RunDir, ckpt.CheckpointName), res.Model, res.Part); err != nil {
		return err
	}
	for name, v := range map[string]*kg.Vocab{ckpt.EntitiesName: ds.Entities, ckpt.RelationsName: ds.Relations} {
		if err := ckpt.WriteVocab(filepath.Join(job.RunDir, name), v); err != nil {
			return err
		}
	}
	// From here on the model holds the parameters samples are drawn
	// from: with sample_from = "ll", those of the best validation LL.
	if res.UseBestLLParams() {
		return ckpt.WritePart(filepath.Join(job.RunDir, ckpt.CheckpointLLName), res.Model, res.Part)
	}
	return nil
}

// writeSamples draws the spec's samples from a finished run's model (or
// notes why it draws none) into samples.tsv.
func writeSamples(job Job, ds *kg.Dataset, res *train.Result, out *Outcome) error {
	spec := job.Spec
	fromLL := resultsdir.SamplesFromLL(spec)
	switch {
	case spec.Samples <= 0 || out.Status != train.Finished:
		return nil
	case fromLL && res.BestLLParams == nil:
		out.Notes = append(out.Notes, "no samples: sample_from = \"ll\", and the parameters at the best validation log-likelihood were not kept")
		return nil
	case res.Model.Semantics == models.Energy:
		out.Notes = append(out.Notes, "no samples: an energy-based model cannot be sampled exactly")
		return nil
	}
	dom, err := resultsdir.Constraint(spec, ds)
	if err != nil {
		return err
	}
	ts, dt, err := resultsdir.Sample(res.Model, dom, spec.Samples, uint64(spec.Seed))
	if err != nil {
		return fmt.Errorf("sampling: %w", err)
	}
	if err := resultsdir.WriteSamples(filepath.Join(job.RunDir, resultsdir.SamplesName), ds, ts); err != nil {
		return err
	}
	out.Test["sample_s"] = dt.Seconds()
	if fromLL {
		out.Notes = append(out.Notes, fmt.Sprintf("samples drawn from the parameters at the best validation log-likelihood, epoch %d (%s)", res.LL.Epoch, ckpt.CheckpointLLName))
	}
	return nil
}

// readState reads job's resume state: in a sharded run only this
// process's rows of the entity tables (of a state of any process count).
func readState(job Job, cfg train.Config, ds *kg.Dataset) (*train.State, *ckpt.StateInfo, error) {
	if job.Shard == nil {
		return ckpt.ReadState(job.StatePath, job.ID)
	}
	tables, lo, hi, err := train.PartRows(cfg, ds.Entities.Len(), ds.Relations.Len(), job.Shard.Rank(), job.Shard.Size())
	if err != nil {
		return nil, nil, err
	}
	return ckpt.ReadStateRows(job.StatePath, job.ID, tables, lo, hi)
}

// gatherCheckpoints is what a process of a sharded run other than 0 does
// while process 0 writes the run's checkpoints (Train): it takes part in
// the gathers of its rows.
func gatherCheckpoints(res *train.Result) error {
	if res.Status != train.Finished || res.Part == nil {
		return nil
	}
	if err := res.Part.GatherModel(res.Model); err != nil {
		return err
	}
	if res.UseBestLLParams() {
		return res.Part.GatherModel(res.Model)
	}
	return nil
}

// runConfig loads job's data and builds its train.Config under a memory
// budget: what every process of a sharded run builds alike.
func runConfig(job Job, budget int64) (train.Config, *kg.Dataset, error) {
	spec := job.Spec
	ds, err := resultsdir.LoadDataset(filepath.Join(job.DataRoot, spec.Dataset))
	if err != nil {
		return train.Config{}, nil, err
	}
	// Parsing leaves freed pages resident until the runtime scavenges
	// them; at millions of triples they would add to the run's peak.
	debug.FreeOSMemory()
	cfg, err := runspec.TrainConfig(spec)
	if err != nil {
		return train.Config{}, nil, err
	}
	cfg.MemoryBudget = budget
	// A search's rung that a later one may continue: its last state is
	// kept, and its test would be an unfinished run's.
	cfg.SaveFinal, cfg.Eval.NoFinalTest = job.SaveFinal, job.SaveFinal
	if name := spec.Eval.TestOn; name != "" {
		if cfg.Eval.TestOn, err = resultsdir.LoadDataset(filepath.Join(job.DataRoot, name)); err != nil {
			return train.Config{}, nil, fmt.Errorf("eval.test_on: %w", err)
		}
	}
	if job.DistillCheckpoint != "" {
		path := job.DistillCheckpoint
		cfg.Init = func(m *models.Model) error { return ckpt.Load(path, m) }
	}
	cfg.Shard = job.Shard
	return cfg, ds, nil
}

// lastEpoch is the number of the last epoch in es (0 when none).
func lastEpoch(es []train.EpochRecord) int {
	if len(es) == 0 {
		return 0
	}
	return es[len(es)-1].Epoch
}
