package train

import (
	"gekc/graph"
	"gekc/models"

	"gorgonia.org/tensor"
)

// snapshot holds a copy of a model's parameters.
type snapshot map[string]*tensor.Dense

func snapshotOf(m *models.Model) snapshot {
	s := snapshot{}
	for _, n := range m.ParamNames() {
		s[n] = m.Param(n).Clone().(*tensor.Dense)
	}
	return s
}

func (s snapshot) take(m *models.Model) {
	for n, t := range s {
		graph.CopyValues(t, m.Param(n))
	}
}

func (s snapshot) restore(m *models.Model) {
	for n, t := range s {
		graph.CopyValues(m.Param(n), t)
	}
}
