package grid

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// RunSpec is one fully resolved training run: the contract between a grid
// file and the train package. Every field is a TOML key of the same
// snake_case name, in [defaults] or a [[sweep]] block of a grid.
type RunSpec struct {
	Dataset      string     `toml:"dataset" json:"dataset"`             // directory under the data root, e.g. "umls"
	Model        string     `toml:"model" json:"model"`                 // registry name, e.g. "complex2"
	Rank         int        `toml:"rank" json:"rank"`                   // embedding size d
	RelationRank int        `toml:"relation_rank" json:"relation_rank"` // TuckER only; 0 = same as Rank
	Objective    string     `toml:"objective" json:"objective"`         // "pll" or "mle"
	Constraints  string     `toml:"constraints" json:"constraints"`     // "none" or "domain"
	PLLWeights   PLLWeights `toml:"pll_weights" json:"pll_weights"`
	// N3 and F2 weigh the regularisers of the batch's embedding rows
	// added to the objective (objectives.Regularized): Σ|x|³ (complex
	// entries by their modulus; Lacroix et al. 2018) and Σx², per triple;
	// 0 = none. Energy and squared models only.
	N3        float64 `toml:"n3" json:"n3,omitempty"`
	F2        float64 `toml:"f2" json:"f2,omitempty"`
	Optimizer string  `toml:"optimizer" json:"optimizer"` // "adam", "adagrad" or "sgd"
	Momentum  float64 `toml:"momentum" json:"momentum"`   // SGD's heavy-ball momentum in [0, 1); 0 = plain SGD
	// InitialAccumulator is where Adagrad's sums of squared gradients
	// start (PyTorch's and kbc's default 0).
	InitialAccumulator float64  `toml:"initial_accumulator" json:"initial_accumulator"`
	LearningRate       float64  `toml:"learning_rate" json:"learning_rate"`
	BatchSize          int      `toml:"batch_size" json:"batch_size"`
	Epochs             int      `toml:"epochs" json:"epochs"`     // maximum
	Patience           int      `toml:"patience" json:"patience"` // validations without improvement; 0 = no early stopping
	Seed               int      `toml:"seed" json:"seed"`
	InitScale          float64  `toml:"init_scale" json:"init_scale"` // 0 = the model's default
	DType              string   `toml:"dtype" json:"dtype"`           // "float32" or "float64"
	Eval               EvalSpec `toml:"eval" json:"eval"`
	Samples            int      `toml:"samples" json:"samples"` // triples to sample after training; 0 = none
	// SampleFrom says which parameters samples are drawn from: "" or
	// "select", the selected model's (checkpoint.npz); "ll", those of the
	// best validation log-likelihood, which the run then keeps as well
	// (checkpoint-ll.npz): the paper's code samples that model while it
	// reports the MRR-selected one's ranking.
	SampleFrom  string `toml:"sample_from" json:"sample_from,omitempty"`
	DistillFrom string `toml:"distill_from" json:"distill_from"` // run id, run directory or .npz file whose arrays initialise this run
	// Memory is the most the run may hold, e.g. "8GiB" ("": the command's
	// -memory, else GOMEMLIMIT when set, else 90% of the machine's memory;
	// "0": no budget). The
	// evaluation batch is cut to fit it, and a run that cannot fit is
	// refused before training (see train.EstimateMemory).
	Memory string `toml:"memory" json:"memory,omitempty"`
	// Processes is how many processes train the run, its entity tables
	// split over them (package dist; squared and non-negative models):
	// the SLURM emission asks for that many tasks and launches bin/gekc-mpi
	// with srun. 0 or 1: one. Not part of the run's ID: a sharded run is
	// the same run.
	Processes int `toml:"processes" json:"processes,omitempty"`
}

// PLLWeights weighs the three conditional log-likelihoods of the
// pseudo-log-likelihood objective.
type PLLWeights struct {
	Subject  float64 `toml:"subject" json:"subject"`
	Object   float64 `toml:"object" json:"object"`
	Relation float64 `toml:"relation" json:"relation"`
}

// EvalSpec says how a run is validated and tested.
type EvalSpec struct {
	TiePolicy string   `toml:"tie_policy" json:"tie_policy"` // "pessimistic", "realistic" or "optimistic"
	Hits      []int    `toml:"hits" json:"hits"`             // k of Hits@k
	BatchSize int      `toml:"batch_size" json:"batch_size"`
	Metrics   []string `toml:"metrics" json:"metrics"` // "mrr", "hits", "ll", "ece", "sem", "sem_unfiltered", "relation" (mrr_relation, hits@k_relation), "ktd"
	Select    string   `toml:"select" json:"select"`   // validation metric for early stopping and model selection: "mrr" or "ll"
	// Stop is "select" (stop when the select metric has not improved for
	// patience validations) or "select_and_ll" (the paper's code: stop
	// once more than patience validations have passed with neither the
	// select metric nor the validation log-likelihood improving); MinDelta and LLMinDelta
	// are the least rises that count as improvements (the paper's code:
	// 2e-4 on the MRR, 0.02 nats).
	Stop       string  `toml:"stop" json:"stop"`
	MinDelta   float64 `toml:"min_delta" json:"min_delta"`
	LLMinDelta float64 `toml:"ll_min_delta" json:"ll_min_delta"`
	Every      int     `toml:"every" json:"every"`         // validate every n epochs
	MaxValid   int     `toml:"max_valid" json:"max_valid"` // 0 = all validation triples; >0 = a fixed seeded subset
	// Negatives > 0 ranks each valid/test triple against this many sampled
	// negatives per side (OGB's protocol) instead of all entities; a data
	// set with shipped negatives keeps its own.
	Negatives int   `toml:"negatives" json:"negatives"`
	SemK      []int `toml:"sem_k" json:"sem_k"` // k of Sem@k, reported on the test split when metrics has "sem"
	// TestOn names another data set under the data root whose test split
	// the run is tested on instead of its own (a model trained on a
	// surrogate graph tested on the real one): triples matched by names,
	// ranked filtered by that data set's splits. "" tests on the run's own.
	TestOn string `toml:"test_on" json:"test_on,omitempty"`
}

// DefaultRunSpec returns the values a grid key takes when no block sets it.
// Keys without a sensible default (dataset, model, rank, objective,
// learning_rate, batch_size, epochs) are left zero and rejected by
// DefaultValidator, so a grid must say them.
func DefaultRunSpec() RunSpec {
	return RunSpec{
		Constraints: "none",
		PLLWeights:  PLLWeights{Subject: 1, Object: 1, Relation: 1},
		Optimizer:   "adam",
		Patience:    3,
		DType:       "float32",
		Eval: EvalSpec{
			TiePolicy: "pessimistic",
			Hits:      []int{1, 3, 10},
			BatchSize: 1000,
			Metrics:   []string{"mrr", "hits", "ll"},
			Select:    "mrr",
			Stop:      "select",
			Every:     1,
			SemK:      []int{1, 20, 100},
		},
	}
}

// Clone returns a deep copy, so that specs expanded from one grid never
// share slices.
func (s RunSpec) Clone() RunSpec {
	c := s
	c.Eval.Hits = append([]int(nil), s.Eval.Hits...)
	c.Eval.Metrics = append([]string(nil), s.Eval.Metrics...)
	c.Eval.SemK = append([]int(nil), s.Eval.SemK...)
	return c
}

// idVisibleKeys are spelled out in the readable part of an ID; every other
// key enters the ID through the hash.
var idVisibleKeys = map[string]bool{
	"model": true, "objective": true, "rank": true, "batch_size": true,
	"learning_rate": true, "seed": true,
}

// idIgnoredKeys cannot change the trained parameters or the reported
// metrics, so changing them must not turn a finished run into a new one
// (e.g. `-samples 1000` on a finished sweep, or a smaller evaluation batch
// on a machine with less memory).
var idIgnoredKeys = map[string]bool{"samples": true, "sample_from": true, "eval.batch_size": true, "memory": true, "processes": true}

// ID names the run: readable for the hyperparameters people sweep most,
// e.g. "complex2-pll-d200-b1000-lr0.001-s0-1f3a9c2e", followed by a hash of
// every other key whose value differs from DefaultRunSpec. Distinct specs
// get distinct IDs (up to the hash, and Expand checks a grid for
// collisions); the same spec always gets the same ID, including when a grid
// writes a default value explicitly or a later version adds a key with a
// default.
func (s RunSpec) ID() string {
	return fmt.Sprintf("%s-%s-d%d-b%d-lr%s-s%d-%s", sanitizeIDPart(s.Model), sanitizeIDPart(s.Objective),
		s.Rank, s.BatchSize, formatFloat(s.LearningRate), s.Seed, s.hiddenHash())
}

// ConfigID is ID without the seed: runs that differ only in their seed share
// it, which is how results.md groups seeds into mean ± std.
func (s RunSpec) ConfigID() string {
	return fmt.Sprintf("%s-%s-d%d-b%d-lr%s-%s", sanitizeIDPart(s.Model), sanitizeIDPart(s.Objective),
		s.Rank, s.BatchSize, formatFloat(s.LearningRate), s.hiddenHash())
}

// ConfigIDOf is the ConfigID of the run named id, read off the ID alone
// (for tables that keep a run's ID and not its spec): id without its seed
// part, "-s<seed>" before the hash. ok is false when id is not shaped as
// ID makes them.
func ConfigIDOf(id string) (config string, ok bool) {
	rest, hash, found := cutLast(id, "-")
	if !found {
		return "", false
	}
	head, seed, found := cutLast(rest, "-")
	if !found || len(seed) < 2 || seed[0] != 's' || strings.Trim(seed[1:], "0123456789") != "" {
		return "", false
	}
	return head + "-" + hash, true
}

// cutLast is strings.Cut at the last sep.
func cutLast(s, sep string) (before, after string, found bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+len(sep):], true
}

// hiddenHash hashes "key=value" lines, sorted by key, for the keys that are
// neither visible in the ID nor ignored and differ from their default.
func (s RunSpec) hiddenHash() string {
	lines := s.hidden(canonicalValue)
	sort.Strings(lines)
	sum := sha256.Sum256([]byte(strings.Join(lines, "\n")))
	return hex.EncodeToString(sum[:4])
}

// hidden formats, as "key=value" in RunSpec order, the keys the ID
// hashes: neither spelled out in it nor ignored, and not at their default.
func (s RunSpec) hidden(format func(reflect.Value) string) []string {
	var lines []string
	def := reflect.ValueOf(DefaultRunSpec())
	val := reflect.ValueOf(s)
	for _, f := range specFields {
		if f.isTable() || idVisibleKeys[f.key] || idIgnoredKeys[f.key] {
			continue
		}
		v := val.FieldByIndex(f.index)
		if reflect.DeepEqual(v.Interface(), def.FieldByIndex(f.index).Interface()) {
			continue
		}
		lines = append(lines, f.key+"="+format(v))
	}
	return lines
}

// Settings names what the hash of the run's ID stands for: every key that
// is neither spelled out in the ID nor ignored by it and differs from its
// default, as "key=value" in RunSpec order, e.g. ["dataset=umls",
// "optimizer=sgd", "momentum=0.9"]. Results tables show the ones that vary,
// so that runs whose IDs differ only in the hash can be told apart.
//
// eval.sem_k is left out where the metrics have no "sem": it changes
// nothing then, and a record made before the key existed reads it empty.
func (s RunSpec) Settings() []string {
	if !slices.Contains(s.Eval.Metrics, "sem") {
		s.Eval.SemK = DefaultRunSpec().Eval.SemK
	}
	return s.hidden(func(v reflect.Value) string {
		if v.Kind() == reflect.String {
			return v.String()
		}
		return canonicalValue(v)
	})
}

// canonicalValue formats a leaf value so that equal values hash equally.
func canonicalValue(v reflect.Value) string {
	switch v.Kind() {
	case reflect.String:
		return strconv.Quote(v.String())
	case reflect.Int:
		return strconv.FormatInt(v.Int(), 10)
	case reflect.Float64:
		return formatFloat(v.Float())
	case reflect.Slice:
		parts := make([]string, v.Len())
		for i := range parts {
			parts[i] = canonicalValue(v.Index(i))
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	return fmt.Sprint(v.Interface())
}

func formatFloat(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// sanitizeIDPart keeps IDs usable as directory names and in shell commands;
// the hash still distinguishes values that sanitise alike.
func sanitizeIDPart(s string) string {
	if s == "" {
		return "none"
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '+', r == '.', r == '_':
			return r
		}
		return '_'
	}, s)
}

// A KeyDifference is a key whose values differ between two specs.
type KeyDifference struct {
	Key  string // dotted, e.g. "eval.select"
	A, B any
}

// Differences lists the keys whose values differ between a and b, in
// RunSpec order, leaving out those that never change a run's parameters or
// metrics (samples, sample_from, eval.batch_size, memory: the keys an ID
// ignores).
func Differences(a, b RunSpec) []KeyDifference {
	var out []KeyDifference
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	for _, f := range specFields {
		if f.isTable() || idIgnoredKeys[f.key] {
			continue
		}
		x, y := va.FieldByIndex(f.index).Interface(), vb.FieldByIndex(f.index).Interface()
		if !reflect.DeepEqual(x, y) {
			out = append(out, KeyDifference{Key: f.key, A: x, B: y})
		}
	}
	return out
}
