package resultsdir

import (
	"math"
	"testing"

	"gekc/grid"
	"gekc/internal/jsonfloat"
)

// The sampled parameters' test LL is there only when finite or −Inf: a
// NaN or +Inf LL (an underflowing Z) is none; a run sampling the best-LL
// parameters reads ll_at_best_ll.
func TestSampledLL(t *testing.T) {
	rec := func(sampleFrom string, test map[string]float64) *Record {
		spec := grid.DefaultRunSpec()
		spec.SampleFrom = sampleFrom
		return &Record{Spec: spec, Test: jsonfloat.Map(test)}
	}
	for _, c := range []struct {
		r    *Record
		want float64
		ok   bool
	}{
		{rec("", map[string]float64{"ll": -9.5}), -9.5, true},
		{rec("", map[string]float64{"ll": math.NaN()}), 0, false},
		{rec("", map[string]float64{"ll": math.Inf(1)}), 0, false},
		{rec("", map[string]float64{"ll": math.Inf(-1)}), math.Inf(-1), true},
		{rec("", map[string]float64{}), 0, false},
		{rec("ll", map[string]float64{"ll": -9.5, "ll_at_best_ll": -9.2}), -9.2, true},
	} {
		if got, ok := c.r.SampledLL(); ok != c.ok || (ok && got != c.want) {
			t.Errorf("SampledLL(%v) = %v, %v; want %v, %v", c.r.Test, got, ok, c.want, c.ok)
		}
	}
}
