package train

import (
	"errors"
	"fmt"
	"math"
	"time"

	"gekc/dist"
	"gekc/kg"
	"gekc/metrics"
	"gekc/models"
	"gekc/objectives"

	"gorgonia.org/tensor"
)

// Config is one training run.
type Config struct {
	Model        string // registry name, e.g. "complex2"
	Rank         int
	RelationRank int
	Objective    objectives.Objective
	Optimizer    Optimizer // zero value: Adam
	LearningRate float64
	BatchSize    int
	Epochs       int // maximum
	Patience     int // validations without improvement before stopping; 0: never stop early
	Seed         uint64
	Dtype        tensor.Dtype
	InitScale    float64
	EpsMass      float64
	Eval         EvalConfig
	// Init, when set, is copied into the new model's parameters before
	// training (distillation from another run's checkpoint); the test
	// metrics of the model as initialised are then reported in
	// Result.Initial.
	Init func(m *models.Model) error
	// Constrained multiplies the model by the dataset's domain constraint
	// (its Schema): training, ranking and log-likelihoods are those of the
	// constrained GeKC, which puts no mass on inconsistent triples.
	Constrained bool
	// MemoryBudget, when positive, is the most the run may hold (see
	// Memory): the evaluation batch is cut to what the rest of the run
	// leaves, and a run that cannot fit even one query's evaluation
	// buffers is refused before it builds its model (EstimateMemory).
	MemoryBudget int64
	// Resume continues a run from a State it saved, after an epoch or
	// inside one (see SaveState), instead of starting afresh; Init is then
	// not applied, the state's parameters being the ones to continue from. Run copies
	// the state and lets go of it; a caller that keeps no reference lets
	// it be freed (it is as large as the model and its optimiser state).
	Resume *State
	// SaveState, when set, is called with the State to resume from after
	// epochs that do not end the run and inside long ones, as StateEvery
	// spaces them, and once more when ctx is cancelled during training,
	// with the State at the step boundary where training stopped
	// (State.Batch > 0 inside an epoch): a run told to stop (SIGTERM, a
	// SLURM time limit) loses no step. Its tensors alias the
	// live ones: the function must copy or write them out before it
	// returns. In a sharded run the State is this process's part
	// (State.Part): ckpt.WriteState writes it whole, State.Whole copies it
	// whole; both gather the rows with the other processes, so the
	// function must do one of them. An error from it ends the run with
	// that error.
	SaveState func(*State) error
	// StateEvery spaces the calls of SaveState: after an epoch it is
	// called only when StateEvery has passed since the last call (0: after
	// every epoch), and, when positive, also inside an epoch, at the first
	// step boundary StateEvery after the last call, so that a run killed
	// without warning loses at most about StateEvery of training. A stop
	// (ctx cancelled) is saved whatever the interval.
	StateEvery time.Duration
	// SaveFinal also calls SaveState after the last epoch, and at an early
	// stop, so that the same run given more epochs continues from there
	// exactly as if it had been given them at the start (successive
	// halving's promotion). A State saved at an early stop resumes to the
	// test alone.
	SaveFinal bool
	// KeepBestLL keeps, beside the parameters of the best validated epoch,
	// those of the best validation log-likelihood (Result.BestLLParams):
	// the model the paper's code samples from, while it reports the
	// MRR-selected one's ranking. One more copy of the parameters; no
	// effect when the log-likelihood selects, or is not validated.
	KeepBestLL bool
	// Shard, when set, trains the model with its entity tables split by
	// rows over the group's processes (package dist), each of which calls
	// Run with the same Config and data: every step is the one-process
	// step up to summation order. Each process holds only its part of the
	// model (Result.Model; Result.Part says which rows), ranks and scores
	// against it (dist.Evaluator), and keeps its part of the best
	// parameters and of the states; a state is written whole by the
	// process with a SaveState, gathering the rows (State.Part), so it
	// resumes on any number of processes. Shardable says what sharded
	// runs refuse.
	Shard dist.Comm
	// Processes is how many processes the run's entity tables are split
	// over, as the memory estimate and the budget count them, per process
	// (EstimateMemory); Shard's size when Shard is set. 0 or 1: one.
	Processes int
}

// EvalConfig controls validation and testing.
type EvalConfig struct {
	TiePolicy metrics.TiePolicy
	Hits      []int
	BatchSize int // at most this many queries per evaluation batch
	// Buffers caps the bytes of the evaluator's buffers that grow with its
	// batch (scores of every candidate): the batch is cut until they fit
	// (0: DefaultEvalBuffers).
	Buffers int64
	Select  string // "mrr" or "ll": early stopping and best-epoch metric
	// MinDelta is the least rise of the Select metric that counts as an
	// improvement (0: any rise); LLMinDelta that of the validation
	// log-likelihood, for StopOnLL and Result.LL. The paper's code uses
	// 2e-4 on the MRR and 0.02 nats.
	MinDelta, LLMinDelta float64
	// StopOnLL is the paper's code's stopping rule: a run stops once more
	// than Patience validations have passed without an improvement of the
	// Select metric nor of the validation log-likelihood (of the Select
	// metric alone for a model without one). Without it a run stops after
	// Patience validations without an improvement of the Select metric:
	// the paper's code's "patience 3" is one validation longer than
	// gekc's.
	StopOnLL bool
	Every    int // validate every so many epochs
	MaxValid int // evaluate on a seeded subset of this many validation triples (0: all)
	// Negatives, when positive and the data set ships no negatives of its
	// own, ranks each valid and test triple's subject and object against
	// this many sampled negatives (metrics.NegativeSampler: OGB's protocol,
	// type-consistent on a typed graph, filtered, the same for every run)
	// instead of against every entity.
	Negatives int
	// LogLikelihood adds the average log-likelihood ("ll") to the metrics of
	// models that can compute it.
	LogLikelihood bool
	// SemK, when not empty, adds Sem@k ("sem@k") for these k, its
	// candidates filtered as for the MRR (the paper's definition); the
	// dataset needs a Schema.
	SemK []int
	// SemUnfilteredK adds the unfiltered variant ("sem_unfiltered@k"),
	// which ranks every entity.
	SemUnfilteredK []int
	// Relations adds the filtered ranking of relation queries (s, ?, o):
	// "mrr_relation" and "hits@k_relation". "mrr" and "hits@k" stay the
	// subject and object queries' mean.
	Relations bool
	// ECE adds the empirical calibration error of the test triples against
	// hard negatives to the test metrics, under the logistic and the min-max
	// mapping of log-scores to probabilities ("ece_logistic",
	// "ece_minmax"); see Calibrate. Validation never computes it: it is not
	// a selection metric.
	ECE bool
	// SkipTest leaves the test split alone (e.g. for smoke runs).
	SkipTest bool
	// NoFinalTest ends the run without evaluating its kept parameters on
	// the test split, while the test log-likelihood at each improvement of
	// the validation one is still tracked: a search's rung that a later
	// rung may continue, whose test metrics would be of an unfinished run.
	NoFinalTest bool
	// TestOn, when set, is another data set whose test split the run is
	// tested on instead of its own: a model trained on a surrogate graph
	// tested on the real one. Its triples are matched to the training data
	// by entity and relation names (those naming something the training
	// data lacks are left out, with a note), and ranked filtered by its own
	// splits, the known truths of the graph tested on. Validation, and so
	// early stopping, stays on the training data set's valid split.
	TestOn *kg.Dataset
}

// ParseDtype returns the element type named "float32" or "float64", as
// grids write it.
func ParseDtype(name string) (tensor.Dtype, error) {
	switch name {
	case "float32", "":
		return tensor.Float32, nil
	case "float64":
		return tensor.Float64, nil
	}
	return tensor.Dtype{}, fmt.Errorf("train: dtype %q (float32, float64)", name)
}

func (c *Config) validate() error {
	switch {
	case c.Objective == nil:
		return errors.New("train: no objective")
	case c.BatchSize <= 0, c.Epochs <= 0, c.Rank <= 0:
		return fmt.Errorf("train: batch size, epochs and rank must be positive (%d, %d, %d)", c.BatchSize, c.Epochs, c.Rank)
	case c.LearningRate <= 0:
		return fmt.Errorf("train: learning rate %g", c.LearningRate)
	case c.Optimizer.validate() != nil:
		return c.Optimizer.validate()
	case !(c.Eval.MinDelta >= 0) || !(c.Eval.LLMinDelta >= 0):
		return fmt.Errorf("train: improvement thresholds must be >= 0 (MinDelta %v, LLMinDelta %v)", c.Eval.MinDelta, c.Eval.LLMinDelta)
	}
	if c.Patience <= 0 {
		c.Patience = math.MaxInt
	}
	if c.Eval.BatchSize <= 0 {
		c.Eval.BatchSize = 1000
	}
	if c.Eval.Every <= 0 {
		c.Eval.Every = 1
	}
	if c.Eval.Select == "" {
		c.Eval.Select = "mrr"
	}
	if c.Eval.Select != "mrr" && c.Eval.Select != "ll" {
		return fmt.Errorf("train: unknown selection metric %q (mrr, ll)", c.Eval.Select)
	}
	if c.Eval.Hits == nil {
		c.Eval.Hits = []int{1, 3, 10}
	}
	if c.Dtype == (tensor.Dtype{}) {
		c.Dtype = tensor.Float32
	}
	return nil
}

// NewModel builds the model cfg trains, freshly initialised, for a
// knowledge graph of the given numbers of entities and relations: the
// registry name, sizes and every construction option (seed, dtype, init
// scale, epsilon mass) of cfg. Run uses it; so does whatever rebuilds a
// run's model to load its checkpoint into, so that the two cannot differ.
func NewModel(cfg Config, entities, relations int) (*models.Model, error) {
	return models.New(cfg.Model, modelSizes(cfg, entities, relations), modelOptions(cfg))
}

func modelSizes(cfg Config, entities, relations int) models.Sizes {
	return models.Sizes{Entities: entities, Relations: relations, Rank: cfg.Rank, RelationRank: cfg.RelationRank}
}

func modelOptions(cfg Config) models.Options {
	return models.Options{Seed: cfg.Seed, Dtype: cfg.Dtype, InitScale: cfg.InitScale, EpsMass: cfg.EpsMass}
}
