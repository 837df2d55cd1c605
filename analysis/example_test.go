package analysis_test

import (
	"fmt"
	"log"
	"os"

	"gekc/analysis"
	"gekc/metrics"
)

// The KTD tables of two baselines and one model, rendered from values an
// analysis computed: ktd.tsv keeps full precision, ktd.md rounds. UMLS has
// 135 entities and 46 relations.
func ExampleKTDTables() {
	rows := []analysis.KTDRow{
		{Dataset: "umls", Model: "training set", Stat: metrics.KTDStat{Mean: 0.0021, Std: 0.0004, Draws: 100}},
		{Dataset: "umls", Model: "uniform", Stat: metrics.KTDStat{Mean: 0.8312, Std: 0.0133, Draws: 100}, LL: analysis.UniformLL(135, 46), HasLL: true},
		{Dataset: "umls", Model: "complex2", Objective: "mle", Run: "complex2-mle-s0", Sampled: "best valid LL, epoch 12", Stat: metrics.KTDStat{Mean: 0.0136, Std: 0.0021, Draws: 100}, LL: -9.2741, HasLL: true},
	}
	tsv, md, err := analysis.KTDTables(rows, analysis.KTDSetting{Features: "complex-pll-s0", Digest: "4f1c0a9e27b3", DrawSize: 661, Samples: 25000}, nil)
	if err != nil {
		log.Fatal(err)
	}
	os.Stdout.Write(tsv)
	fmt.Println()
	os.Stdout.Write(md)
	// Output:
	// dataset	model	objective	run	sampled	ktd_mean	ktd_std	test_ll	across_clusters	test_triples	draws	features	features_digest	draw_size	samples
	// umls	training set				0.0021	0.0004				100	complex-pll-s0	4f1c0a9e27b3	661	25000
	// umls	uniform				0.8312	0.0133	-13.639191			100	complex-pll-s0	4f1c0a9e27b3	661	25000
	// umls	complex2	mle	complex2-mle-s0	best valid LL, epoch 12	0.0136	0.0021	-9.2741			100	complex-pll-s0	4f1c0a9e27b3	661	25000
	//
	// # Kernel triple distance to the test triples
	//
	// ψ: product units of `complex-pll-s0` (parameters 4f1c0a9e27b3); k(x,y) = (xᵀy+1)³; unbiased MMD² over 100 draws of 661 sampled and 661 test triples (mean ± std); 25000 samples per model. Lower is better. Beside it, as the paper's Tables 3 and 4 pair them, the test log-likelihood (nats per triple; higher is better) of the distribution sampled: a run's at the parameters sampled, uniform's −log(|E|²|R|).
	//
	// | dataset |    model     | objective |      KTD      | test LL |       sampled at        |       run       |
	// |:--------|:-------------|:----------|:--------------|:--------|:------------------------|:----------------|
	// | umls    | training set |           | 0.002 ± 0.000 | –       |                         |                 |
	// | umls    | uniform      |           | 0.831 ± 0.013 | -13.639 |                         |                 |
	// | umls    | complex2     | mle       | 0.014 ± 0.002 | -9.274  | best valid LL, epoch 12 | complex2-mle-s0 |
}
