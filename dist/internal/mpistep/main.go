// Command mpistep times the sharded step of one model over the processes
// of an MPI job on uniform random triples: per step, the wall time, the
// time inside collectives, the bytes each process sends, and each
// process's peak RSS. Rank 0 prints one JSON line (the slowest process's
// times, the largest process's bytes and RSS). Build it with -tags mpi.
//
//	mpirun -np 2 mpistep -entities 200000 -rank 100 -batch 20000 -steps 5
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"time"

	"gekc/dist"
	"gekc/dist/mpi"
	"gekc/graph"
	_ "gekc/graph/openblas" // OpenBLAS and flushed subnormals, as the command has
	"gekc/internal/procstat"
	"gekc/kg"
	"gekc/models"
	"gekc/objectives"
)

// Report is what rank 0 prints.
type Report struct {
	Model, Objective                 string
	Processes, Threads               int
	Entities, Relations, Rank, Batch int
	Steps                            int
	StepSeconds, CommSeconds         float64 // per step, after the first
	CommShare                        float64
	SentBytesPerStep                 float64
	FormulaBytesPerStep              float64 // DESIGN.md's count for this process
	PeakRSSBytes, SumPeakRSSBytes    int64
	SgemmGFLOPS                      float64
	FirstStepSeconds, InitSeconds    float64
}

func main() {
	var r Report
	flag.StringVar(&r.Model, "model", "complex2", "model (squared or non-negative)")
	flag.StringVar(&r.Objective, "objective", "pll", "pll or mle")
	flag.IntVar(&r.Entities, "entities", 200000, "entities")
	flag.IntVar(&r.Relations, "relations", 535, "relations")
	flag.IntVar(&r.Rank, "rank", 100, "rank d")
	flag.IntVar(&r.Batch, "batch", 20000, "global batch size")
	flag.IntVar(&r.Steps, "steps", 5, "timed steps after the first")
	flag.Parse()
	if err := mpi.Init(); err != nil {
		fmt.Fprintln(os.Stderr, "mpistep:", err)
		os.Exit(2)
	}
	err := run(&r)
	if ferr := mpi.Finalize(); err == nil {
		err = ferr
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "mpistep:", err)
		os.Exit(1)
	}
}

func run(r *Report) error {
	w := mpi.World{}
	r.Processes, r.Threads = w.Size(), runtime.GOMAXPROCS(0)
	if w.Rank() == 0 {
		r.SgemmGFLOPS = graph.SgemmRate()
	}
	comm := &dist.Counted{Comm: w}
	obj, err := objectives.Parse(r.Objective, objectives.Uniform)
	if err != nil {
		return err
	}
	sz := models.Sizes{Entities: r.Entities, Relations: r.Relations, Rank: r.Rank}
	t0 := time.Now()
	st, err := dist.NewStepper(comm, r.Model, sz, models.Options{Seed: 1}, obj, r.Batch, graph.NewAdam(1e-3))
	if err != nil {
		return err
	}
	runtime.GC()
	r.InitSeconds = time.Since(t0).Seconds()
	rng := rand.New(rand.NewPCG(7, 7))
	batch := make([]kg.Triple, r.Batch)
	step := func() error {
		for i := range batch {
			batch[i] = kg.Triple{S: int32(rng.IntN(r.Entities)), R: int32(rng.IntN(r.Relations)), O: int32(rng.IntN(r.Entities))}
		}
		_, err := st.Step(batch)
		return err
	}
	t0 = time.Now()
	if err := step(); err != nil {
		return err
	}
	r.FirstStepSeconds = time.Since(t0).Seconds()
	*comm = dist.Counted{Comm: w}
	t0 = time.Now()
	for range r.Steps {
		if err := step(); err != nil {
			return err
		}
	}
	n := float64(r.Steps)
	r.StepSeconds, r.CommSeconds = time.Since(t0).Seconds()/n, comm.Time.Seconds()/n
	r.SentBytesPerStep = float64(comm.Sent) / n
	r.FormulaBytesPerStep = formula(st, r)
	rss, err := procstat.PeakRSS()
	if err != nil {
		return err
	}
	// Slowest times, largest bytes and RSS over the processes, and the
	// sum of the RSS: through int64 bits (non-negative floats order as
	// their bits do).
	worst := []int64{bits(r.StepSeconds), bits(r.CommSeconds), bits(r.SentBytesPerStep), bits(r.FormulaBytesPerStep), rss}
	if err := w.MaxInt64(worst); err != nil {
		return err
	}
	total := []int64{rss}
	if err := w.SumInt64(total); err != nil {
		return err
	}
	r.StepSeconds, r.CommSeconds = float(worst[0]), float(worst[1])
	r.SentBytesPerStep, r.FormulaBytesPerStep, r.PeakRSSBytes, r.SumPeakRSSBytes = float(worst[2]), float(worst[3]), worst[4], total[0]
	r.CommShare = r.CommSeconds / r.StepSeconds
	if w.Rank() == 0 {
		b, _ := json.Marshal(r)
		fmt.Println(string(b))
	}
	return nil
}

// formula is DESIGN.md's count of the bytes one process sends in a step,
// for uniform random triples: each process's part of B/P triples reads
// about (slots·B/P) distinct rows, 1/P of them from each owner, so a
// process sends (P−1)·slots·B/P² rows of k values and receives as many
// gradients back to send... (both directions counted as sent by someone:
// here the rows out and their gradients in are each one send), plus the
// summed statistics and their gradients, the relation tables' gradients,
// the loss and the divergence count.
func formula(st *dist.Stepper, r *Report) float64 {
	m := st.Model()
	p := float64(r.Processes)
	const f = 4 // float32
	var bytes float64
	for _, name := range m.Layout.EntityTables() {
		slots := 0.0
		if name == m.Layout.Subject {
			slots++
		}
		if name == m.Layout.Object {
			slots++
		}
		k := float64(st.Param(name).Shape()[1])
		rows := (p - 1) * slots * float64(r.Batch) / (p * p)
		stat := k * k
		if m.Semantics == models.NonNegative {
			stat = 2 * k * (p - 1) / 2 // an all-gather of 1×k, in float64
		}
		bytes += 2*rows*k*f + 2*stat*f
	}
	for _, t := range m.Layout.Tables {
		if t.Name != m.Layout.Subject && t.Name != m.Layout.Object {
			bytes += float64(t.Rows*t.Cols) * f
		}
	}
	return bytes + 16 + 8
}

func bits(x float64) int64  { return int64(math.Float64bits(x)) }
func float(b int64) float64 { return math.Float64frombits(uint64(b)) }
