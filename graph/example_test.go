package graph_test

import (
	"fmt"
	"math"
	"strings"

	"gekc/graph"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// A two-entity, one-relation CP model: the negative log-likelihood of the
// object of one triple, its gradient, and one Adam step.
func Example() {
	g := G.NewGraph()
	E := G.NewMatrix(g, tensor.Float64, G.WithShape(2, 2), G.WithName("E"),
		G.WithValue(tensor.New(tensor.WithShape(2, 2), tensor.WithBacking([]float64{1, 0, 0, 1}))))
	W := G.NewMatrix(g, tensor.Float64, G.WithShape(1, 2), G.WithName("W"),
		G.WithValue(tensor.New(tensor.WithShape(1, 2), tensor.WithBacking([]float64{2, 1}))))
	idx := func(name string, v int) *G.Node {
		return G.NewVector(g, tensor.Int, G.WithShape(1), G.WithName(name),
			G.WithValue(tensor.New(tensor.WithShape(1), tensor.WithBacking([]int{v}))))
	}
	s, r, o := idx("s", 0), idx("r", 0), idx("o", 0)

	es, _ := graph.Gather(E, s)
	wr, _ := graph.Gather(W, r)
	q, _ := graph.Mul(es, wr)                    // query for the object slot
	scores, _ := graph.MatMul(q, E, false, true) // φ(s, r, ·) for every entity
	nll, _ := graph.LogSoftmaxNLL(scores, o)     // −log p(o | s, r)
	loss, _ := graph.Sum(nll)
	grads, _ := graph.Backward(loss, E, W)
	prog, _ := graph.Compile(append(G.Nodes{loss}, grads...)...)
	if err := prog.Run(); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("loss %.4f\n", loss.Value().Data())
	adam := graph.NewAdam(0.1)
	adam.Step([]*tensor.Dense{E.Value().(*tensor.Dense), W.Value().(*tensor.Dense)},
		[]*tensor.Dense{grads[0].Value().(*tensor.Dense), grads[1].Value().(*tensor.Dense)})
	if err := prog.Run(); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("after one step %.4f\n", loss.Value().Data())
	// Output:
	// loss 0.1269
	// after one step 0.0545
}

// CP's squared partition function Σ_ij (UᵀU)_ij (WᵀW)_ij (VᵀV)_ij written
// as the formula: one error check for the whole expression. A failing step
// (here a 2×2 by 3×3 product) stops the chain; Err names it.
func ExampleBuilder() {
	g := G.NewGraph()
	matrix := func(name string, rows int, x ...float64) *G.Node {
		cols := len(x) / rows
		return G.NewMatrix(g, tensor.Float64, G.WithShape(rows, cols), G.WithName(name),
			G.WithValue(tensor.New(tensor.WithShape(rows, cols), tensor.WithBacking(x))))
	}
	U := matrix("U", 2, 1, 2, 0, 1)
	W := matrix("W", 1, 1, -1)
	V := matrix("V", 2, 1, 0, 0, 1)

	var e graph.Builder
	z, err := e.Result(e.Dot(e.Mul(e.Gram(U), e.Gram(W)), e.Gram(V)))
	if err != nil {
		fmt.Println(err)
		return
	}
	prog, err := graph.Compile(z)
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := prog.Run(); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("Σ φ² =", z.Value().Data())

	var bad graph.Builder
	q := bad.MatMul(bad.Gram(U), matrix("M", 3, 1, 0, 0, 0, 1, 0, 0, 0, 1), false, false)
	fmt.Println("then:", bad.Sum(q))
	fmt.Println("failed in MatMul:", strings.HasPrefix(bad.Err().Error(), "graph.MatMul:"))
	// Output:
	// Σ φ² = 6
	// then: <nil>
	// failed in MatMul: true
}

// Rows of log-terms whose last column has weight −1: log(1 + 1 − 0.5),
// then log(1 + 0 − 1) = log 0 and log(1 + 1 − 3), which is not defined.
func ExampleSignedRowLogSumExp() {
	g := G.NewGraph()
	l := math.Log
	t := G.NewMatrix(g, tensor.Float64, G.WithShape(3, 3), G.WithName("t"),
		G.WithValue(tensor.New(tensor.WithShape(3, 3), tensor.WithBacking([]float64{
			0, 0, l(0.5),
			0, math.Inf(-1), 0,
			0, 0, l(3),
		}))))
	y, err := graph.SignedRowLogSumExp(t, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	prog, _ := graph.Compile(y)
	if err := prog.Run(); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%.4f (log 1.5 = %.4f)\n", y.Value().Data(), l(1.5))
	// Output:
	// [0.4055 -Inf NaN] (log 1.5 = 0.4055)
}
