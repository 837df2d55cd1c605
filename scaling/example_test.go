package scaling_test

import (
	"fmt"
	"log"
	"os"

	"gekc/scaling"
)

// A small study's points: by batch size, then by entities, the models
// interleaved at each size.
func ExampleOptions_Plan() {
	o := scaling.DefaultOptions()
	o.Models = []string{"complex", "complex2"}
	o.Batches = []int{1000, 100}
	o.Entities = []int{50000}
	plan, err := o.Plan()
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range plan {
		fmt.Println(p)
	}
	// Output:
	// batch complex |E|=2500604 |R|=535 d=100 B=100
	// batch complex2 |E|=2500604 |R|=535 d=100 B=100
	// batch complex |E|=2500604 |R|=535 d=100 B=1000
	// batch complex2 |E|=2500604 |R|=535 d=100 B=1000
	// entities complex |E|=50000 |R|=535 d=100 B=500
	// entities complex2 |E|=50000 |R|=535 d=100 B=500
}

// Options that describe no study name the option at fault.
func ExampleOptions_Plan_error() {
	o := scaling.DefaultOptions()
	o.Steps = 0
	_, err := o.Plan()
	fmt.Println(err)
	// Output:
	// Steps 0: want a positive number
}

// ByteSize is a flag.Value: it reads units and writes the largest binary
// one that divides the amount.
func ExampleByteSize() {
	var b scaling.ByteSize
	for _, s := range []string{"1.5GiB", "512MiB", "3GB"} {
		if err := b.Set(s); err != nil {
			log.Fatal(err)
		}
		fmt.Println(s, "=", int64(b), "bytes =", b)
	}
	fmt.Println(b.Set("20"))
	// Output:
	// 1.5GiB = 1610612736 bytes = 1536MiB
	// 512MiB = 536870912 bytes = 512MiB
	// 3GB = 3000000000 bytes = 3000000000B
	// "20" has no unit: write e.g. 20GiB
}

// Rendering the tables of a study from its scaling.tsv, without measuring:
// the rows of the planned points, in the plan's order.
func ExampleRenderMarkdown() {
	tsv := "study\tmodel\tentities\trelations\trank\tbatch\tstep_ms\tpeak_rss_mb\tstatus\tmax_mem_mb\topenblas_coretype\tgomaxprocs\n" +
		"batch\tcomplex\t5000\t535\t100\t10\t2.9\t60\tok\t20480\t\t1\n" +
		"batch\tcomplex2\t5000\t535\t100\t10\t8.3\t56\tok\t20480\t\t1\n" +
		"batch\tcomplex\t5000\t535\t100\t100\t\t20488.3\toom\t20480\t\t1\n" +
		"batch\tcomplex2\t5000\t535\t100\t100\t1250\t2100\tok\t20480\t\t1\n"
	rows, err := scaling.ParseTSV("scaling.tsv", []byte(tsv))
	if err != nil {
		log.Fatal(err)
	}
	o := scaling.DefaultOptions()
	o.Models, o.Batches, o.Entities, o.AllEntities = []string{"complex", "complex2"}, []int{10, 100}, nil, 5000
	plan, err := o.Plan()
	if err != nil {
		log.Fatal(err)
	}
	md, err := scaling.RenderMarkdown(o, scaling.Planned(rows, plan))
	if err != nil {
		log.Fatal(err)
	}
	os.Stdout.Write(md)
	// Output:
	// # Training-cost scaling
	//
	// One PLL training step (forward, backward and Adam update, float32) on random triples, |R| = 535, d = 100. Time: the median of the timed steps (5, after 2 warm-up); memory: the peak RSS of the process that measured it (start-up included), each point in a process of its own. oom: the point's resident memory passed 20GiB. Paper: figure fig:pll-scaling and appendix app:training-benchmark-details.
	//
	// Environment: GOMAXPROCS 1, OPENBLAS_CORETYPE unset.
	//
	// ## By batch size, |E| = 5000
	//
	// Each cell: time per step, peak RSS.
	//
	// | batch |    complex     |     complex2     |
	// |:------|:---------------|:-----------------|
	// | 10    | 2.9 ms, 60 MiB | 8.3 ms, 56 MiB   |
	// | 100   | **OOM**        | 1.25 s, 2.05 GiB |
}
