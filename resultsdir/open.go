package resultsdir

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"gekc/grid"
	"gekc/kg"
	"gekc/models"
	"gekc/train"
	"gekc/train/ckpt"
)

// Finished is a finished run opened again from its directory.
type Finished struct {
	ID     string
	Dir    string // the run's directory, <out>/runs/<ID>
	Spec   grid.RunSpec
	Record *Record // its metrics.json
	Data   *kg.Dataset
	Model  *models.Model // with the parameters of its checkpoint
}

// LoadFinished opens the finished run in dir: its record, its data set
// (read from dataRoot, see LoadDataset) and its model with the selected
// parameters (checkpoint.npz).
func LoadFinished(dir, dataRoot string) (*Finished, error) {
	rec, err := ReadRecord(dir)
	if err != nil {
		return nil, err
	}
	if rec == nil || rec.Status != train.Finished {
		return nil, fmt.Errorf("%s: not a finished run", dir)
	}
	spec := rec.Spec
	ds, err := LoadDataset(filepath.Join(dataRoot, spec.Dataset))
	if err != nil {
		return nil, err
	}
	cfg, err := ModelConfig(spec)
	if err != nil {
		return nil, err
	}
	m, err := train.NewModel(cfg, ds.Entities.Len(), ds.Relations.Len())
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, ckpt.CheckpointName)
	if err := ckpt.Load(path, m); err != nil {
		return nil, &BrokenRunError{ID: rec.ID, Path: path, Err: err}
	}
	return &Finished{ID: rec.ID, Dir: dir, Spec: spec, Record: rec, Data: ds, Model: m}, nil
}

// BrokenRunError is a finished run whose checkpoint is missing or cannot
// be read: analyses pass it over, the others say how to mend it.
type BrokenRunError struct {
	ID, Path string
	Err      error
}

func (e *BrokenRunError) Error() string {
	return fmt.Sprintf("run %s: %s: %v; restore the file, or train the run again (remove its metrics.json and run the sweep)", e.ID, e.Path, e.Err)
}

func (e *BrokenRunError) Unwrap() error { return e.Err }

// Constraint is the domain constraint the run was trained under (see
// Constraint).
func (fr *Finished) Constraint() (*models.Domain, error) { return Constraint(fr.Spec, fr.Data) }

// LoadSampledParameters loads into fr.Model the parameters the run's
// samples come from: those of its best validation log-likelihood
// (checkpoint-ll.npz) for a run trained with sample_from = "ll", else the
// selected ones it already holds.
func (fr *Finished) LoadSampledParameters() error {
	if !SamplesFromLL(fr.Spec) {
		return nil
	}
	if err := ckpt.Load(filepath.Join(fr.Dir, ckpt.CheckpointLLName), fr.Model); err != nil {
		return fmt.Errorf("%s: sample_from = \"ll\" needs the parameters of the best validation log-likelihood: %w", fr.ID, err)
	}
	return nil
}

// SamplesFromLL says whether a run's samples come from the parameters of
// its best validation log-likelihood kept apart from the selected ones
// (checkpoint-ll.npz): sample_from = "ll" where the log-likelihood does not
// select anyway.
func SamplesFromLL(spec grid.RunSpec) bool {
	return spec.SampleFrom == "ll" && spec.Eval.Select != "ll"
}

// SampledAt says which parameters a run's samples come from: "best valid
// MRR, epoch 17", "best valid LL, epoch 5" (epochs unknown to records from
// before they were kept are left out).
func (rec *Record) SampledAt() string {
	metric, epoch := cmp.Or(rec.Spec.Eval.Select, "mrr"), &rec.BestEpoch // "": a record from before the key
	if SamplesFromLL(rec.Spec) {
		metric, epoch = "ll", rec.LLEpoch
	}
	s := "best valid " + strings.ToUpper(metric)
	if epoch != nil {
		s += fmt.Sprintf(", epoch %d", *epoch)
	}
	return s
}

// SampledLL is the test log-likelihood of the parameters a run's samples
// come from (as SampledAt names them); false when the record has none (an
// energy-based run, or a record from before the LL at the best validation
// LL was kept).
func (rec *Record) SampledLL() (float64, bool) {
	key := "ll"
	if SamplesFromLL(rec.Spec) {
		key = "ll_at_best_ll"
	}
	ll, ok := rec.Test[key]
	if !ok || !(ll <= 0) { // NaN, or +Inf of an underflowing Z: none
		return 0, false
	}
	return float64(ll), true
}

// LLCheckpointMissing says whether a run whose samples come from the
// parameters of its best validation log-likelihood (sample_from = "ll")
// lacks checkpoint-ll.npz in its directory dir: a run resumed from a state
// that did not keep them has none, and its record's notes say so.
func LLCheckpointMissing(dir string, rec *Record) bool {
	if rec == nil || !SamplesFromLL(rec.Spec) {
		return false
	}
	_, err := os.Stat(filepath.Join(dir, ckpt.CheckpointLLName))
	return errors.Is(err, fs.ErrNotExist)
}

// ModelConfig is the part of train.Config that builds a run's model
// (train.NewModel): its model, sizes, seed, precision and initial scale.
// The runner's full configuration starts from it.
func ModelConfig(spec grid.RunSpec) (train.Config, error) {
	dt, err := train.ParseDtype(spec.DType)
	if err != nil {
		return train.Config{}, err
	}
	return train.Config{Model: spec.Model, Rank: spec.Rank, RelationRank: spec.RelationRank,
		Seed: uint64(spec.Seed), Dtype: dt, InitScale: spec.InitScale}, nil
}

// Constraint returns the domain constraint a run is trained under: nil
// for an unconstrained run, an error when a constrained run's data set has
// no usable schema (its samples or metrics would silently be unconstrained).
func Constraint(spec grid.RunSpec, ds *kg.Dataset) (*models.Domain, error) {
	if spec.Constraints != "domain" {
		return nil, nil
	}
	if ds.Schema == nil {
		return nil, fmt.Errorf("run with constraints = \"domain\": data set %s has no schema (entity_types.tsv and relation_schema.tsv)", ds.Dir)
	}
	return models.DomainFromSchema(ds.Schema)
}

// Data sets are loaded once per process: a sweep trains many runs on one,
// an analysis opens many.
var datasets sync.Map // dir → *datasetEntry

type datasetEntry struct {
	once sync.Once
	ds   *kg.Dataset
	err  error
}

// loadTimes remembers how long each loaded data set took, for its runs'
// records (DataOf).
var loadTimes sync.Map // *kg.Dataset → float64

// LoadDataset loads the data set in dir (kg.Load) once per process and
// returns the same *kg.Dataset to every caller after.
func LoadDataset(dir string) (*kg.Dataset, error) {
	e, _ := datasets.LoadOrStore(dir, &datasetEntry{})
	ent := e.(*datasetEntry)
	ent.once.Do(func() {
		start := time.Now()
		ent.ds, ent.err = kg.Load(dir)
		if ent.ds != nil {
			loadTimes.Store(ent.ds, time.Since(start).Seconds())
		}
	})
	return ent.ds, ent.err
}
