package train

import (
	"errors"
	"fmt"
	"math"

	"gekc/graph"
	"gekc/kg"
	"gekc/models"
	"gekc/objectives"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// ErrDiverged reports a non-finite loss or gradient.
var ErrDiverged = errors.New("training diverged: non-finite loss or gradient")

// Stepper is one optimisation step of a model under an objective, compiled
// once for a fixed batch size. A shorter last batch is padded with weight
// zero, so every step runs the same program.
type Stepper struct {
	*stepGraph
	batch  int
	params []*tensor.Dense
	gvals  []*tensor.Dense
	prog   *graph.Program
	opt    graph.Optimizer
}

// stepGraph is a step's loss and gradient graph, before it is compiled.
type stepGraph struct {
	m     *models.Model
	bb    *models.BoundBatch // the index vectors the program reads
	w     *tensor.Dense
	loss  *G.Node
	grads G.Nodes
}

// NewStepper builds the loss and gradient graph of m for batches of size
// batch, whose parameters opt updates (e.g. graph.NewAdam(1e-3)).
func NewStepper(m *models.Model, obj objectives.Objective, batch int, opt graph.Optimizer) (*Stepper, error) {
	return NewConstrainedStepper(m, nil, obj, batch, opt)
}

// NewConstrainedStepper trains the product of m with the domain constraint
// d (nil: none): the objective's queries, and so constrained PLL or MLE,
// are answered by the constrained circuit.
func NewConstrainedStepper(m *models.Model, d *models.Domain, obj objectives.Objective, batch int, opt graph.Optimizer) (*Stepper, error) {
	if opt == nil {
		return nil, fmt.Errorf("train: no optimiser")
	}
	sg, err := buildStep(m, d, obj, batch)
	if err != nil {
		return nil, err
	}
	st := &Stepper{stepGraph: sg, batch: batch, opt: opt}
	if st.prog, err = graph.Compile(append(G.Nodes{st.loss}, st.grads...)...); err != nil {
		return nil, err
	}
	for _, n := range m.ParamNames() {
		st.params = append(st.params, m.Param(n))
	}
	return st, nil
}

// buildStep builds the loss and gradient graph of a step; nothing of its
// size is allocated until it is compiled and run.
func buildStep(m *models.Model, d *models.Domain, obj objectives.Objective, batch int) (*stepGraph, error) {
	if batch <= 0 {
		return nil, fmt.Errorf("train: batch size %d", batch)
	}
	bb, err := m.BindBatch(d, batch)
	if err != nil {
		return nil, err
	}
	sg := &stepGraph{m: m, bb: bb}
	c, b, g := bb.Circuit, bb.Batch, bb.Circuit.Graph()
	sg.w = tensor.New(tensor.Of(m.Dtype), tensor.WithShape(batch))
	wn := G.NewVector(g, m.Dtype, G.WithShape(batch), G.WithName("weights"), G.WithValue(sg.w))
	if sg.loss, err = obj.Loss(c, b, wn); err != nil {
		return nil, err
	}
	if sg.grads, err = graph.Backward(sg.loss, c.Params()...); err != nil {
		return nil, err
	}
	return sg, nil
}

// BatchSize returns the compiled batch size.
func (st *Stepper) BatchSize() int { return st.batch }

// Optimizer returns the optimiser (its slots are part of a resumable state).
func (st *Stepper) Optimizer() graph.Optimizer { return st.opt }

// Step trains on up to BatchSize triples and returns the batch's mean loss.
// It returns ErrDiverged when the loss or a gradient is not finite; the
// parameters are then not to be trusted.
func (st *Stepper) Step(batch []kg.Triple) (float64, error) {
	if len(batch) == 0 || len(batch) > st.batch {
		return 0, fmt.Errorf("train: step on %d triples with batch size %d", len(batch), st.batch)
	}
	// Padding rows repeat a real triple: their weight is zero, and a
	// finite loss times zero keeps the batch's loss and gradients finite
	// where an arbitrary triple (one a constraint rules out) might not.
	n := st.bb.Load(batch, batch[0])
	switch w := st.w.Data().(type) {
	case []float32:
		for i := range w {
			w[i] = float32(bool2f(i < n) / float64(n))
		}
	case []float64:
		for i := range w {
			w[i] = bool2f(i < n) / float64(n)
		}
	}
	if err := st.prog.Run(); err != nil {
		return 0, err
	}
	loss := graph.Scalar(st.loss.Value())
	if math.IsNaN(loss) || math.IsInf(loss, 0) {
		return loss, ErrDiverged
	}
	st.gvals = st.gvals[:0]
	for _, g := range st.grads {
		st.gvals = append(st.gvals, g.Value().(*tensor.Dense))
	}
	bad, err := st.opt.Step(st.params, st.gvals)
	if err != nil {
		return loss, err
	}
	if bad > 0 {
		return loss, ErrDiverged
	}
	return loss, nil
}

func bool2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
