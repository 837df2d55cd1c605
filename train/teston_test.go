package train

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"gekc/kg"
	"gekc/objectives"

	"gorgonia.org/tensor"
)

// Testing on another data set: on a second copy of the training data (the
// same names, loaded apart) the test metrics are exactly those of testing
// on the data itself; on a copy whose test split names an entity the
// training data lacks, those triples are left out and the run says so, and
// the metrics are those of the remaining triples.
func TestTestOnAnotherDataSet(t *testing.T) {
	ds := repoData(t, "nations")
	cfg := Config{Model: "complex2", Rank: 6, Objective: objectives.PLL{Weights: objectives.Uniform}, LearningRate: 1e-2,
		BatchSize: 300, Epochs: 2, Seed: 3, Dtype: tensor.Float64, Eval: EvalConfig{LogLikelihood: true, ECE: true}}
	own, err := Run(context.Background(), cfg, ds, nil)
	if err != nil {
		t.Fatal(err)
	}
	same := cfg
	same.Eval.TestOn = repoData(t, "nations")
	got, err := Run(context.Background(), same, ds, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Test, own.Test) {
		t.Errorf("tested on a copy of itself: %v\nwant %v", got.Test, own.Test)
	}

	// A copy with one more entity, the training data lacks it, as the
	// subject of every tenth test triple: those are left out.
	other := repoData(t, "nations")
	names := append(other.Entities.Names(), "an entity nations lacks")
	v, err := kg.NewVocab(names)
	if err != nil {
		t.Fatal(err)
	}
	newID := func(old int32) int32 { id, _ := v.Index(names[old]); return id }
	remap := func(ts []kg.Triple) []kg.Triple {
		out := make([]kg.Triple, len(ts))
		for i, x := range ts {
			out[i] = kg.Triple{S: newID(x.S), R: x.R, O: newID(x.O)}
		}
		return out
	}
	var kept []kg.Triple
	test := remap(other.Test)
	for i, x := range other.Test {
		if i%10 == 0 {
			test[i].S = newID(int32(len(names) - 1))
		} else {
			kept = append(kept, x)
		}
	}
	other.Train, other.Valid, other.Test, other.Entities = remap(other.Train), remap(other.Valid), test, v
	cut := cfg
	cut.Eval.TestOn = other
	got, err = Run(context.Background(), cut, ds, nil)
	if err != nil {
		t.Fatal(err)
	}
	note := strings.Join(got.Notes, "\n")
	if !strings.Contains(note, "tested on nations's test split") || !strings.Contains(note, "left out") {
		t.Errorf("notes do not say what was tested on and left out: %q", note)
	}
	// The same model (same seed, same training) tested on the kept
	// triples: its filter is the same as the mapped copy's.
	ref, err := Run(context.Background(), cfg, &kg.Dataset{Name: ds.Name, Entities: ds.Entities, Relations: ds.Relations,
		Train: ds.Train, Valid: ds.Valid, Test: kept}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"mrr", "hits@10", "ll"} {
		if got.Test[k] != ref.Test[k] {
			t.Errorf("%s on the kept %d triples (of %d) = %v, want %v", k, len(kept), len(other.Test), got.Test[k], ref.Test[k])
		}
	}
}

// Testing on another data set costs memory, and the estimate counts it:
// that data set as loaded, its triples in the run's ids and their filter,
// no less than the run then holds and not wildly more; given in the
// sizes or taken from the Config, the same.
func TestTestOnMemory(t *testing.T) {
	ds := repoData(t, "nations")
	cfg := Config{Model: "complex2", Rank: 6, Objective: objectives.PLL{Weights: objectives.Uniform}, LearningRate: 1e-2,
		BatchSize: 300, Epochs: 1, Seed: 3}
	own, err := EstimateMemory(cfg, SizesOf(ds))
	if err != nil {
		t.Fatal(err)
	}
	other := repoData(t, "umls") // a bigger data set, for its sizes
	cfg.Eval.TestOn = repoData(t, "nations")
	est, err := EstimateMemory(cfg, SizesOf(ds))
	if err != nil {
		t.Fatal(err)
	}
	r, err := newRun(context.Background(), cfg, ds, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.res.Memory.Data; est.Data < got || est.Data > 2*got {
		t.Errorf("testing on a copy: data estimated %d bytes, the run holds %d", est.Data, got)
	}
	if est.Data-own.Data < SizesOf(cfg.Eval.TestOn).Bytes {
		t.Errorf("the estimate grew by %d bytes for a data set of %d", est.Data-own.Data, SizesOf(cfg.Eval.TestOn).Bytes)
	}
	sz := SizesOf(ds)
	o := SizesOf(other)
	sz.TestOn = &o
	viaSizes, err := EstimateMemory(cfg, sz) // the sizes win over the Config's data set
	if err != nil {
		t.Fatal(err)
	}
	if viaSizes.Data <= est.Data {
		t.Errorf("umls (%d triples) as the test_on data estimated at %d bytes, nations (%d) at %d",
			o.Train+o.Valid+o.Test, viaSizes.Data, len(ds.Train)+len(ds.Valid)+len(ds.Test), est.Data)
	}

	// Under a budget that cuts the evaluation batch, the run fits the
	// budget, with a batch no smaller than the estimate's (whose data part
	// is an upper bound: every triple tested on, a worst-case filter).
	tight := cfg
	tight.MemoryBudget = est.Total() - est.Eval/2
	want, err := EstimateMemory(tight, RunSizes(ds, tight.Eval.TestOn))
	if err != nil {
		t.Fatal(err)
	}
	r, err = newRun(context.Background(), tight, ds, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.res.Memory; got.EvalBatch < want.EvalBatch || want.EvalBatch >= est.EvalBatch || got.Total() > tight.MemoryBudget {
		t.Errorf("budget %d: the run evaluates %d queries at a time and holds %d; the estimate said %d (untight %d)",
			tight.MemoryBudget, got.EvalBatch, got.Total(), want.EvalBatch, est.EvalBatch)
	}
	// Tested on its own data set (one copy in memory), the data set is
	// counted once.
	shared, err := EstimateMemory(cfg, RunSizes(ds, ds))
	if err != nil {
		t.Fatal(err)
	}
	if d := est.Data - shared.Data; d != SizesOf(ds).Bytes {
		t.Errorf("a copy of the data set costs %d bytes more than the data set itself, want its %d", d, SizesOf(ds).Bytes)
	}
}
