package jsonfloat

import (
	"encoding/json"
	"math"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	for _, x := range []float64{0, -1.5, 1e-300, math.MaxFloat64, math.Inf(1), math.Inf(-1), math.NaN()} {
		b, err := json.Marshal(Float(x))
		if err != nil {
			t.Fatal(err)
		}
		var y Float
		if err := json.Unmarshal(b, &y); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if !(float64(y) == x || math.IsNaN(x) && math.IsNaN(float64(y))) {
			t.Errorf("%v → %s → %v", x, b, y)
		}
	}
	var y Float
	if err := json.Unmarshal([]byte(`"many"`), &y); err == nil {
		t.Error(`"many" read as a number`)
	}
	if Map(nil) != nil {
		t.Error("Map(nil) is not nil")
	}
	if got := Unmap(Map(map[string]float64{"mrr": 0.5})); got["mrr"] != 0.5 {
		t.Errorf("Unmap(Map) = %v", got)
	}
}
