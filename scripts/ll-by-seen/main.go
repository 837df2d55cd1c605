// Command ll-by-seen splits a finished GeKC run's test log-likelihood by
// whether a test triple's subject or object ever occurs in the training
// triples: an entity that does not gets no gradient from the data terms,
// only from the partition function's.
//
//	go run ./scripts/ll-by-seen -run DIR [-data ROOT]
package main

import (
	"flag"
	"fmt"
	"math"
	"os"

	_ "gekc/graph/openblas"
	"gekc/query"
	"gekc/sweep"
)

func main() {
	run := flag.String("run", "", "finished GeKC run `directory`")
	data := flag.String("data", "../shared/data", "data `root`")
	flag.Parse()
	if err := measure(*run, *data); err != nil {
		fmt.Fprintln(os.Stderr, "ll-by-seen:", err)
		os.Exit(1)
	}
}

func measure(run, data string) error {
	fr, err := sweep.LoadFinished(run, data)
	if err != nil {
		return err
	}
	dom, err := sweep.Constraint(fr.Spec, fr.Data)
	if err != nil {
		return err
	}
	q, err := query.New(fr.Model, dom, fr.Spec.Eval.BatchSize)
	if err != nil {
		return err
	}
	seen := make([]bool, fr.Data.Entities.Len())
	for _, t := range fr.Data.Train {
		seen[t.S], seen[t.O] = true, true
	}
	ts := make([][3]int, len(fr.Data.Test))
	for i, t := range fr.Data.Test {
		ts[i] = [3]int{int(t.S), int(t.R), int(t.O)}
	}
	ll, err := q.LogJoint(ts)
	if err != nil {
		return err
	}
	var sum, sumSeen, sumUnseen float64
	var nSeen, nUnseen int
	minUnseen := math.Inf(1)
	for i, t := range ts {
		sum += ll[i]
		if seen[t[0]] && seen[t[2]] {
			sumSeen += ll[i]
			nSeen++
		} else {
			sumUnseen += ll[i]
			nUnseen++
			minUnseen = min(minUnseen, ll[i])
		}
	}
	n := len(ts)
	fmt.Printf("%s: test LL %.3f over %d; both entities trained: %.3f over %d; an entity never in training: %.3f over %d (lowest %.1f); their share of the mean: %.3f\n",
		fr.ID, sum/float64(n), n, sumSeen/float64(nSeen), nSeen, sumUnseen/float64(max(nUnseen, 1)), nUnseen, minUnseen, sumUnseen/float64(n))
	return nil
}
