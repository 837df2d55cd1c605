package scaling

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"time"

	"gekc/graph"
	"gekc/internal/procstat"
	"gekc/kg"
	"gekc/objectives"
	"gekc/train"

	"gorgonia.org/tensor"
)

// job is what a child process measures: the JSON in $GEKC_SCALING_POINT.
type job struct {
	Point
	Warm  int    `json:"warm"`
	Steps int    `json:"steps"`
	Seed  uint64 `json:"seed"`
}

// childReport is what a child process that measured its point prints.
type childReport struct {
	StepMS     []float64 `json:"step_ms"`  // every timed step
	PeakRSS    int64     `json:"peak_rss"` // bytes; VmHWM at the end
	GOMAXPROCS int       `json:"gomaxprocs"`
}

// A SpecError reports a value of ChildEnv that is not a point of a study.
type SpecError struct{ Err error }

// Error names the variable and says what is wrong with its value.
func (e *SpecError) Error() string { return "$" + ChildEnv + ": " + e.Err.Error() }

// Unwrap returns the decoding error.
func (e *SpecError) Unwrap() error { return e.Err }

// RunChild is the child process of a Study: it measures the point that
// spec, the value of $GEKC_SCALING_POINT, describes and prints its report
// on stdout for the study to read. A spec that cannot be read is a
// *SpecError; any other error, the point's failure, is the study's to
// record from the first line the child prints on stderr.
func RunChild(spec string, stdout io.Writer) error {
	var j job
	if err := json.Unmarshal([]byte(spec), &j); err != nil {
		return &SpecError{err}
	}
	rep, err := measureJob(j)
	if err != nil {
		return err
	}
	return json.NewEncoder(stdout).Encode(rep)
}

// measureJob times j.Warm+j.Steps training steps of a fresh model on
// random triples, reporting the last j.Steps: the first steps allocate the
// program's buffers and warm the caches.
func measureJob(j job) (*childReport, error) {
	if j.Batch <= 0 || j.Steps <= 0 || j.Warm < 0 {
		return nil, fmt.Errorf("scaling point %v: %d steps after %d warm-up: want a positive batch and steps, and warm-up 0 or more",
			j.Point, j.Steps, j.Warm)
	}
	m, err := train.NewModel(train.Config{Model: j.Model, Rank: j.Rank, Seed: j.Seed, Dtype: tensor.Float32}, j.Entities, j.Relations)
	if err != nil {
		return nil, err
	}
	st, err := train.NewStepper(m, objectives.PLL{Weights: objectives.Uniform}, j.Batch, graph.NewAdam(lr))
	if err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(j.Seed, 0))
	triples := make([]kg.Triple, j.Batch)
	rep := &childReport{GOMAXPROCS: runtime.GOMAXPROCS(0)}
	for i := range j.Warm + j.Steps {
		for k := range triples {
			triples[k] = kg.Triple{S: int32(rng.IntN(j.Entities)), R: int32(rng.IntN(j.Relations)), O: int32(rng.IntN(j.Entities))}
		}
		start := time.Now()
		// A diverged step (train.ErrDiverged) is an error too: it skips
		// the Adam update, so it is not the step to time.
		if _, err := st.Step(triples); err != nil {
			return nil, fmt.Errorf("step %d: %w", i+1, err)
		}
		elapsed := time.Since(start)
		if i >= j.Warm {
			rep.StepMS = append(rep.StepMS, float64(elapsed)/float64(time.Millisecond))
		}
	}
	if rep.PeakRSS, err = procstat.PeakRSS(); err != nil {
		rep.PeakRSS = 0 // unknown; the parent falls back on rusage
	}
	return rep, nil
}
