package grid_test

import (
	"fmt"

	"gekc/grid"
)

// A grid is parsed and expanded into numbered runs: here the defaults and
// one block sweeping two models over two seeds. (The runner validates
// with runspec.Validate, which adds what only the models registry knows.)
func ExampleParseGrid() {
	src := `name = "demo"
[defaults]
dataset = "nations"
objective = "mle"
rank = 4
batch_size = 100
learning_rate = 0.01
epochs = 2

[[sweep]]
model = ["cp2", "complex2"]
seeds = 2
`
	g, err := grid.ParseGrid("demo.toml", []byte(src), grid.DefaultValidator)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range g.Runs {
		fmt.Println(r.Index, r.ID)
	}
	only, err := grid.Select("1-2", g.Runs)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("-only 1-2:", only[0].Spec.Model, only[0].Spec.Seed, only[1].Spec.Model, only[1].Spec.Seed)
	// Output:
	// 0 cp2-mle-d4-b100-lr0.01-s0-8b4dbbf6
	// 1 cp2-mle-d4-b100-lr0.01-s1-8b4dbbf6
	// 2 complex2-mle-d4-b100-lr0.01-s0-8b4dbbf6
	// 3 complex2-mle-d4-b100-lr0.01-s1-8b4dbbf6
	// -only 1-2: cp2 1 complex2 0
}

// Mistakes are reported all at once, each naming the file and line.
func ExampleParseGrid_errors() {
	src := `[defaults]
dataset = "nations"
model = "cp2"
objective = "mle"
rank = 4
batch_size = 100
learning_rate = 0.01
epochs = 2

[[sweep]]
objectve = "pll"
rank = [4, -1]
`
	_, err := grid.ParseGrid("bad.toml", []byte(src), grid.DefaultValidator)
	fmt.Println(err)
	// Output:
	// bad.toml:11: [[sweep]] block 1: unknown key "objectve" (did you mean "objective"?); known keys here: dataset, model, rank, relation_rank, objective, constraints, pll_weights, n3, f2, optimizer, momentum, initial_accumulator, learning_rate, batch_size, epochs, patience, seed, init_scale, dtype, eval, samples, sample_from, distill_from, memory, processes, seeds
	// bad.toml:12: [[sweep]] block 1: run cp2-mle-d-1-b100-lr0.01-s0-8b4dbbf6: rank -1: want a positive embedding size
}
