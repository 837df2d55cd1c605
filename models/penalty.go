package models

import (
	"fmt"

	"gekc/graph"

	G "gorgonia.org/gorgonia"
)

// LpPenalty returns, for each triple of the batch, Σ_v Σ_j |x_{v,j}|^p
// over the parameter rows x_v the triple reads in its three slots, with
// |·| the modulus of a number packed in parts (ModulusScore; ComplEx's
// complex entries), else the absolute value of each entry: the weighted
// Lp regularisers of KGE training, N3 (p = 3, Lacroix et al. 2018) and
// F2 (p = 2). Tables no slot reads by row (TuckER's core) are not in it.
//
// The non-negative models have none: their parameters are log-values
// (or, for ComplEx+, a log-value and a gate), whose magnitude is not the
// circuit's.
func (c *Circuit) LpPenalty(b *Batch, p float64) (*G.Node, error) {
	if c.m.Semantics == NonNegative {
		return nil, fmt.Errorf("models: %s has no Lp penalty: its parameters are log-values", c.m.Name)
	}
	var e graph.Builder
	var terms G.Nodes
	for _, v := range Vars {
		parts := 1
		if ms, ok := c.m.Score.(ModulusScore); ok {
			parts = ms.ModulusParts(v)
		}
		terms = append(terms, e.RowModulusPowers(e.Use(b.input(v)), parts, p))
	}
	return e.Result(e.AddAll(terms...))
}
