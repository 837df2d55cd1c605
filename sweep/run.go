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
	spec := job.Spec
	budget, err := runspec.MemoryBudget(spec)
	if err != nil {
		return nil, err
	}
	cfg, ds, err := runConfig(job, budget)
	if err != nil {
		return nil, err
	}
	job.Observer.Log(ds.String())
	started := time.Now()
	var earlier time.Duration   // wall time of earlier attempts
	var segments []ckpt.Segment // the processes of earlier attempts
	seg := thisProcess()        // this one's share, its times and epochs filled as it goes
	seg.Started = started.UTC()
	var stateNotes []string
	if job.StatePath != "" {
		st, info, err := readState(job, cfg, ds)
		switch {
		case errors.Is(err, ckpt.ErrNoState):
		case err != nil:
			// A state that cannot be read costs the epochs it held, not the run.
			stateNotes = append(stateNotes, fmt.Sprintf("resume state ignored, trained from scratch: %v", err))
			job.Observer.Log(stateNotes[0])
		default:
			cfg.Resume = st
			earlier = info.Wall
			seg.FromEpoch, seg.FromBatch = info.Epoch, info.Batch
			segments = info.Segments
			if segments == nil {
				// A state written before the account: of its processes
				// only their wall time and where they left the run are known.
				segments = []ckpt.Segment{{WallSeconds: info.Wall.Seconds(), ToEpoch: info.Epoch, ToBatch: info.Batch}}
			}
		}
		if job.StateEvery >= 0 {
			cfg.StateEvery, cfg.SaveFinal = job.StateEvery, job.SaveFinal
			cfg.SaveState = func(s *train.State) error {
				seg.WallSeconds, seg.ToEpoch, seg.ToBatch = time.Since(started).Seconds(), s.Epoch, s.Batch
				all := append(slices.Clip(segments), seg)
				if err := ckpt.WriteState(job.StatePath, job.ID, s, earlier+time.Since(started), all); err != nil {
					// Not fatal: the run goes on, it just cannot resume from here.
					msg := fmt.Sprintf("resume state %s not saved: %v", train.ResumePoint(s.Epoch, s.Batch), err)
					job.Observer.Log(msg)
					if len(stateNotes) < 3 {
						stateNotes = append(stateNotes, msg)
					}
				}
				return nil
			}
		}
	}
	resumed := cfg.Resume != nil
	first := cfg
	cfg.Resume = nil // only first holds the state, and Run lets go of it once restored
	// Each attempt appends to the run's event file, kept up to the epoch it
	// starts after.
	run := func(cfg train.Config, keep int) (*train.Result, error) {
		obs, closeEvents := withEvents(job, job.Observer, cfg.LearningRate, keep)
		defer closeEvents()
		return train.Run(ctx, cfg, ds, obs)
	}
	res, err := run(first, seg.FromEpoch)
	if errors.Is(err, train.ErrStateMismatch) {
		// A state saved by another version of the model (say, new tables).
		msg := fmt.Sprintf("resume state ignored, trained from scratch: %v", err)
		job.Observer.Log(msg)
		stateNotes = append(stateNotes, msg)
		resumed, earlier, segments = false, 0, nil
		seg.FromEpoch, seg.FromBatch = 0, 0
		res, err = run(cfg, 0)
	}
	if err != nil {
		return nil, err
	}
	out := &Outcome{Status: res.Status, BestEpoch: res.BestEpoch, Valid: res.Valid, Test: res.Test, Notes: append(res.Notes, stateNotes...),
		Memory: &resultsdir.Memory{Memory: res.Memory, Total: res.Memory.Total(), Budget: cfg.MemoryBudget}, Data: resultsdir.DataOf(ds)}
	if e := res.LL.Epoch; e >= 0 {
		out.LLEpoch = &e
	}
	if resumed {
		out.WallSeconds = (earlier + time.Since(started)).Seconds()
		seg.WallSeconds, seg.ToEpoch, seg.ToBatch = time.Since(started).Seconds(), lastEpoch(res.Epochs), 0
		out.Segments = append(slices.Clip(segments), seg)
	}
	if out.Test == nil {
		out.Test = map[string]float64{}
	}
	for k, v := range res.Initial {
		out.Test["init_"+k] = v // the distilled model before fine-tuning
	}
	out.Epochs = res.Epochs
	out.Processes = res.Processes
	got := 1
	if job.Shard != nil {
		got = job.Shard.Size()
	}
	if asked := max(spec.Processes, 1); asked != got {
		out.Notes = append(out.Notes, fmt.Sprintf("the grid asks for %d processes (processes); %d trained it (bin/gekc-mpi under mpirun -np %d or srun gives it %[1]d)", asked, got, asked))
	}
	out.Test["step_ms"] = 1000 * res.StepSeconds
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
	if out.Status == train.Finished {
		if err := ckpt.WritePart(filepath.Join(job.RunDir, ckpt.CheckpointName), res.Model, res.Part); err != nil {
			return nil, err
		}
		for name, v := range map[string]*kg.Vocab{ckpt.EntitiesName: ds.Entities, ckpt.RelationsName: ds.Relations} {
			if err := ckpt.WriteVocab(filepath.Join(job.RunDir, name), v); err != nil {
				return nil, err
			}
		}
		// From here on the model holds the parameters samples are drawn
		// from: with sample_from = "ll", those of the best validation LL.
		if res.UseBestLLParams() {
			if err := ckpt.WritePart(filepath.Join(job.RunDir, ckpt.CheckpointLLName), res.Model, res.Part); err != nil {
				return nil, err
			}
		}
	}
	fromLL := resultsdir.SamplesFromLL(spec)
	if spec.Samples > 0 && out.Status == train.Finished {
		switch {
		case fromLL && res.BestLLParams == nil:
			out.Notes = append(out.Notes, "no samples: sample_from = \"ll\", and the parameters at the best validation log-likelihood were not kept")
		case res.Model.Semantics == models.Energy:
			out.Notes = append(out.Notes, "no samples: an energy-based model cannot be sampled exactly")
		default:
			dom, err := resultsdir.Constraint(spec, ds)
			if err != nil {
				return nil, err
			}
			ts, dt, err := resultsdir.Sample(res.Model, dom, spec.Samples, uint64(spec.Seed))
			if err != nil {
				return nil, fmt.Errorf("sampling: %w", err)
			}
			if err := resultsdir.WriteSamples(filepath.Join(job.RunDir, resultsdir.SamplesName), ds, ts); err != nil {
				return nil, err
			}
			out.Test["sample_s"] = dt.Seconds()
			if fromLL {
				out.Notes = append(out.Notes, fmt.Sprintf("samples drawn from the parameters at the best validation log-likelihood, epoch %d (%s)", res.LL.Epoch, ckpt.CheckpointLLName))
			}
		}
	}
	return out, nil
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
