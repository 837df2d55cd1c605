package resultsdir

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"gekc/kg"
	"gekc/models"
)

func nations(t *testing.T) *kg.Dataset {
	t.Helper()
	ds, err := kg.Load(filepath.Join("..", "data", "nations"))
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// Samples drawn from a model survive writing and reading back, and are
// the same for the same seed.
func TestSamplesRoundTrip(t *testing.T) {
	ds := nations(t)
	m, err := models.New("cp2", models.Sizes{Entities: ds.Entities.Len(), Relations: ds.Relations.Len(), Rank: 3}, models.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	ts, _, err := Sample(m, nil, 50, 7)
	if err != nil {
		t.Fatal(err)
	}
	again, _, err := Sample(m, nil, 50, 7)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ts, again) {
		t.Errorf("two samples with seed 7 differ")
	}
	path := filepath.Join(t.TempDir(), SamplesName)
	if err := WriteSamples(path, ds, ts); err != nil {
		t.Fatal(err)
	}
	back, err := ReadSamples(path, ds)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, ts) {
		t.Errorf("read back %v, wrote %v", back, ts)
	}
}

func TestReadSamplesErrors(t *testing.T) {
	ds := nations(t)
	e, r := ds.Entities.Name(0), ds.Relations.Name(0)
	for _, c := range []struct{ name, text, want string }{
		{"two fields", e + "\t" + r + "\t" + e + "\n" + e + "\t" + r + "\n", ":2: expected 3 tab-separated fields"},
		{"unknown entity", e + "\t" + r + "\tnowhere\n", ":1: unknown entity or relation"},
		{"unknown relation", e + "\tnothing\t" + e + "\n", ":1: unknown entity or relation"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), SamplesName)
			if err := os.WriteFile(path, []byte(c.text), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := ReadSamples(path, ds); err == nil || !strings.Contains(err.Error(), path+c.want) {
				t.Errorf("error %v, want %q", err, path+c.want)
			}
		})
	}
}
