package resultsdir

import (
	"path/filepath"
	"reflect"
	"testing"
)

func TestConfigRoundTrip(t *testing.T) {
	s := exampleSpec()
	s.PLLWeights.Relation = 0.25
	s.Eval.Hits = []int{1, 5}
	s.DistillFrom = "cp-pll-d200-b1000-lr0.001-s0-00000000"
	path := filepath.Join(t.TempDir(), ConfigName)
	must(t, WriteConfig(path, s))
	got, err := ReadConfig(path)
	must(t, err)
	if !reflect.DeepEqual(got, s) {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, s)
	}
	if got.ID() != s.ID() {
		t.Errorf("ID changed in the round trip")
	}
}
