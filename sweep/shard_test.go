package sweep

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"gekc/dist"
	"gekc/grid"
	"gekc/runspec"
)

// Sharded announces a shardable run to the others before training it,
// trains an energy-based one alone (announcing nothing: with no follower
// listening, announcing would block), aborts the job on an error or a
// panic, asks the sweep to stop when the group was stopped by another
// process, and announces nothing once the sweep is cancelled.
func TestShardedAnnouncesAbortsAndStops(t *testing.T) {
	type result struct {
		announced string
		aborted   error
		stopped   bool
		notes     []string
		err       error
		panicked  any
	}
	try := func(model string, ctx context.Context, run RunFunc) (r result) {
		comms := dist.Local(2)
		heard := make(chan []byte, 1)
		if runspec.Shardable(exampleSpecWith(model)) == nil && ctx.Err() == nil {
			go func() {
				msg, _ := comms[1].Broadcast(nil)
				heard <- msg
			}()
		} else {
			close(heard)
		}
		wrapped := Sharded(comms[0], run, func(err error) { r.aborted = err }, func() { r.stopped = true })
		func() {
			defer func() { r.panicked = recover() }()
			out, err := wrapped(ctx, Job{ID: "run-1", Spec: exampleSpecWith(model)})
			r.err = err
			if out != nil {
				r.notes = out.Notes
			}
		}()
		if msg, ok := <-heard; ok {
			var a announcement
			if err := json.Unmarshal(msg, &a); err != nil {
				t.Fatal(err)
			}
			r.announced = a.ID
		}
		return r
	}
	ok := func(context.Context, Job) (*Outcome, error) { return &Outcome{}, nil }
	sharded := func(_ context.Context, job Job) (*Outcome, error) {
		if job.Shard == nil || job.Shard.Size() != 2 {
			return nil, errors.New("not sharded")
		}
		return &Outcome{}, nil
	}
	if r := try("complex2", context.Background(), sharded); r.announced != "run-1" || r.err != nil || r.aborted != nil {
		t.Errorf("a squared model: %+v", r)
	}
	if r := try("complex", context.Background(), sharded); r.announced != "run-1" || r.err != nil || r.aborted != nil {
		t.Errorf("an energy model: %+v", r)
	}
	if r := try("cp2-with-samples", context.Background(), ok); r.announced != "" || r.err != nil || len(r.notes) != 1 || !strings.Contains(r.notes[0], "samples") {
		t.Errorf("a run that samples: %+v", r)
	}
	failing := func(context.Context, Job) (*Outcome, error) { return nil, errors.New("disk full") }
	if r := try("complex2", context.Background(), failing); r.aborted == nil || !strings.Contains(r.aborted.Error(), "disk full") {
		t.Errorf("a failing run: %+v", r)
	}
	panicking := func(context.Context, Job) (*Outcome, error) { panic("boom") }
	if r := try("complex2", context.Background(), panicking); r.aborted == nil || r.panicked == nil {
		t.Errorf("a panicking run: %+v", r)
	}
	stoppedElsewhere := func(context.Context, Job) (*Outcome, error) { return nil, context.Canceled }
	if r := try("complex2", context.Background(), stoppedElsewhere); !r.stopped || r.aborted != nil {
		t.Errorf("a run the group stopped: %+v", r)
	}
	done, cancel := context.WithCancel(context.Background())
	cancel()
	if r := try("complex2", done, ok); r.announced != "" || !errors.Is(r.err, context.Canceled) {
		t.Errorf("a cancelled sweep: %+v", r)
	}
}

// exampleSpecWith is exampleSpec's run of model; "-with-samples" after
// the model's name asks for samples, which a sharded run does not draw.
func exampleSpecWith(model string) (s grid.RunSpec) {
	s = exampleSpec()
	s.Model = model
	if m, ok := strings.CutSuffix(model, "-with-samples"); ok {
		s.Model, s.Samples = m, 100
	}
	return s
}
