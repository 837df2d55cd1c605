package sweep

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"gekc/grid"
	"gekc/resultsdir"
	"gekc/sweep/sweeptest"
)

// A sweep trains only its selection of the grid's runs, each in its
// directory of Out, on DataRoot, with Options.Samples in place of the
// grid's samples: in the job and in config.toml, the run's ID unchanged.
func TestSelectionAndSamplesOverride(t *testing.T) {
	ts := newToySweep(t)
	ids := ts.ids()
	selected := []string{ids[3], ids[10], ids[11]}
	fake := newFake()
	s := New(ts.g, []grid.Run{ts.g.Runs[3], ts.g.Runs[10], ts.g.Runs[11]},
		Options{Out: ts.out, DataRoot: ts.data, Run: fake.run, Samples: 7, Quiet: true})
	must(t, s.Prepare())
	if tally := s.Run(context.Background()); tally != (Tally{Finished: 3}) {
		t.Fatalf("%+v; want the 3 selected runs finished", tally)
	}
	sweeptest.EachRowOnce(t, ts.out, selected)
	for _, id := range ids {
		want := 0
		if slices.Contains(selected, id) {
			want = 1
		}
		if n := fake.Calls(id); n != want {
			t.Errorf("%s trained %d times, want %d", id, n, want)
		}
	}
	for _, id := range selected {
		job, dir := fake.jobs[id], filepath.Join(ts.out, resultsdir.RunsDirName, id)
		if job.Spec.Samples != 7 || job.ID != id || job.DataRoot != ts.data || job.RunDir != dir {
			t.Errorf("job %s: samples %d, data %q, directory %q", job.ID, job.Spec.Samples, job.DataRoot, job.RunDir)
		}
		spec, err := resultsdir.ReadConfig(filepath.Join(dir, resultsdir.ConfigName))
		must(t, err)
		if spec.Samples != 7 || spec.ID() != id {
			t.Errorf("config.toml of %s: samples %d, ID %s", id, spec.Samples, spec.ID())
		}
	}
}

// Options' zero value keeps the samples each run's grid asks for; Samples
// > 0 replaces them and NoSamples drops them (the command's -samples N and
// -samples 0).
func TestSamplesOptions(t *testing.T) {
	for _, c := range []struct {
		name string
		o    Options
		want int
	}{
		{"zero value", Options{}, 11},
		{"negative", Options{Samples: -1}, 11},
		{"override", Options{Samples: 7}, 7},
		{"none", Options{NoSamples: true}, 0},
		{"none wins", Options{Samples: 7, NoSamples: true}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			ts := newToySweep(t)
			r := ts.g.Runs[0]
			r.Spec.Samples = 11
			fake := newFake()
			c.o.Out, c.o.DataRoot, c.o.Run, c.o.Quiet = ts.out, ts.data, fake.run, true
			s := New(ts.g, []grid.Run{r}, c.o)
			must(t, s.Prepare())
			if tally := s.Run(context.Background()); tally != (Tally{Finished: 1}) {
				t.Fatalf("%+v; want the run finished", tally)
			}
			if got := fake.jobs[r.ID].Spec.Samples; got != c.want {
				t.Errorf("the run sampled %d triples, want %d", got, c.want)
			}
		})
	}
}
