package graph

import (
	"fmt"

	G "gorgonia.org/gorgonia"
)

// Program is a graph compiled once for fixed shapes and run many times.
// Inputs are re-bound by writing into their tensors in place (see Input);
// every op writes into a buffer it owns, so a run allocates almost nothing.
type Program struct {
	outputs G.Nodes
	vm      G.VM
}

// Compile prepares the part of the graph that the outputs depend on; nodes
// nobody asked for (say, a gradient that is not needed) are never run.
func Compile(outputs ...*G.Node) (*Program, error) {
	if len(outputs) == 0 {
		return nil, fmt.Errorf("graph.Compile: no outputs")
	}
	g := outputs[0].Graph()
	sub := g.ExactSubgraphRoots(outputs...)
	var inputs G.Nodes
	for _, n := range sub.AllNodes() {
		if n.IsVar() {
			inputs = append(inputs, n)
		}
	}
	prog, locMap, err := G.CompileFunction(g, inputs, outputs)
	if err != nil {
		return nil, fmt.Errorf("graph.Compile: %w", err)
	}
	return &Program{outputs: outputs, vm: G.NewTapeMachine(g, G.WithPrecompiled(prog, locMap))}, nil
}

// Run executes the program once; afterwards each output node's Value holds
// its result (valid until the next Run).
func (p *Program) Run() error {
	defer p.vm.Reset()
	return p.vm.RunAll()
}

// Close releases the machine.
func (p *Program) Close() error { return p.vm.Close() }
