package dist_test

import (
	"fmt"
	"sync"
	"testing"

	"gekc/dist"
	"gekc/graph"
	_ "gekc/graph/openblas" // as the command: OpenBLAS for the matrix products
	"gekc/models"
	"gekc/objectives"
	"gekc/train"
)

// BenchmarkShardedStep is one ComplEx² PLL step at FB15k-237's sizes
// (B = 500, d = 100) on one process (train.Stepper) and sharded over P
// goroutine processes (dist.Local): what the sharding costs on one machine
// beside what it saves, with GOMAXPROCS shared by the P processes.
func BenchmarkShardedStep(b *testing.B) {
	const batch = 500
	sz := models.Sizes{Entities: 14541, Relations: 237, Rank: 100}
	data := tinyTriples(50*batch, sz.Entities, sz.Relations, 1)
	obj := objectives.PLL{Weights: objectives.Uniform}
	b.Run("one-process", func(b *testing.B) {
		m, err := models.New("complex2", sz, models.Options{Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		st, err := train.NewStepper(m, obj, batch, graph.NewAdam(1e-3))
		if err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for i := range b.N {
			lo := (i * batch) % len(data)
			if _, err := st.Step(data[lo : lo+batch]); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, np := range []int{1, 2} {
		b.Run(fmt.Sprintf("P=%d", np), func(b *testing.B) {
			comms := dist.Local(np)
			sts := make([]*dist.Stepper, np)
			for p := range sts {
				var err error
				if sts[p], err = dist.NewStepper(comms[p], "complex2", sz, models.Options{Seed: 1}, obj, batch, graph.NewAdam(1e-3)); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			for i := range b.N {
				lo := (i * batch) % len(data)
				var wg sync.WaitGroup
				for _, st := range sts {
					wg.Go(func() {
						if _, err := st.Step(data[lo : lo+batch]); err != nil {
							b.Error(err)
						}
					})
				}
				wg.Wait()
			}
		})
	}
}
