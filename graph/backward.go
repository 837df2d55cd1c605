package graph

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Backward builds the gradient of the scalar cost with respect to each node
// in wrt and returns the gradient nodes in the same order.
//
// It plays the role of Gorgonia's G.Grad, calling each op's SymDiff, with two
// differences that matter for embedding tables: a Gather contributes its
// rows sparsely, and the contributions of a node used several times are
// summed by one fused op (adding in place into an owned buffer when that is
// safe) instead of a chain of allocating Adds.
func Backward(cost *G.Node, wrt ...*G.Node) (G.Nodes, error) {
	if !isScalarNode(cost) {
		return nil, fmt.Errorf("graph.Backward: cost must be a scalar, got shape %v", cost.Shape())
	}
	// AddNode stores a clone of a constant and returns it: the seed must be
	// that clone, or ops applied to it alone (the cost c·x of a PLL with one
	// weighted term) find no graph.
	seed := cost.Graph().AddNode(G.NewConstant(oneOf(cost.Dtype()), G.WithName("∂cost")))
	return backward(cost, seed, wrt)
}

// BackwardFrom builds the vector-Jacobian products ⟨upstream, ∂out/∂w⟩ for
// each node w in wrt: the backward pass seeded with upstream, a node of
// out's shape, as the gradient of out. Nothing of it reads out's value
// unless an op's derivative does (a Gram matrix's does not), so a program
// of these nodes need not compute out again.
func BackwardFrom(out, upstream *G.Node, wrt ...*G.Node) (G.Nodes, error) {
	if !out.Shape().Eq(upstream.Shape()) || out.Dtype() != upstream.Dtype() {
		return nil, fmt.Errorf("graph.BackwardFrom: upstream %v %v for an output %v %v", upstream.Shape(), upstream.Dtype(), out.Shape(), out.Dtype())
	}
	return backward(out, upstream, wrt)
}

func backward(cost, seed *G.Node, wrt G.Nodes) (G.Nodes, error) {
	g := cost.Graph()
	sorted, err := G.Sort(g)
	if err != nil {
		return nil, fmt.Errorf("graph.Backward: %w", err)
	}
	// A node needs a gradient when it lies on a path from a wrt node to the cost.
	ancestorsOfCost := reachable(g, cost)
	dependsOnWRT := map[*G.Node]bool{}
	for _, w := range wrt {
		dependsOnWRT[w] = true
	}
	for i := len(sorted) - 1; i >= 0; i-- { // children before parents
		n := sorted[i]
		for _, c := range children(g, n) {
			if dependsOnWRT[c] {
				dependsOnWRT[n] = true
				break
			}
		}
	}
	for _, w := range wrt {
		if !ancestorsOfCost[w] {
			return nil, fmt.Errorf("graph.Backward: the cost does not depend on %v", w)
		}
	}

	contribs := map[*G.Node]*contribution{}
	add := func(n *G.Node) *contribution {
		c := contribs[n]
		if c == nil {
			c = &contribution{}
			contribs[n] = c
		}
		return c
	}
	add(cost).dense = append(add(cost).dense, seed)

	grads := map[*G.Node]*G.Node{}
	for _, n := range sorted {
		if !ancestorsOfCost[n] || !dependsOnWRT[n] {
			continue
		}
		c := contribs[n]
		if c == nil {
			return nil, fmt.Errorf("graph.Backward: no gradient reaches %v", n)
		}
		grad, err := c.sum(n, contribs)
		if err != nil {
			return nil, err
		}
		grads[n] = grad
		if n.Op() == nil || n.IsVar() {
			continue
		}
		op, ok := n.Op().(G.SDOp)
		if !ok {
			return nil, fmt.Errorf("graph.Backward: %v has no symbolic derivative", n.Op())
		}
		kids := children(g, n)
		needs := make([]bool, len(kids))
		anyNeeded := false
		diff := op.DiffWRT(len(kids))
		for i, k := range kids {
			needs[i] = diff[i] && ancestorsOfCost[k] && dependsOnWRT[k]
			anyNeeded = anyNeeded || needs[i]
		}
		if !anyNeeded {
			continue
		}
		if sg, ok := n.Op().(sparseGrader); ok && needs[0] {
			rows, idx := sg.sparseGrad(kids, grad)
			add(kids[0]).sparse = append(add(kids[0]).sparse, rows, idx)
			continue
		}
		kg, err := op.SymDiff(kids, n, grad)
		if err != nil {
			return nil, fmt.Errorf("graph.Backward: differentiating %v: %w", n.Op(), err)
		}
		for i, k := range kids {
			if needs[i] {
				if kg[i] == nil {
					return nil, fmt.Errorf("graph.Backward: %v returned no gradient for input %d", n.Op(), i)
				}
				add(k).dense = append(add(k).dense, kg[i])
			}
		}
	}
	out := make(G.Nodes, len(wrt))
	for i, w := range wrt {
		out[i] = grads[w]
	}
	return out, nil
}

// contribution collects the gradient terms flowing into one node.
type contribution struct {
	dense  G.Nodes
	sparse G.Nodes // rows, idx, rows, idx, ...
}

func (c *contribution) sum(n *G.Node, all map[*G.Node]*contribution) (*G.Node, error) {
	if len(c.sparse) == 0 && len(c.dense) == 1 {
		return c.dense[0], nil
	}
	if n.Dims() != 2 && len(c.sparse) > 0 {
		return nil, fmt.Errorf("graph.Backward: sparse gradient into non-matrix %v", n)
	}
	op := &accumulateOp{base: newBase("AccumulateGrad"), nDense: len(c.dense), nSparse: len(c.sparse) / 2, shape: n.Shape()}
	if len(c.dense) > 0 && canOverwrite(c.dense[0], all) {
		op.inPlace = true
	}
	ins := append(append(G.Nodes{}, c.dense...), c.sparse...)
	return apply(op, ins...)
}

// canOverwrite reports whether d's buffer may receive the sum: its op owns
// it and d feeds nothing but this one accumulation.
func canOverwrite(d *G.Node, all map[*G.Node]*contribution) bool {
	if o, ok := d.Op().(interface{ ownsOutput() bool }); !ok || !o.ownsOutput() {
		return false
	}
	if d.Graph().To(d.ID()).Len() != 0 {
		return false
	}
	uses := 0
	for _, c := range all {
		for _, x := range c.dense {
			if x == d {
				uses++
			}
		}
		for _, x := range c.sparse {
			if x == d {
				uses++
			}
		}
	}
	return uses == 1
}

func oneOf(dt tensor.Dtype) any {
	if dt == tensor.Float32 {
		return float32(1)
	}
	return float64(1)
}

func children(g *G.ExprGraph, n *G.Node) G.Nodes {
	it := g.From(n.ID())
	var out G.Nodes
	for it.Next() {
		out = append(out, it.Node().(*G.Node))
	}
	return out
}

func reachable(g *G.ExprGraph, root *G.Node) map[*G.Node]bool {
	seen := map[*G.Node]bool{root: true}
	stack := G.Nodes{root}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, c := range children(g, n) {
			if !seen[c] {
				seen[c] = true
				stack = append(stack, c)
			}
		}
	}
	return seen
}
