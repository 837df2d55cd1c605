package ckpt

import (
	"fmt"
	"math"
	"strconv"
)

// jsonFloat survives NaN and ±Inf, which encoding/json refuses: the loss of
// a diverged epoch, or the epoch-0 loss of a distilled run, is such a value.
// They are written as the strings "NaN", "+Inf" and "-Inf", as the command
// writes them in metrics.json.
type jsonFloat float64

func (f jsonFloat) MarshalJSON() ([]byte, error) {
	x := float64(f)
	switch {
	case math.IsNaN(x):
		return []byte(`"NaN"`), nil
	case math.IsInf(x, 1):
		return []byte(`"+Inf"`), nil
	case math.IsInf(x, -1):
		return []byte(`"-Inf"`), nil
	}
	return []byte(strconv.FormatFloat(x, 'g', -1, 64)), nil
}

func (f *jsonFloat) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case `"NaN"`, "null":
		*f = jsonFloat(math.NaN())
		return nil
	case `"+Inf"`, `"Inf"`:
		*f = jsonFloat(math.Inf(1))
		return nil
	case `"-Inf"`:
		*f = jsonFloat(math.Inf(-1))
		return nil
	}
	x, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return fmt.Errorf("not a number: %s", b)
	}
	*f = jsonFloat(x)
	return nil
}

func toJSONMap(m map[string]float64) map[string]jsonFloat {
	if m == nil {
		return nil
	}
	out := make(map[string]jsonFloat, len(m))
	for k, v := range m {
		out[k] = jsonFloat(v)
	}
	return out
}

func fromJSONMap(m map[string]jsonFloat) map[string]float64 {
	out := make(map[string]float64, len(m))
	for k, v := range m {
		out[k] = float64(v)
	}
	return out
}
