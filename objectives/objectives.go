package objectives

import (
	"errors"
	"fmt"
	"math"

	"gekc/graph"
	"gekc/models"

	G "gorgonia.org/gorgonia"
)

// Weights are the PLL weights ω_s, ω_r, ω_o of the three conditionals.
type Weights struct{ Subject, Relation, Object float64 }

// Uniform is the classical pseudo-log-likelihood (all weights one), the
// paper's setting.
var Uniform = Weights{1, 1, 1}

// An Objective builds the loss of a batch: a scalar to minimise.
//
// weights holds one non-negative weight per triple of the batch, summing to
// one (1/n for the n real triples, 0 for padding), so the loss is a mean.
type Objective interface {
	Name() string
	Loss(c *models.Circuit, b *models.Batch, weights *G.Node) (*G.Node, error)
}

// PLL is the negative weighted pseudo-log-likelihood
//
//	−Σ_i w_i (ω_s log p(s_i|r_i,o_i) + ω_r log p(r_i|s_i,o_i) + ω_o log p(o_i|s_i,r_i)).
type PLL struct{ Weights Weights }

func (p PLL) Name() string { return "pll" }

func (p PLL) Loss(c *models.Circuit, b *models.Batch, weights *G.Node) (*G.Node, error) {
	var e graph.Builder
	var terms G.Nodes
	for _, t := range []struct {
		v models.Var
		w float64
	}{{models.Subject, p.Weights.Subject}, {models.Relation, p.Weights.Relation}, {models.Object, p.Weights.Object}} {
		if t.w == 0 {
			continue
		}
		if t.w < 0 {
			return nil, fmt.Errorf("objectives.PLL: negative weight %g for the %v", t.w, t.v)
		}
		terms = append(terms, e.Scale(e.Dot(e.Use(c.LogConditional(b, t.v)), weights), -t.w))
	}
	if len(terms) == 0 {
		return nil, errors.New("objectives.PLL: all weights are zero")
	}
	return e.Result(e.AddAll(terms...))
}

// MLE is the exact negative log-likelihood −Σ_i w_i log p(s_i,r_i,o_i)
// = log Z − Σ_i w_i log φ(s_i,r_i,o_i). Energy-based models cannot compute
// it: their log Z is intractable.
type MLE struct{}

func (MLE) Name() string { return "mle" }

func (MLE) Loss(c *models.Circuit, b *models.Batch, weights *G.Node) (*G.Node, error) {
	logZ, err := c.LogPartition()
	if err != nil {
		return nil, fmt.Errorf("objectives.MLE with %s: %w", c.Model().Name, err)
	}
	var e graph.Builder
	return e.Result(e.Sub(logZ, e.Dot(e.Use(c.LogScore(b)), weights)))
}

// Regularized adds the weighted Lp penalties of the batch's embedding rows
// (models.Circuit.LpPenalty) to an objective's loss:
//
//	loss + N3·Σ_i w_i Σ_v ‖x_{v,i}‖₃³ + F2·Σ_i w_i Σ_v ‖x_{v,i}‖₂²
//
// once per triple, over its subject, relation and object rows (complex
// entries by their modulus): the N3 regulariser of Lacroix et al. (2018)
// with which kbc and the paper's ψ (Chen et al. 2021) train ComplEx, and
// the squared Frobenius norm F2. Zero weights leave the loss as it is.
//
// A squared model's distribution does not change with the scale of its
// embeddings but for the ε mass (models.Options.EpsMass): there the
// penalty shrinks them until ε carries more of the probability, which is
// a different effect from an energy model's, whose scale is the logits'
// temperature.
type Regularized struct {
	Objective
	N3, F2 float64
}

// Name is the regularised objective's: a run's objective is still "pll".
func (r Regularized) Name() string {
	if r.Objective == nil {
		return "regularized"
	}
	return r.Objective.Name()
}

func (r Regularized) Loss(c *models.Circuit, b *models.Batch, weights *G.Node) (*G.Node, error) {
	if r.Objective == nil {
		return nil, errors.New("objectives.Regularized: no objective to regularise")
	}
	for _, w := range []struct {
		name string
		v    float64
	}{{"N3", r.N3}, {"F2", r.F2}} {
		if !(w.v >= 0) || math.IsInf(w.v, 0) {
			return nil, fmt.Errorf("objectives.Regularized: %s weight %g; want a finite weight ≥ 0", w.name, w.v)
		}
	}
	var e graph.Builder
	terms := G.Nodes{e.Use(r.Objective.Loss(c, b, weights))}
	for _, t := range []struct{ weight, p float64 }{{r.N3, 3}, {r.F2, 2}} {
		if t.weight > 0 {
			terms = append(terms, e.Scale(e.Dot(e.Use(c.LpPenalty(b, t.p)), weights), t.weight))
		}
	}
	return e.Result(e.AddAll(terms...))
}

// Parse returns the objective named in a grid ("pll" or "mle").
func Parse(name string, w Weights) (Objective, error) {
	switch name {
	case "pll":
		return PLL{Weights: w}, nil
	case "mle":
		return MLE{}, nil
	}
	return nil, fmt.Errorf("unknown objective %q (known: pll, mle)", name)
}

// A Divisible objective's loss splits over parts of a batch, as when the
// processes of an entity-sharded run each take some of its triples:
// PartLoss is the loss of the part whose triples carry weights (the
// batch's weights of those triples, summing to share), with the terms of
// the whole batch (MLE's log Z) scaled by share, so that the parts'
// losses and gradients sum to the batch's.
type Divisible interface {
	Objective
	PartLoss(c *models.Circuit, b *models.Batch, weights, share *G.Node) (*G.Node, error)
}

// PartLoss is Loss: every term of PLL belongs to one triple.
func (p PLL) PartLoss(c *models.Circuit, b *models.Batch, weights, _ *G.Node) (*G.Node, error) {
	return p.Loss(c, b, weights)
}

// PartLoss is share·log Z − Σ_i w_i log φ(s_i,r_i,o_i).
func (MLE) PartLoss(c *models.Circuit, b *models.Batch, weights, share *G.Node) (*G.Node, error) {
	logZ, err := c.LogPartition()
	if err != nil {
		return nil, fmt.Errorf("objectives.MLE with %s: %w", c.Model().Name, err)
	}
	var e graph.Builder
	return e.Result(e.Sub(e.ScaleBy(logZ, share), e.Dot(e.Use(c.LogScore(b)), weights)))
}

// PartLoss adds the part's penalties to the regularised objective's part
// loss; the objective must be Divisible.
func (r Regularized) PartLoss(c *models.Circuit, b *models.Batch, weights, share *G.Node) (*G.Node, error) {
	d, ok := r.Objective.(Divisible)
	if !ok {
		return nil, fmt.Errorf("objectives.Regularized: %s does not split over parts of a batch", r.Name())
	}
	return Regularized{Objective: partOf{d, share}, N3: r.N3, F2: r.F2}.Loss(c, b, weights)
}

// partOf is a Divisible objective's part loss as an Objective.
type partOf struct {
	Divisible
	share *G.Node
}

func (p partOf) Loss(c *models.Circuit, b *models.Batch, weights *G.Node) (*G.Node, error) {
	return p.PartLoss(c, b, weights, p.share)
}
