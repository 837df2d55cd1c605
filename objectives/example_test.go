package objectives_test

import (
	"fmt"
	"math"

	"gekc/graph"
	"gekc/models"
	"gekc/objectives"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// The PLL and MLE losses of a batch, composed from a model's circuit: a
// freshly initialised squared CP (CP²) is close to the uniform distribution,
// so its losses start near their uniform values, −Σ log(1/|E|) twice plus
// −log(1/|R|) for the PLL, and log(|E|²|R|) for the MLE.
func Example() {
	sz := models.Sizes{Entities: 20, Relations: 4, Rank: 8}
	m, err := models.New("cp2", sz, models.Options{Seed: 1, Dtype: tensor.Float64})
	if err != nil {
		panic(err)
	}
	g := G.NewGraph()
	c := m.Bind(g)
	s, r, o := []int{0, 3, 7, 19}, []int{0, 1, 2, 3}, []int{5, 5, 11, 2}
	vec := func(name string, v []int) *G.Node {
		return G.NewVector(g, tensor.Int, G.WithShape(len(v)), G.WithName(name),
			G.WithValue(tensor.New(tensor.WithShape(len(v)), tensor.WithBacking(v))))
	}
	b, err := c.NewBatch(vec("s", s), vec("r", r), vec("o", o))
	if err != nil {
		panic(err)
	}
	// One weight per triple, summing to one: the losses are means.
	w := G.NewVector(g, tensor.Float64, G.WithShape(4), G.WithName("w"),
		G.WithValue(tensor.New(tensor.WithShape(4), tensor.WithBacking([]float64{0.25, 0.25, 0.25, 0.25}))))
	for _, obj := range []objectives.Objective{objectives.PLL{Weights: objectives.Uniform}, objectives.MLE{}} {
		loss, err := obj.Loss(c, b, w)
		if err != nil {
			panic(err)
		}
		prog, err := graph.Compile(loss)
		if err != nil {
			panic(err)
		}
		if err := prog.Run(); err != nil {
			panic(err)
		}
		fmt.Printf("%s loss %.2f\n", obj.Name(), graph.Scalar(loss.Value()))
	}
	fmt.Printf("uniform: pll %.2f, mle %.2f\n", 2*math.Log(20)+math.Log(4), math.Log(20*20*4))
	// Output:
	// pll loss 7.38
	// mle loss 7.38
	// uniform: pll 7.38, mle 7.38
}

// Regularized adds the N3 penalty of the batch's rows to a loss: with
// every entry of every row set to 0.1, each triple's three rows of rank 4
// (complex, so 4 moduli of √0.02 a row) cost 3·4·0.02^{3/2}, and the loss
// grows by the weight times that batch mean.
func ExampleRegularized() {
	sz := models.Sizes{Entities: 6, Relations: 2, Rank: 4}
	m, err := models.New("complex", sz, models.Options{Seed: 1, Dtype: tensor.Float64})
	if err != nil {
		panic(err)
	}
	for _, name := range m.ParamNames() {
		x := m.Param(name).Data().([]float64)
		for i := range x {
			x[i] = 0.1
		}
	}
	g := G.NewGraph()
	c := m.Bind(g)
	vec := func(name string, v ...int) *G.Node {
		return G.NewVector(g, tensor.Int, G.WithShape(len(v)), G.WithName(name),
			G.WithValue(tensor.New(tensor.WithShape(len(v)), tensor.WithBacking(v))))
	}
	b, err := c.NewBatch(vec("s", 0, 1), vec("r", 0, 1), vec("o", 2, 3))
	if err != nil {
		panic(err)
	}
	w := G.NewVector(g, tensor.Float64, G.WithShape(2), G.WithName("w"),
		G.WithValue(tensor.New(tensor.WithShape(2), tensor.WithBacking([]float64{0.5, 0.5}))))
	pll := objectives.PLL{Weights: objectives.Uniform}
	plain, err := pll.Loss(c, b, w)
	if err != nil {
		panic(err)
	}
	regularized, err := objectives.Regularized{Objective: pll, N3: 0.5}.Loss(c, b, w)
	if err != nil {
		panic(err)
	}
	// One program computes both: they share the batch's rows and queries.
	prog, err := graph.Compile(plain, regularized)
	if err != nil {
		panic(err)
	}
	if err := prog.Run(); err != nil {
		panic(err)
	}
	fmt.Printf("added by N3: %.6f\n", graph.Scalar(regularized.Value())-graph.Scalar(plain.Value()))
	fmt.Printf("0.5·3·4·0.02^1.5: %.6f\n", 0.5*3*4*math.Pow(0.02, 1.5))
	// Output:
	// added by N3: 0.016971
	// 0.5·3·4·0.02^1.5: 0.016971
}
