// Command ll-by-seen splits a finished GeKC run's test log-likelihood by
// what training gave each test triple's entities. An entity that never
// occurs in training gets no gradient from the data terms, only from the
// normaliser's; with role-specific tables (CP, CP+, CP²) the same holds for
// an entity's subject row when it is never a subject in training, and for
// its object row likewise. For such models it also prints those rows' mean
// norm against the trained rows', and for squared models the log-probability
// left to a triple whose score is 0 (the uniform ε mass's).
//
//	go run ./scripts/ll-by-seen -run DIR [-data ROOT]
//
// The run is measured at its checkpoint's parameters (its best validation
// MRR, or LL when selected on it).
package main

import (
	"flag"
	"fmt"
	"math"
	"os"

	_ "gekc/graph/openblas"
	"gekc/models"
	"gekc/query"
	"gekc/sweep"

	"gorgonia.org/tensor"
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
	asSubject, asObject := fr.Data.TrainRoles()
	seen := func(e int) bool { return asSubject[e] || asObject[e] }
	ts := make([][3]int, len(fr.Data.Test))
	for i, t := range fr.Data.Test {
		ts[i] = [3]int{int(t.S), int(t.R), int(t.O)}
	}
	ll, err := q.LogJoint(ts)
	if err != nil {
		return err
	}
	if len(ts) == 0 {
		return fmt.Errorf("%s: no test triples", fr.ID)
	}
	// Mean test LL over the triples keep selects, and their count.
	mean := func(keep func(t [3]int) bool) (float64, int) {
		var sum float64
		var n int
		for i, t := range ts {
			if keep(t) {
				sum += ll[i]
				n++
			}
		}
		return sum / float64(max(n, 1)), n
	}
	all, n := mean(func([3]int) bool { return true })
	fmt.Printf("%s: test LL %.3f over %d triples\n", fr.ID, all, n)
	a, na := mean(func(t [3]int) bool { return seen(t[0]) && seen(t[2]) })
	b, nb := mean(func(t [3]int) bool { return !seen(t[0]) || !seen(t[2]) })
	fmt.Printf("  both entities in training: %.3f over %d; an entity never in training: %.3f over %d (they lower the mean by %.3f)\n",
		a, na, b, nb, a-all)
	a, na = mean(func(t [3]int) bool { return asSubject[t[0]] && asObject[t[2]] })
	b, nb = mean(func(t [3]int) bool { return !asSubject[t[0]] || !asObject[t[2]] })
	fmt.Printf("  subject trained as a subject and object as an object: %.3f over %d; the others: %.3f over %d\n", a, na, b, nb)
	if l := fr.Model.Layout; l.Subject != l.Object && fr.Model.Dtype == tensor.Float32 {
		// Role-specific tables (CP): rows no data term trains against the others.
		for _, c := range []struct {
			table string
			in    []bool
		}{{l.Subject, asSubject}, {l.Object, asObject}} {
			p := fr.Model.Param(c.table)
			cols := p.Shape()[1]
			data := p.Data().([]float32)
			var norm [2]float64
			var count [2]int
			for e, ok := range c.in {
				var ss float64
				for _, x := range data[e*cols : (e+1)*cols] {
					ss += float64(x) * float64(x)
				}
				k := 0
				if ok {
					k = 1
				}
				norm[k] += math.Sqrt(ss)
				count[k]++
			}
			fmt.Printf("  table %s: mean row norm %.4g over the %d entities in that role in training, %.4g over the %d others\n",
				c.table, norm[1]/float64(max(count[1], 1)), count[1], norm[0]/float64(max(count[0], 1)), count[0])
		}
	}
	if fr.Model.Semantics == models.Squared {
		lz, err := q.LogPartition()
		if err != nil {
			return err
		}
		sz := fr.Model.Sizes
		floor := math.Log(fr.Model.EpsMass/(float64(sz.Entities)*float64(sz.Entities)*float64(sz.Relations))) - lz
		fmt.Printf("  log Z %.3f: a triple whose score is 0 keeps only the uniform ε mass, log p = %.3f\n", lz, floor)
	}
	return nil
}
