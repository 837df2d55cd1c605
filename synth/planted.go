package synth

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gekc/kg"
	"gekc/metrics"
	"gekc/models"

	"gorgonia.org/tensor"
)

// Planted returns a GeKC whose parameters are drawn from a stated
// distribution: a squared model's every table entry from N(0, scale²)
// (scale 0: 1), so that φ² is far from uniform; a non-negative model's
// tables from its own initialiser (models.DefaultInit: columns from a
// symmetric Dirichlet of concentration scale, default 1, in log space).
// The draw depends on the seed only.
//
// popularity > 0 (squared models) then multiplies entity e's rows by
// exp(popularity·z_e), z_e ~ N(0, 1) once per entity: the mass of the
// triples an entity takes part in scales by exp(2·popularity·z_e), so
// degrees spread log-normally, as real graphs' are heavy-tailed.
func Planted(name string, sz models.Sizes, seed uint64, scale, popularity float64) (*models.Model, error) {
	m, err := planted(name, sz, seed, scale, tensor.Float32)
	if err != nil || popularity == 0 {
		return m, err
	}
	if popularity < 0 || m.Semantics != models.Squared {
		return nil, fmt.Errorf("synth: popularity %g: want a positive spread, for a squared model", popularity)
	}
	rng := rand.New(rand.NewPCG(seed, 0x909))
	z := make([]float64, sz.Entities)
	for i := range z {
		z[i] = math.Exp(popularity * rng.NormFloat64())
	}
	tables := []string{m.Layout.Subject}
	if m.Layout.Object != m.Layout.Subject {
		tables = append(tables, m.Layout.Object)
	}
	for _, name := range tables {
		x := m.Param(name).Data().([]float32)
		k := len(x) / sz.Entities
		for e, f := range z {
			for j := range x[e*k : (e+1)*k] {
				x[e*k+j] *= float32(f)
			}
		}
	}
	return m, nil
}

func planted(name string, sz models.Sizes, seed uint64, scale float64, dt tensor.Dtype) (*models.Model, error) {
	if scale < 0 {
		return nil, fmt.Errorf("synth: scale %g: want 0 (the default) or a positive value", scale)
	}
	opt := models.Options{Seed: seed, Dtype: dt}
	m, err := models.New(name, sz, opt)
	if err != nil {
		return nil, err
	}
	switch m.Semantics {
	case models.Energy:
		return nil, fmt.Errorf("synth: %s is energy-based: its distribution cannot be sampled exactly nor its log-likelihood computed; plant a GeKC (%s2, %s+)", name, name, name)
	case models.NonNegative:
		opt.InitScale = scale
		if opt.InitScale == 0 {
			opt.InitScale = 1
		}
		return models.New(name, sz, opt)
	}
	if scale == 0 {
		scale = 1
	}
	rng := rand.New(rand.NewPCG(seed, 0x91a47))
	for _, n := range m.ParamNames() {
		switch x := m.Param(n).Data().(type) {
		case []float32:
			for i := range x {
				x[i] = float32(scale * rng.NormFloat64())
			}
		case []float64:
			for i := range x {
				x[i] = scale * rng.NormFloat64()
			}
		}
	}
	return m, nil
}

// Distribution says in words how Planted draws a model's parameters.
func Distribution(m *models.Model, scale, popularity float64) string {
	d := distribution(m, scale)
	if popularity > 0 {
		d += fmt.Sprintf(", then entity e's rows times exp(%g·z_e), z_e ~ N(0, 1)", popularity)
	}
	return d
}

func distribution(m *models.Model, scale float64) string {
	if m.Semantics == models.NonNegative {
		if scale == 0 {
			scale = 1
		}
		return fmt.Sprintf("the model's own initialiser (log-space embeddings, each column a symmetric Dirichlet draw of concentration %g)", scale)
	}
	if scale == 0 {
		scale = 1
	}
	return fmt.Sprintf("every parameter i.i.d. N(0, %g²)", scale)
}

// NewSampler returns the exact sampler of a GeKC under a domain constraint
// (nil: none): the Gram-tree sampler for an unconstrained squared model,
// which scales to millions of entities, else the inverse-transform sampler
// with its batch of candidate scores kept within the evaluator's default
// buffers.
func NewSampler(m *models.Model, dom *models.Domain) (Sampler, error) {
	if m.Semantics == models.Energy {
		return nil, fmt.Errorf("synth: %s is energy-based: it cannot be sampled exactly (%w)", m.Name, models.ErrIntractable)
	}
	if m.Semantics == models.Squared && dom == nil {
		return models.NewTreeSampler(m)
	}
	batch := int(max(1, min(1000, metrics.DefaultBatchBuffers/(8*int64(m.Sizes.Entities)))))
	return models.NewConstrainedSampler(m, dom, batch)
}

// Support returns the number of triples a model can draw: all |E|²|R|, or
// under a schema's constraint those whose types it allows. Every GeKC gives
// each of them positive mass (a squared model's ε, a non-negative model's
// exponentials).
func Support(sz models.Sizes, schema *kg.Schema) float64 {
	if schema == nil {
		return float64(sz.Entities) * float64(sz.Entities) * float64(sz.Relations)
	}
	var n float64
	for r := range schema.SubjectType {
		n += float64(len(schema.EntitiesOfType(schema.SubjectType[r]))) * float64(len(schema.EntitiesOfType(schema.ObjectType[r])))
	}
	return n
}

// LogLikelihoods returns the exact average log-likelihood of each split
// under m (and its constraint): the truth training on a planted graph is
// measured against.
func LogLikelihoods(m *models.Model, dom *models.Domain, d *Sampled) (train, valid, test float64, err error) {
	ev, err := metrics.NewEvaluatorWithin(m, dom, 1000, metrics.DefaultBufferLimit)
	if err != nil {
		return 0, 0, 0, err
	}
	var out [3]float64
	for i, ts := range [][]kg.Triple{d.Train, d.Valid, d.Test} {
		if len(ts) == 0 {
			continue
		}
		if out[i], err = ev.LogLikelihood(ts); err != nil {
			return 0, 0, 0, err
		}
	}
	return out[0], out[1], out[2], nil
}
