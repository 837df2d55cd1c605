// Package jsonfloat is a float64 that survives JSON with NaN and ±Inf,
// which encoding/json refuses: a diverged run's loss, or the epoch-0 loss of
// a distilled run, is exactly such a value, and metrics.json and resume
// states must record it, not lose it. They are written as the strings
// "NaN", "+Inf" and "-Inf".
package jsonfloat

import (
	"fmt"
	"math"
	"strconv"
)

// Float is a float64 whose JSON form may be "NaN", "+Inf" or "-Inf".
type Float float64

// MarshalJSON writes finite values as numbers, the others as strings.
func (f Float) MarshalJSON() ([]byte, error) {
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

// UnmarshalJSON reads a number, "NaN" (or null), "+Inf" (or "Inf") or "-Inf".
func (f *Float) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case `"NaN"`, "null":
		*f = Float(math.NaN())
		return nil
	case `"+Inf"`, `"Inf"`:
		*f = Float(math.Inf(1))
		return nil
	case `"-Inf"`:
		*f = Float(math.Inf(-1))
		return nil
	}
	x, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return fmt.Errorf("not a number: %s", b)
	}
	*f = Float(x)
	return nil
}

// Map converts a map of float64 (nil stays nil).
func Map(m map[string]float64) map[string]Float {
	if m == nil {
		return nil
	}
	out := make(map[string]Float, len(m))
	for k, v := range m {
		out[k] = Float(v)
	}
	return out
}

// Unmap converts back to a map of float64.
func Unmap(m map[string]Float) map[string]float64 {
	out := make(map[string]float64, len(m))
	for k, v := range m {
		out[k] = float64(v)
	}
	return out
}
