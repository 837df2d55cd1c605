package train

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"
)

// An epoch record survives JSON whole: a NaN loss (a distilled run's epoch
// 0, a diverged step), an epoch never validated (nil Valid, no keys
// written) and ±Inf in a metric.
func TestEpochRecordJSON(t *testing.T) {
	for _, c := range []struct {
		rec  EpochRecord
		json string
	}{
		{EpochRecord{Epoch: 3, TrainLoss: 1.5, Seconds: 2, EvalSeconds: 0.25, Valid: map[string]float64{"mrr": 0.5, "ll": math.Inf(-1)}},
			`{"epoch":3,"train_loss":1.5,"seconds":2,"eval_seconds":0.25,"valid":{"ll":"-Inf","mrr":0.5}}`},
		{EpochRecord{Epoch: 0, TrainLoss: math.NaN(), Valid: map[string]float64{"mrr": 0.25}},
			`{"epoch":0,"train_loss":"NaN","seconds":0,"valid":{"mrr":0.25}}`},
		{EpochRecord{Epoch: 2, TrainLoss: 0.1, Seconds: 4},
			`{"epoch":2,"train_loss":0.1,"seconds":4}`},
	} {
		b, err := json.Marshal(c.rec)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != c.json {
			t.Errorf("%+v encodes as %s, want %s", c.rec, b, c.json)
		}
		var back EpochRecord
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		same := back.Epoch == c.rec.Epoch && back.Seconds == c.rec.Seconds && back.EvalSeconds == c.rec.EvalSeconds &&
			(back.TrainLoss == c.rec.TrainLoss || math.IsNaN(back.TrainLoss) && math.IsNaN(c.rec.TrainLoss)) &&
			reflect.DeepEqual(back.Valid, c.rec.Valid)
		if !same {
			t.Errorf("%s decodes as %+v, want %+v", b, back, c.rec)
		}
	}
	var r EpochRecord
	if err := json.Unmarshal([]byte(`{"epoch":1,"train_loss":"much"}`), &r); err == nil {
		t.Error("a train_loss that is no number was accepted")
	}
}
