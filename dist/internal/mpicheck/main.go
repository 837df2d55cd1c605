// Command mpicheck trains tiny models sharded over the processes of an MPI
// job (dist.Stepper on mpi.World) and, on every process, the same model on
// one process (train.Stepper), and prints on rank 0 one JSON line per case
// with the largest relative differences of the losses and parameters. It
// exits 1 when a difference passes its dtype's tolerance. dist's tests run
// it under mpirun; build it with -tags mpi.
//
//	mpirun -np 3 mpicheck -steps 12
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"

	"gekc/dist"
	"gekc/dist/mpi"
	"gekc/graph"
	"gekc/kg"
	"gekc/models"
	"gekc/objectives"
	"gekc/train"

	"gorgonia.org/tensor"
)

// Case is one model trained both ways, and what rank 0 reports of it.
type Case struct {
	Model, Objective, Dtype string
	Processes, Steps        int
	LossRel, ParamRel       float64 // largest relative differences
	Tolerance               float64
}

func main() {
	steps := flag.Int("steps", 12, "steps of batch 7 over a 30-triple graph (epochs wrap)")
	flag.Parse()
	if err := mpi.Init(); err != nil {
		fmt.Fprintln(os.Stderr, "mpicheck:", err)
		os.Exit(2)
	}
	code := 0
	if err := run(*steps, &code); err != nil {
		fmt.Fprintln(os.Stderr, "mpicheck:", err)
		code = 2
	}
	if err := mpi.Finalize(); err != nil {
		fmt.Fprintln(os.Stderr, "mpicheck:", err)
		code = 2
	}
	os.Exit(code)
}

func run(steps int, code *int) error {
	w := mpi.World{}
	for _, c := range cases() {
		c.Processes, c.Steps = w.Size(), steps
		if err := compare(w, &c); err != nil {
			return fmt.Errorf("%s %s %s: %w", c.Model, c.Objective, c.Dtype, err)
		}
		if c.LossRel > c.Tolerance || c.ParamRel > 10*c.Tolerance || math.IsNaN(c.LossRel+c.ParamRel) {
			*code = 1
		}
		if w.Rank() == 0 {
			b, _ := json.Marshal(c)
			fmt.Println(string(b))
		}
	}
	return nil
}

func cases() []Case {
	return []Case{
		{Model: "cp2", Objective: "pll", Dtype: "float64", Tolerance: 1e-10},
		{Model: "complex2", Objective: "mle", Dtype: "float64", Tolerance: 1e-10},
		{Model: "complex+", Objective: "pll", Dtype: "float64", Tolerance: 1e-10},
		{Model: "tucker2", Objective: "mle", Dtype: "float64", Tolerance: 1e-10},
		{Model: "complex2", Objective: "pll", Dtype: "float32", Tolerance: 1e-5},
		{Model: "cp+", Objective: "mle", Dtype: "float32", Tolerance: 1e-5},
	}
}

// compare trains c both ways and records the differences.
func compare(w mpi.World, c *Case) error {
	const entities, relations, batch = 10, 3, 7
	rng := rand.New(rand.NewPCG(17, 1))
	data := make([]kg.Triple, 30)
	for i := range data {
		data[i] = kg.Triple{S: int32(rng.IntN(entities)), R: int32(rng.IntN(relations)), O: int32(rng.IntN(entities))}
	}
	sz := models.Sizes{Entities: entities, Relations: relations, Rank: 3}
	opt := models.Options{Seed: 3, Dtype: tensor.Float32}
	if c.Dtype == "float64" {
		opt.Dtype = tensor.Float64
	}
	obj, err := objectives.Parse(c.Objective, objectives.Uniform)
	if err != nil {
		return err
	}
	ref, err := models.New(c.Model, sz, opt)
	if err != nil {
		return err
	}
	one, err := train.NewStepper(ref, obj, batch, graph.NewAdam(0.05))
	if err != nil {
		return err
	}
	sharded, err := dist.NewStepper(w, c.Model, sz, opt, obj, batch, graph.NewAdam(0.05))
	if err != nil {
		return err
	}
	for i := range c.Steps {
		lo := (i * batch) % len(data)
		b := data[lo:min(lo+batch, len(data))]
		want, err := one.Step(b)
		if err != nil {
			return err
		}
		got, err := sharded.Step(b)
		if err != nil {
			return err
		}
		c.LossRel = max(c.LossRel, rel(got, want))
	}
	rows := sharded.Rows()
	for _, name := range ref.ParamNames() {
		want, got := graph.Float64s(ref.Param(name)), graph.Float64s(sharded.Param(name))
		off := 0
		if len(got) != len(want) { // an entity table: this process's rows
			off = rows.Lo(w.Rank()) * (len(want) / entities)
		}
		for j, v := range got {
			c.ParamRel = max(c.ParamRel, rel(v, want[off+j]))
		}
	}
	// Every process's differences count: take the largest.
	worst := []float64{c.LossRel, c.ParamRel}
	return maxOver(w, worst, func() { c.LossRel, c.ParamRel = worst[0], worst[1] })
}

// maxOver replaces x by its maximum over the processes (through int64
// bits: non-negative floats order as their bits do), then calls done.
func maxOver(w mpi.World, x []float64, done func()) error {
	bits := make([]int64, len(x))
	for i, v := range x {
		bits[i] = int64(math.Float64bits(v))
	}
	if err := w.MaxInt64(bits); err != nil {
		return err
	}
	for i, b := range bits {
		x[i] = math.Float64frombits(uint64(b))
	}
	done()
	return nil
}

func rel(a, b float64) float64 { return math.Abs(a-b) / math.Max(1, math.Abs(b)) }
