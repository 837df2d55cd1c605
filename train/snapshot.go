package train

import (
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
		copyDense(t, m.Param(n))
	}
}

func (s snapshot) restore(m *models.Model) {
	for n, t := range s {
		copyDense(m.Param(n), t)
	}
}

func copyDense(dst, src *tensor.Dense) {
	switch d := dst.Data().(type) {
	case []float32:
		copy(d, src.Data().([]float32))
	case []float64:
		copy(d, src.Data().([]float64))
	}
}
