package train

import (
	"testing"

	"gorgonia.org/tensor"
)

func TestParseDtype(t *testing.T) {
	for _, c := range []struct {
		name string
		want tensor.Dtype
		ok   bool
	}{{"float32", tensor.Float32, true}, {"", tensor.Float32, true}, {"float64", tensor.Float64, true}, {"float16", tensor.Dtype{}, false}} {
		got, err := ParseDtype(c.name)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("ParseDtype(%q) = %v, %v", c.name, got, err)
		}
	}
}
