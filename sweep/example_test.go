package sweep_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"gekc/grid"
	"gekc/resultsdir"
	"gekc/runspec"
	"gekc/sweep"
)

// A sweep of one run trained on the shipped Nations graph into a fresh
// results directory: the run's files, and how the runs ended.
func ExampleSweep() {
	src := `name = "tiny"
[defaults]
dataset = "nations"
model = "complex2"
objective = "mle"
rank = 2
batch_size = 500
learning_rate = 0.01
epochs = 1
`
	g, err := grid.ParseGrid("tiny.toml", []byte(src), runspec.Validate)
	if err != nil {
		fmt.Println(err)
		return
	}
	out, err := os.MkdirTemp("", "sweep-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(out)
	s := sweep.New(g, g.Runs, sweep.Options{Out: out, DataRoot: filepath.Join("..", "data"),
		Stdout: io.Discard, Stderr: io.Discard, Quiet: true})
	if err := s.Prepare(); err != nil {
		fmt.Println(err)
		return
	}
	tally := s.Run(context.Background())
	fmt.Printf("%d finished, %d failed\n", tally.Finished, tally.Failed)
	rec, err := resultsdir.ReadRecord(filepath.Join(out, "runs", g.Runs[0].ID))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(rec.ID, rec.Status, len(rec.Epochs), "epoch")
	files, _ := filepath.Glob(filepath.Join(out, "runs", g.Runs[0].ID, "*"))
	for _, f := range files {
		name := filepath.Base(f)
		if strings.HasPrefix(name, "events.out.tfevents.") {
			name = "events.out.tfevents.<time>.<host>" // TensorBoard's
		}
		fmt.Println(name)
	}
	// Output:
	// 1 finished, 0 failed
	// complex2-mle-d2-b500-lr0.01-s0-ae84d844 finished 1 epoch
	// checkpoint.npz
	// config.toml
	// curves.png
	// entities.tsv.gz
	// events.out.tfevents.<time>.<host>
	// lock
	// metrics.json
	// relations.tsv.gz
}

// What a sweep would do, without doing it: the runs and their state in
// the results directory. CheckDatasets, which the list also applies, says
// when a data set is not under the data root.
func ExampleWriteRunList() {
	src := `name = "list"
[defaults]
dataset = "nations"
objective = "mle"
rank = 4
batch_size = 100
learning_rate = 0.01
epochs = 2
memory = "1GiB"

[[sweep]]
model = ["cp2", "complex2"]
`
	g, err := grid.ParseGrid("list.toml", []byte(src), runspec.Validate)
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := sweep.WriteRunList(os.Stdout, g, g.Runs, "results/list", "../data"); err != nil {
		fmt.Println(err)
	}
	err = sweep.CheckDatasets("no/such/root", g.Runs)
	fmt.Println(strings.HasPrefix(err.Error(), "dataset directory not found: no/such/root/nations"))
	// Output:
	// grid list (list.toml): 2 runs
	// out  results/list
	// data ../data
	//
	// index  id                                       block (line)            hyperparameters                                status
	// 0      cp2-mle-d4-b100-lr0.01-s0-8b4dbbf6       [[sweep]] block 1 (11)  nations cp2 mle d=4 b=100 lr=0.01 seed=0       pending
	// 1      complex2-mle-d4-b100-lr0.01-s0-8b4dbbf6  [[sweep]] block 1 (11)  nations complex2 mle d=4 b=100 lr=0.01 seed=0  pending
	//
	// memory of the runs to train (estimated; the budget is the grid's memory key, else GOMEMLIMIT, else 90% of the machine's memory)
	// index  total    budget  parameters  gradients  optimiser  best      step      data     evaluation (batch)
	// 0      995 KiB  1 GiB   1.3 KiB     1.3 KiB    2.59 KiB   1.3 KiB   15.9 KiB  113 KiB  860 KiB (1000)
	// 1      1.2 MiB  1 GiB   2.16 KiB    2.16 KiB   4.31 KiB   2.16 KiB  39.2 KiB  113 KiB  1.04 MiB (1000)
	// true
}
