package dist_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"gekc/dist"
	"gekc/graph"
	"gekc/kg"
	"gekc/models"
	"gekc/objectives"
	"gekc/train"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// tinyTriples draws n distinct-enough triples over e entities and r
// relations.
func tinyTriples(n, e, r int, seed uint64) []kg.Triple {
	rng := rand.New(rand.NewPCG(seed, 1))
	out := make([]kg.Triple, n)
	for i := range out {
		out[i] = kg.Triple{S: int32(rng.IntN(e)), R: int32(rng.IntN(r)), O: int32(rng.IntN(e))}
	}
	return out
}

type stepCase struct {
	model string
	obj   objectives.Objective
	opt   func() graph.Optimizer
}

func stepCases() []stepCase {
	adam := func() graph.Optimizer { return graph.NewAdam(0.05) }
	adagrad := func() graph.Optimizer { return graph.NewAdagrad(0.1, 0) }
	sgd := func() graph.Optimizer { return graph.NewSGD(0.05, 0.9) }
	pll := objectives.PLL{Weights: objectives.Uniform}
	weighted := objectives.PLL{Weights: objectives.Weights{Subject: 0.5, Relation: 2, Object: 1}}
	mle := objectives.MLE{}
	return []stepCase{
		{"cp2", pll, adam}, {"cp2", mle, adagrad},
		{"complex2", weighted, adam}, {"complex2", mle, sgd},
		{"complex2", objectives.Regularized{Objective: pll, N3: 0.01, F2: 0.02}, adam},
		{"rescal2", mle, adam}, {"tucker2", pll, adam}, {"simple2", mle, adam}, {"distmult2", pll, sgd},
		{"cp+", pll, adam}, {"cp+", mle, adagrad}, {"complex+", mle, adam}, {"complex+", weighted, sgd},
		{"rescal+", pll, adam}, {"tucker+", mle, adam},
		// Energy-based: a distributed log-sum-exp over the candidates.
		{"complex", pll, adam}, {"complex", objectives.Regularized{Objective: weighted, N3: 0.01, F2: 0.02}, adagrad},
		{"cp", weighted, sgd}, {"distmult", pll, adam}, {"rescal", pll, adam}, {"tucker", weighted, adam},
	}
}

// TestStepMatchesOneProcess trains the same model for a few steps, one
// short, on one process (train.Stepper) and sharded over 1, 2 and 3
// goroutine processes, in float64: losses and every parameter agree to
// summation order.
func TestStepMatchesOneProcess(t *testing.T) {
	const entities, relations, batch = 9, 3, 7
	data := tinyTriples(4*batch-3, entities, relations, 11)
	sz := models.Sizes{Entities: entities, Relations: relations, Rank: 3}
	opt := models.Options{Seed: 5, Dtype: tensor.Float64}
	for _, c := range stepCases() {
		ref, err := models.New(c.model, sz, opt)
		if err != nil {
			t.Fatal(err)
		}
		one, err := train.NewStepper(ref, c.obj, batch, c.opt())
		if err != nil {
			t.Fatalf("%s: %v", c.model, err)
		}
		var want []float64
		for lo := 0; lo < len(data); lo += batch {
			l, err := one.Step(data[lo:min(lo+batch, len(data))])
			if err != nil {
				t.Fatalf("%s: %v", c.model, err)
			}
			want = append(want, l)
		}
		for _, np := range []int{1, 2, 3} {
			name := fmt.Sprintf("%s/%s/P=%d", c.model, c.obj.Name(), np)
			sts := newLocalSteppers(t, np, c.model, sz, opt, c.obj, batch, c.opt)
			for i, lo := 0, 0; lo < len(data); i, lo = i+1, lo+batch {
				losses := stepAll(t, sts, data[lo:min(lo+batch, len(data))])
				for p, l := range losses {
					if !close(l, want[i], 1e-11) {
						t.Errorf("%s: step %d: process %d's loss %.15g, one process's %.15g", name, i, p, l, want[i])
					}
				}
			}
			sameParams(t, name, sts, ref, 1e-10)
		}
	}
}

func close(a, b, tol float64) bool { return math.Abs(a-b) <= tol*math.Max(1, math.Abs(b)) }

func newLocalSteppers(t *testing.T, np int, model string, sz models.Sizes, opt models.Options,
	obj objectives.Objective, batch int, o func() graph.Optimizer) []*dist.Stepper {
	t.Helper()
	comms := dist.Local(np)
	sts := make([]*dist.Stepper, np)
	for p := range sts {
		var err error
		if sts[p], err = dist.NewStepper(comms[p], model, sz, opt, obj, batch, o()); err != nil {
			t.Fatalf("%s: %v", model, err)
		}
	}
	return sts
}

// stepAll steps every process on the batch, each in its goroutine.
func stepAll(t *testing.T, sts []*dist.Stepper, batch []kg.Triple) []float64 {
	t.Helper()
	losses, errs := make([]float64, len(sts)), make([]error, len(sts))
	var wg sync.WaitGroup
	for p, st := range sts {
		wg.Go(func() { losses[p], errs[p] = st.Step(batch) })
	}
	wg.Wait()
	for p, err := range errs {
		if err != nil {
			t.Fatalf("process %d: %v", p, err)
		}
	}
	return losses
}

// whole concatenates the processes' parts of a table (each process holds
// all of a replicated table: the copies must be equal, and are checked).
func whole(sts []*dist.Stepper, table string) []float64 {
	if !isEntity(sts[0].Model(), table) {
		first := graph.Float64s(sts[0].Param(table))
		for _, st := range sts[1:] {
			for j, v := range graph.Float64s(st.Param(table)) {
				if v != first[j] {
					return nil // copies differ: the caller's comparison fails on the length
				}
			}
		}
		return first
	}
	var out []float64
	for _, st := range sts {
		out = append(out, graph.Float64s(st.Param(table))...)
	}
	return out
}

func isEntity(m *models.Model, table string) bool {
	for _, n := range m.Layout.EntityTables() {
		if n == table {
			return true
		}
	}
	return false
}

// TestStepFloat32 is the float32 run of the squared and non-negative
// ComplEx by PLL over three processes: losses and parameters agree with one
// process's after several steps to float32's summation order.
func TestStepFloat32(t *testing.T) {
	const entities, relations, batch = 11, 4, 8
	data := tinyTriples(5*batch-1, entities, relations, 3)
	sz := models.Sizes{Entities: entities, Relations: relations, Rank: 4}
	opt := models.Options{Seed: 9}
	for _, model := range []string{"complex2", "complex+"} {
		obj := objectives.PLL{Weights: objectives.Uniform}
		ref, err := models.New(model, sz, opt)
		if err != nil {
			t.Fatal(err)
		}
		one, err := train.NewStepper(ref, obj, batch, graph.NewAdam(0.02))
		if err != nil {
			t.Fatal(err)
		}
		sts := newLocalSteppers(t, 3, model, sz, opt, obj, batch, func() graph.Optimizer { return graph.NewAdam(0.02) })
		for lo := 0; lo < len(data); lo += batch {
			b := data[lo:min(lo+batch, len(data))]
			want, err := one.Step(b)
			if err != nil {
				t.Fatal(err)
			}
			if got := stepAll(t, sts, b)[0]; !close(got, want, 1e-5) {
				t.Errorf("%s: step at %d: loss %.8g, one process's %.8g", model, lo, got, want)
			}
		}
		sameParams(t, model, sts, ref, 1e-4)
	}
}

// TestStepLeavesBatchAlone: a step reads its batch and writes nothing into
// it or past its end (the caller's next batch).
func TestStepLeavesBatchAlone(t *testing.T) {
	data := tinyTriples(20, 9, 3, 4)
	keep := slices.Clone(data)
	sz := models.Sizes{Entities: 9, Relations: 3, Rank: 2}
	sts := newLocalSteppers(t, 2, "cp2", sz, models.Options{}, objectives.MLE{}, 6, func() graph.Optimizer { return graph.NewSGD(0.1, 0) })
	stepAll(t, sts, data[:3])
	stepAll(t, sts, data[3:9])
	if !slices.Equal(data, keep) {
		t.Fatalf("the triples changed: %v, were %v", data, keep)
	}
}

func TestNewStepperRefuses(t *testing.T) {
	sz := models.Sizes{Entities: 2, Relations: 2, Rank: 2}
	pll := objectives.PLL{Weights: objectives.Uniform}
	for _, c := range []struct {
		name, model string
		np          int
		obj         objectives.Objective
		want        string
	}{
		{"energy-based by MLE", "complex", 1, objectives.MLE{}, "energy-based model trains by PLL"},
		{"energy-based by a weightless PLL", "complex", 1, objectives.PLL{}, "PLL weights"},
		{"more processes than entities", "cp2", 3, pll, "cannot be split"},
		{"an objective that does not split", "cp2", 1, wholeOnly{}, "does not split"},
	} {
		_, err := dist.NewStepper(dist.Local(c.np)[0], c.model, sz, models.Options{}, c.obj, 4, graph.NewAdam(0.1))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one saying %q", c.name, err, c.want)
		}
	}
}

// wholeOnly is an Objective that is not Divisible.
type wholeOnly struct{}

func (wholeOnly) Name() string { return "whole-only" }

func (wholeOnly) Loss(c *models.Circuit, b *models.Batch, w *G.Node) (*G.Node, error) {
	return objectives.MLE{}.Loss(c, b, w)
}

// sameParams checks the processes' parts of every table against the
// one-process model's, to tol (relative).
func sameParams(t *testing.T, name string, sts []*dist.Stepper, ref *models.Model, tol float64) {
	t.Helper()
	for _, table := range ref.ParamNames() {
		got, w := whole(sts, table), graph.Float64s(ref.Param(table))
		if len(got) != len(w) {
			t.Errorf("%s: %s: %d values (copies of a replicated table differ?), want %d", name, table, len(got), len(w))
			continue
		}
		for j := range w {
			if !close(got[j], w[j], tol) {
				t.Errorf("%s: %s[%d] = %.15g, one process's %.15g", name, table, j, got[j], w[j])
				break
			}
		}
	}
}
