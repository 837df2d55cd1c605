package scaling

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"gekc/internal/bytesize"
	"gekc/models"
)

// The two studies a point belongs to.
const (
	StudyBatch    = "batch"    // all entities, growing batch
	StudyEntities = "entities" // fixed batch, growing |E|
)

// Options describe a study.
type Options struct {
	Models      []string // model names of the models registry
	Batches     []int    // batch sizes of the study by batch size; none skips it
	Entities    []int    // entity counts of the study by entities; none skips it
	AllEntities int      // entities of the study by batch size
	Batch       int      // batch size of the study by entities
	Relations   int      // relations of the synthetic graph
	Rank        int      // embedding size d
	Warm        int      // warm-up steps before timing, per point
	Steps       int      // timed steps per point; the median is reported
	// Timeout limits one point, model set-up included; 0 is none.
	Timeout time.Duration
	// MaxMem is the resident memory a point may use; 0 is no cap. A point
	// needing more is stopped and recorded as out of memory.
	MaxMem ByteSize
}

// DefaultOptions returns the paper's benchmark: ogbl-wikikg2 (2,500,604
// entities, 535 relations), d = 100, with a cap of 20 GiB.
func DefaultOptions() Options {
	return Options{
		Models:      []string{"complex", "complex+", "complex2"},
		Batches:     []int{100, 200, 500, 1000, 2000, 5000},
		Entities:    []int{300000, 500000, 1000000, 1500000, 2000000, 2500000},
		AllEntities: 2500604,
		Batch:       500,
		Relations:   535,
		Rank:        100,
		Warm:        2,
		Steps:       5,
		Timeout:     30 * time.Minute,
		MaxMem:      20 << 30,
	}
}

// An OptionError reports an option the study cannot use.
type OptionError struct {
	Option string // the field of Options, e.g. "Steps"
	Value  string // the value, when the message shows it
	Err    error
}

// Error reads "Option Value: Err", or "Option: Err" with no value.
func (e *OptionError) Error() string {
	if e.Value == "" {
		return e.Option + ": " + e.Err.Error()
	}
	return e.Option + " " + e.Value + ": " + e.Err.Error()
}

// Unwrap returns Err.
func (e *OptionError) Unwrap() error { return e.Err }

// ErrNoPoints is returned by Plan for options with neither batch sizes nor
// entity counts.
var ErrNoPoints = errors.New("no batch sizes and no entity counts: nothing to measure")

// A Point identifies one measurement: a row of scaling.tsv.
type Point struct {
	Study     string `json:"study"` // StudyBatch or StudyEntities
	Model     string `json:"model"`
	Entities  int    `json:"entities"`
	Relations int    `json:"relations"`
	Rank      int    `json:"rank"`
	Batch     int    `json:"batch"`
}

// String reads e.g. "batch complex2 |E|=2500604 |R|=535 d=100 B=500".
func (p Point) String() string {
	return fmt.Sprintf("%s %s |E|=%d |R|=%d d=%d B=%d", p.Study, p.Model, p.Entities, p.Relations, p.Rank, p.Batch)
}

// Plan checks the options and lists the points of the study: by batch
// size, then by entities, each ordered by size with the models
// interleaved, so that a slowly drifting machine disturbs every model
// alike. Repeated models and sizes count once. Errors are *OptionError,
// or ErrNoPoints.
func (o Options) Plan() ([]Point, error) {
	var names []string
	for _, n := range o.Models {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return nil, &OptionError{Option: "Models", Err: errors.New("no model given")}
	}
	for _, n := range names {
		if _, _, err := models.Lookup(n); err != nil {
			return nil, &OptionError{Option: "Models", Err: err}
		}
	}
	batches, entities := sortedSet(o.Batches), sortedSet(o.Entities)
	for _, c := range []struct {
		name string
		vs   []int
	}{{"Batches", batches}, {"Entities", entities}} {
		if len(c.vs) > 0 && c.vs[0] <= 0 {
			return nil, &OptionError{Option: c.name, Value: strconv.Itoa(c.vs[0]), Err: errors.New("want positive sizes")}
		}
	}
	for _, c := range []struct {
		name string
		v    int
	}{{"AllEntities", o.AllEntities}, {"Batch", o.Batch}, {"Relations", o.Relations}, {"Rank", o.Rank}, {"Steps", o.Steps}} {
		if c.v <= 0 {
			return nil, &OptionError{Option: c.name, Value: strconv.Itoa(c.v), Err: errors.New("want a positive number")}
		}
	}
	switch {
	case o.Warm < 0:
		return nil, &OptionError{Option: "Warm", Value: strconv.Itoa(o.Warm), Err: errors.New("want 0 or more")}
	case o.Timeout < 0:
		return nil, &OptionError{Option: "Timeout", Value: o.Timeout.String(), Err: errors.New("want 0 (none) or more")}
	case o.MaxMem < 0:
		return nil, &OptionError{Option: "MaxMem", Value: strconv.FormatInt(int64(o.MaxMem), 10), Err: errors.New("want 0 (none) or more")}
	case len(batches) == 0 && len(entities) == 0:
		return nil, ErrNoPoints
	}
	var plan []Point
	for _, b := range batches {
		for _, m := range names {
			plan = append(plan, Point{Study: StudyBatch, Model: m, Entities: o.AllEntities, Relations: o.Relations, Rank: o.Rank, Batch: b})
		}
	}
	for _, e := range entities {
		for _, m := range names {
			plan = append(plan, Point{Study: StudyEntities, Model: m, Entities: e, Relations: o.Relations, Rank: o.Rank, Batch: o.Batch})
		}
	}
	return plan, nil
}

// sortedSet returns xs sorted, without repeats, leaving xs alone.
func sortedSet(xs []int) []int {
	xs = slices.Clone(xs)
	slices.Sort(xs)
	return slices.Compact(xs)
}

// ByteSize is an amount of memory in bytes. As a flag.Value it reads a
// number and a unit, B, KiB, MiB, GiB, TiB or KB, MB, GB, TB, and writes
// the largest binary unit that divides it.
type ByteSize = bytesize.Size
