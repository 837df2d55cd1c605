package train

import (
	"errors"
	"math"
	"testing"

	"gekc/graph"
	"gekc/kg"
	"gekc/models"
	"gekc/objectives"

	"gorgonia.org/tensor"
)

// Step reports divergence for an infinite loss as for a NaN one: here a
// non-negative model gives the batch's triples probability zero (subject
// 0's log-features are −Inf), so the MLE loss is +Inf.
func TestStepReportsInfiniteLoss(t *testing.T) {
	m, err := models.New("cp+", models.Sizes{Entities: 4, Relations: 2, Rank: 2}, models.Options{Seed: 1, Dtype: tensor.Float64})
	if err != nil {
		t.Fatal(err)
	}
	subj := m.Param("subject").Data().([]float64)
	subj[0], subj[1] = math.Inf(-1), math.Inf(-1)
	st, err := NewStepper(m, objectives.MLE{}, 2, graph.NewAdam(0.01))
	if err != nil {
		t.Fatal(err)
	}
	loss, err := st.Step([]kg.Triple{{S: 0, R: 0, O: 1}, {S: 0, R: 1, O: 2}})
	if !errors.Is(err, ErrDiverged) || !math.IsInf(loss, 1) {
		t.Errorf("loss %v, error %v; want +Inf and ErrDiverged", loss, err)
	}
}
