package dist

import (
	"fmt"
	"slices"

	"gorgonia.org/tensor"
)

// update completes the gradients (sums over the processes, the rows'
// gradients back to their owners, the statistics' gradients on to the own
// rows) and steps the optimiser on this process's parameters.
func (st *Stepper) update() error {
	entity := st.m.Layout.EntityTables()
	for _, name := range st.m.ParamNames() {
		if !slices.Contains(entity, name) {
			if err := sum(st.comm, st.grads[name].Value().(*tensor.Dense)); err != nil {
				return err
			}
		}
	}
	for _, t := range st.tables {
		if err := sum(st.comm, t.statGrad.Value().(*tensor.Dense)); err != nil {
			return err
		}
		if err := st.statBackward(t); err != nil {
			return err
		}
		if err := st.returnRows(t); err != nil {
			return err
		}
	}
	var params, grads []*tensor.Dense
	for _, name := range st.m.ParamNames() {
		params = append(params, st.params[name])
		grads = append(grads, st.gradOf(name))
	}
	return st.stepOptimizer(params, grads)
}

// gradOf returns the complete gradient of this process's part of a table.
func (st *Stepper) gradOf(name string) *tensor.Dense {
	for _, t := range st.tables {
		if t.name == name {
			return t.grad
		}
	}
	return st.grads[name].Value().(*tensor.Dense)
}

// sum sums a tensor over the processes in place.
func sum(c Comm, t *tensor.Dense) error {
	switch x := t.Data().(type) {
	case []float32:
		return c.SumFloat32(x)
	case []float64:
		return c.SumFloat64(x)
	}
	return fmt.Errorf("dist: dtype %v", t.Dtype())
}
