package train

import (
	"encoding/json"

	"gekc/internal/jsonfloat"
)

// epochJSON is an EpochRecord as run records (metrics.json) and resume
// states write it: floats that survive NaN and ±Inf, which a diverged
// epoch's loss or a distilled run's epoch-0 loss are.
type epochJSON struct {
	Epoch       int                        `json:"epoch"`
	TrainLoss   jsonfloat.Float            `json:"train_loss"`
	Seconds     jsonfloat.Float            `json:"seconds"`
	EvalSeconds jsonfloat.Float            `json:"eval_seconds,omitempty"`
	Valid       map[string]jsonfloat.Float `json:"valid,omitempty"`
}

// MarshalJSON writes the record with snake_case keys, non-finite floats as
// the strings "NaN", "+Inf" and "-Inf", and no eval_seconds or valid when
// the epoch was not validated.
func (r EpochRecord) MarshalJSON() ([]byte, error) {
	return json.Marshal(epochJSON{Epoch: r.Epoch, TrainLoss: jsonfloat.Float(r.TrainLoss), Seconds: jsonfloat.Float(r.Seconds),
		EvalSeconds: jsonfloat.Float(r.EvalSeconds), Valid: jsonfloat.Map(r.Valid)})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (r *EpochRecord) UnmarshalJSON(b []byte) error {
	var e epochJSON
	if err := json.Unmarshal(b, &e); err != nil {
		return err
	}
	*r = EpochRecord{Epoch: e.Epoch, TrainLoss: float64(e.TrainLoss), Seconds: float64(e.Seconds),
		EvalSeconds: float64(e.EvalSeconds)}
	if e.Valid != nil {
		r.Valid = jsonfloat.Unmap(e.Valid)
	}
	return nil
}
