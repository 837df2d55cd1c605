package query_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"

	"gekc/kg"
	"gekc/metrics"
	"gekc/models"
	"gekc/query"

	"gorgonia.org/tensor"
)

// A squared CP model (untrained, with fixed random parameters) over 6
// entities and 2 relations answers the completion (0, 1, ?) with an exact
// distribution, the relations' marginal p(r), and samples given the
// subject.
func Example() {
	sz := models.Sizes{Entities: 6, Relations: 2, Rank: 3}
	m, err := models.New("cp2", sz, models.Options{Seed: 7, Dtype: tensor.Float64, InitScale: 0.7})
	if err != nil {
		panic(err)
	}
	q, err := query.New(m, nil, 16)
	if err != nil {
		panic(err)
	}

	// p(o | s = 0, r = 1): the candidates' scores normalised by the
	// circuit's own marginal, so the sum is a check, not a construction.
	lp, err := q.Conditional([3]int{0, 1, query.Free}, models.Object)
	if err != nil {
		panic(err)
	}
	var sum float64
	for _, x := range lp {
		sum += math.Exp(x)
	}
	fmt.Printf("p(o | 0, 1) sums to %.9f\n", sum)
	for _, o := range metrics.TopK(lp, 3, nil) {
		fmt.Printf("  o = %d: %.4f\n", o, math.Exp(lp[o]))
	}

	pr, err := q.Marginal([3]int{query.Free, query.Free, query.Free}, models.Relation)
	if err != nil {
		panic(err)
	}
	fmt.Printf("p(r): %.4f %.4f\n", math.Exp(pr[0]), math.Exp(pr[1]))

	ts, err := q.SampleGiven([3]int{2, query.Free, query.Free}, 5, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		panic(err)
	}
	fmt.Println("samples given s = 2:", ts)
	// Output:
	// p(o | 0, 1) sums to 1.000000000
	//   o = 1: 0.7633
	//   o = 5: 0.1694
	//   o = 3: 0.0272
	// p(r): 0.2634 0.7366
	// samples given s = 2: [[2 1 1] [2 1 1] [2 1 1] [2 1 1] [2 1 1]]
}

// An energy-based model answers conditionals (the softmax of its scores)
// but nothing that needs its partition function.
func ExampleQuerier_LogPartition() {
	m, err := models.New("cp", models.Sizes{Entities: 4, Relations: 2, Rank: 2}, models.Options{Seed: 1, Dtype: tensor.Float64})
	if err != nil {
		panic(err)
	}
	q, err := query.New(m, nil, 4)
	if err != nil {
		panic(err)
	}
	_, err = q.LogPartition()
	fmt.Println(err == query.ErrEnergy)
	// Output:
	// true
}

// An Answerer asks by name and answers in names: the completions of
// (alice, knows, ?), marked known when a split holds them, and samples
// given the subject, printed as TSV. A misspelt name is an error that
// suggests the names close to it.
func ExampleAnswerer() {
	ents, err := kg.NewVocab([]string{"alice", "bob", "carol", "dave"})
	if err != nil {
		panic(err)
	}
	rels, err := kg.NewVocab([]string{"knows", "likes"})
	if err != nil {
		panic(err)
	}
	ds := &kg.Dataset{Name: "friends", Entities: ents, Relations: rels, Train: []kg.Triple{{S: 0, R: 0, O: 1}}}
	m, err := models.New("cp2", models.Sizes{Entities: 4, Relations: 2, Rank: 3}, models.Options{Seed: 7, Dtype: tensor.Float64, InitScale: 0.7})
	if err != nil {
		panic(err)
	}
	q, err := query.New(m, nil, 16)
	if err != nil {
		panic(err)
	}
	a, err := query.NewAnswerer(q, ds)
	if err != nil {
		panic(err)
	}

	given, err := a.Triple("alice", "knows", "")
	if err != nil {
		panic(err)
	}
	res, err := a.Completions(given, 3, false)
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Kind, res.Query)
	for _, r := range res.Rows {
		fmt.Printf("%d %s p = %.4f known %v\n", r.Rank, r.Object, *r.Prob, *r.Known)
	}

	_, err = a.Triple("alice", "know", "")
	fmt.Println(err)

	res, err = a.Sample([3]int{given[0], query.Free, query.Free}, 3, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		panic(err)
	}
	if err := res.Write(os.Stdout, "tsv"); err != nil {
		panic(err)
	}
	// Output:
	// conditional (alice, knows, ?)
	// 1 bob p = 0.4641 known true
	// 2 dave p = 0.4426 known false
	// 3 alice p = 0.0792 known false
	// unknown relation "know"; did you mean "knows"?
	// subject	relation	object
	// alice	likes	bob
	// alice	knows	bob
	// alice	likes	bob
}

// Write prints a Result as a table with a heading (text), as TSV, or as
// JSON; the columns are the fields the rows hold.
func ExampleResult_Write() {
	known := true
	p := 0.25
	lp := math.Log(p)
	r := &query.Result{Run: "cp2-demo", Model: "cp2", Query: "(alice, knows, ?)", Kind: query.KindConditional,
		Rows: []query.Row{{Rank: 1, Subject: "alice", Relation: "knows", Object: "bob", Prob: &p, LogProb: &lp, Known: &known}}}
	for _, format := range []string{"text", "tsv"} {
		if err := r.Write(os.Stdout, format); err != nil {
			panic(err)
		}
	}
	// Output:
	// # run cp2-demo (cp2)
	// # conditional: (alice, knows, ?)
	// rank  subject  relation  object  p     log_p       known
	// 1     alice    knows     bob     0.25  -1.3862944  true
	// rank	subject	relation	object	p	log_p	known
	// 1	alice	knows	bob	0.25	-1.3862944	true
}
