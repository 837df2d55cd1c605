package grid

import (
	"strings"
	"testing"
)

func exampleSpec() RunSpec {
	s := DefaultRunSpec()
	s.Dataset, s.Model, s.Objective = "FB15k-237", "complex2", "pll"
	s.Rank, s.BatchSize, s.LearningRate, s.Epochs, s.Seed = 200, 1000, 0.001, 30, 0
	return s
}

func TestIDIsStable(t *testing.T) {
	// Pinned: changing how IDs are made orphans every finished result.
	const want = "complex2-pll-d200-b1000-lr0.001-s0-8008ddbb"
	if got := exampleSpec().ID(); got != want {
		t.Errorf("ID() = %s, want %s", got, want)
	}
	if got := exampleSpec().ConfigID(); got != "complex2-pll-d200-b1000-lr0.001-8008ddbb" {
		t.Errorf("ConfigID() = %s", got)
	}
}

func TestIDDistinguishesEveryKey(t *testing.T) {
	mutations := []struct {
		key    string
		mutate func(*RunSpec)
	}{
		{"dataset", func(s *RunSpec) { s.Dataset = "WN18RR" }},
		{"model", func(s *RunSpec) { s.Model = "cp2" }},
		{"rank", func(s *RunSpec) { s.Rank = 201 }},
		{"relation_rank", func(s *RunSpec) { s.RelationRank = 10 }},
		{"objective", func(s *RunSpec) { s.Objective = "mle" }},
		{"constraints", func(s *RunSpec) { s.Constraints = "domain" }},
		{"pll_weights.subject", func(s *RunSpec) { s.PLLWeights.Subject = 0.5 }},
		{"pll_weights.object", func(s *RunSpec) { s.PLLWeights.Object = 0.5 }},
		{"pll_weights.relation", func(s *RunSpec) { s.PLLWeights.Relation = 0.5 }},
		{"optimizer", func(s *RunSpec) { s.Optimizer = "adagrad" }},
		{"momentum", func(s *RunSpec) { s.Momentum = 0.9 }},
		{"initial_accumulator", func(s *RunSpec) { s.InitialAccumulator = 0.1 }},
		{"learning_rate", func(s *RunSpec) { s.LearningRate = 0.01 }},
		{"batch_size", func(s *RunSpec) { s.BatchSize = 500 }},
		{"epochs", func(s *RunSpec) { s.Epochs = 31 }},
		{"patience", func(s *RunSpec) { s.Patience = 5 }},
		{"seed", func(s *RunSpec) { s.Seed = 1 }},
		{"init_scale", func(s *RunSpec) { s.InitScale = 0.1 }},
		{"dtype", func(s *RunSpec) { s.DType = "float64" }},
		{"eval.tie_policy", func(s *RunSpec) { s.Eval.TiePolicy = "realistic" }},
		{"eval.hits", func(s *RunSpec) { s.Eval.Hits = []int{1, 10} }},
		{"eval.metrics", func(s *RunSpec) { s.Eval.Metrics = []string{"mrr"} }},
		{"eval.select", func(s *RunSpec) { s.Eval.Select = "ll" }},
		{"eval.stop", func(s *RunSpec) { s.Eval.Stop = "select_and_ll" }},
		{"eval.min_delta", func(s *RunSpec) { s.Eval.MinDelta = 2e-4 }},
		{"eval.ll_min_delta", func(s *RunSpec) { s.Eval.LLMinDelta = 0.02 }},
		{"eval.every", func(s *RunSpec) { s.Eval.Every = 2 }},
		{"eval.max_valid", func(s *RunSpec) { s.Eval.MaxValid = 100 }},
		{"eval.negatives", func(s *RunSpec) { s.Eval.Negatives = 500 }},
		{"eval.sem_k", func(s *RunSpec) { s.Eval.SemK = []int{5} }},
		{"eval.test_on", func(s *RunSpec) { s.Eval.TestOn = "FB15k-237" }},
		{"distill_from", func(s *RunSpec) { s.DistillFrom = "cp-pll-x" }},
		{"n3", func(s *RunSpec) { s.N3 = 0.05 }},
		{"f2", func(s *RunSpec) { s.F2 = 0.05 }},
	}
	covered := map[string]bool{}
	ids := map[string]string{exampleSpec().ID(): "base"}
	for _, m := range mutations {
		covered[m.key] = true
		s := exampleSpec()
		m.mutate(&s)
		id := s.ID()
		if prev, dup := ids[id]; dup {
			t.Errorf("changing %s gives ID %s, the same as %s", m.key, id, prev)
		}
		ids[id] = m.key
	}
	// Keys that cannot change training keep the ID, so that e.g.
	// -samples on a finished sweep does not retrain it.
	for key, mutate := range map[string]func(*RunSpec){
		"samples":         func(s *RunSpec) { s.Samples = 1000 },
		"sample_from":     func(s *RunSpec) { s.SampleFrom = "ll" },
		"eval.batch_size": func(s *RunSpec) { s.Eval.BatchSize = 10 },
		"memory":          func(s *RunSpec) { s.Memory = "2GiB" },
		"processes":       func(s *RunSpec) { s.Processes = 4 },
	} {
		covered[key] = true
		s := exampleSpec()
		mutate(&s)
		if s.ID() != exampleSpec().ID() {
			t.Errorf("changing %s changed the ID", key)
		}
	}
	for _, f := range specFields {
		if !f.isTable() && !covered[f.key] {
			t.Errorf("key %s is not covered by this test", f.key)
		}
	}
}

func TestIDIgnoresHowDefaultsAreWritten(t *testing.T) {
	explicit := base + `constraints = "none"
patience = 3
pll_weights = {subject = 1.0, object = 1, relation = 1}
[defaults.eval]
hits = [1, 3, 10]
select = "mrr"
`
	a, err := ParseGrid("a.toml", []byte(base), nil)
	must(t, err)
	b, err := ParseGrid("b.toml", []byte(explicit), nil)
	must(t, err)
	if a.Runs[0].ID != b.Runs[0].ID {
		t.Errorf("IDs differ: %s vs %s", a.Runs[0].ID, b.Runs[0].ID)
	}
}

func TestConfigIDGroupsSeeds(t *testing.T) {
	s0, s1 := exampleSpec(), exampleSpec()
	s1.Seed = 7
	if s0.ConfigID() != s1.ConfigID() {
		t.Errorf("seeds have different config IDs: %s, %s", s0.ConfigID(), s1.ConfigID())
	}
	if s0.ID() == s1.ID() {
		t.Error("seeds share an ID")
	}
	// The config ID is the ID without its seed part.
	if got := strings.Replace(s1.ID(), "-s7-", "-", 1); got != s1.ConfigID() {
		t.Errorf("ID without seed %s != ConfigID %s", got, s1.ConfigID())
	}
}

// ConfigIDOf reads a run's ConfigID off its ID, whatever the model's name
// (sanitised, "-" included) or the seed, and refuses what ID never makes.
func TestConfigIDOf(t *testing.T) {
	for _, model := range []string{"complex2", "cp+", "d-complex2"} {
		for _, seed := range []int{0, 4, 123} {
			s := exampleSpec()
			s.Model, s.Seed = model, seed
			if got, ok := ConfigIDOf(s.ID()); !ok || got != s.ConfigID() {
				t.Errorf("ConfigIDOf(%q) = %q, %v; want %q", s.ID(), got, ok, s.ConfigID())
			}
		}
	}
	for _, id := range []string{"", "complex2", "complex2-pll-d1000-b500-lr0.001-e77e734f", "complex2-pll-d1000-b500-lr0.001-s-e77e734f", "complex2-pll-lr0.001-sx1-e77e734f"} {
		if got, ok := ConfigIDOf(id); ok {
			t.Errorf("ConfigIDOf(%q) = %q, want not ok", id, got)
		}
	}
}

func TestSanitizedIDs(t *testing.T) {
	s := exampleSpec()
	s.Model = "weird/model name"
	id := s.ID()
	if strings.ContainsAny(id, "/ ") {
		t.Errorf("ID %q has a path separator or space", id)
	}
}

// Differences names the keys two specs differ in, leaving out those that
// never change a run.
func TestDifferences(t *testing.T) {
	a := exampleSpec()
	b := a.Clone()
	b.Patience, b.Eval.Select, b.Samples, b.Memory = 7, "ll", 100, "8GiB"
	got := Differences(a, b)
	if len(got) != 2 || got[0].Key != "patience" || got[0].A != a.Patience || got[0].B != 7 ||
		got[1].Key != "eval.select" || got[1].B != "ll" {
		t.Errorf("Differences = %+v; want patience and eval.select", got)
	}
	if d := Differences(a, a.Clone()); len(d) != 0 {
		t.Errorf("a spec differs from its clone in %+v", d)
	}
}

// Settings spells out what the ID's hash stands for, in RunSpec order,
// and nothing the ID shows or ignores.
func TestSettings(t *testing.T) {
	s := exampleSpec()
	s.Optimizer, s.Momentum, s.Samples, s.Eval.Hits = "sgd", 0.9, 100, []int{1, 5}
	if got, want := strings.Join(s.Settings(), " "), "dataset=FB15k-237 optimizer=sgd momentum=0.9 epochs=30 eval.hits=[1,5]"; got != want {
		t.Errorf("Settings() = %q, want %q", got, want)
	}
	if got := DefaultRunSpec().Settings(); len(got) != 0 {
		t.Errorf("the default spec's settings: %q", got)
	}
	// Sem@k's k is a setting only where Sem@k is measured (a record made
	// before the key reads it empty).
	s = DefaultRunSpec()
	s.Eval.SemK = nil
	if got := s.Settings(); len(got) != 0 {
		t.Errorf("settings without Sem@k measured: %q", got)
	}
	s.Eval.Metrics = append(s.Eval.Metrics, "sem")
	if got, want := strings.Join(s.Settings(), " "), "eval.metrics=[\"mrr\",\"hits\",\"ll\",\"sem\"] eval.sem_k=[]"; got != want {
		t.Errorf("settings with Sem@k measured: %q, want %q", got, want)
	}
}

// -dry-run's one line tells apart runs that differ in a key people sweep.
func TestDescribeRun(t *testing.T) {
	for _, c := range []struct {
		mutate func(*RunSpec)
		want   string
	}{
		{func(*RunSpec) {}, "umls cp2 pll d=4 b=100 lr=0.01 seed=0"},
		{func(s *RunSpec) { s.Constraints = "domain" }, "umls cp2 pll d=4 b=100 lr=0.01 seed=0 constraints=domain"},
		{func(s *RunSpec) { s.N3, s.F2 = 0.05, 1e-3 }, "umls cp2 pll d=4 b=100 lr=0.01 seed=0 n3=0.05 f2=0.001"},
		{func(s *RunSpec) { s.Optimizer, s.PLLWeights.Relation = "adagrad", 8 },
			"umls cp2 pll d=4 b=100 lr=0.01 seed=0 optimizer=adagrad ω_s,r,o=1,8,1"},
		{func(s *RunSpec) { s.Objective, s.PLLWeights.Relation = "mle", 0 }, "umls cp2 mle d=4 b=100 lr=0.01 seed=0"},
	} {
		s := exampleSpec()
		s.Dataset, s.Model, s.Objective, s.Rank, s.BatchSize, s.LearningRate, s.Seed = "umls", "cp2", "pll", 4, 100, 0.01, 0
		c.mutate(&s)
		if got := DescribeRun(s); got != c.want {
			t.Errorf("DescribeRun: %q, want %q", got, c.want)
		}
	}
}
