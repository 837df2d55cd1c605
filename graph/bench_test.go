package graph

import (
	"fmt"
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// cpStep builds the PyTorch peer's CP PLL step (one shared entity table,
// object and subject terms) at FB15k-237's sizes.
type cpStep struct {
	prog          *Program
	params, grads []*tensor.Dense
	gradNodes     G.Nodes
	s, r, o       []int
	adam          *Adam
}

func newCPStep(b testing.TB, ne, nr, d, batch int, squared bool) *cpStep {
	g := G.NewGraph()
	rng := rand.New(rand.NewPCG(1, 2))
	mk := func(name string, n int) (*G.Node, *tensor.Dense) {
		x := make([]float32, n*d)
		for i := range x {
			x[i] = float32(0.1 * rng.NormFloat64())
		}
		t := tensor.New(tensor.WithShape(n, d), tensor.WithBacking(x))
		return G.NewMatrix(g, tensor.Float32, G.WithShape(n, d), G.WithName(name), G.WithValue(t)), t
	}
	E, Ev := mk("E", ne)
	W, Wv := mk("W", nr)
	st := &cpStep{s: make([]int, batch), r: make([]int, batch), o: make([]int, batch), adam: NewAdam(1e-3)}
	idx := func(name string, v []int) *G.Node {
		return G.NewVector(g, tensor.Int, G.WithShape(batch), G.WithName(name), G.WithValue(tensor.New(tensor.WithShape(batch), tensor.WithBacking(v))))
	}
	s, r, o := idx("s", st.s), idx("r", st.r), idx("o", st.o)
	w := make([]float32, batch)
	for i := range w {
		w[i] = 1 / float32(batch)
	}
	wn := G.NewVector(g, tensor.Float32, G.WithShape(batch), G.WithName("w"), G.WithValue(tensor.New(tensor.WithShape(batch), tensor.WithBacking(w))))
	es, eo, wr := must(Gather(E, s)), must(Gather(E, o)), must(Gather(W, r))
	qo, qs := must(Mul(es, wr)), must(Mul(eo, wr))
	var loss *G.Node
	if squared {
		gram := must(Gram(E))
		num := must(LogSquare(must(RowDot(qo, eo)), 0))
		zo := must(LogPos(must(RowDot(must(MatMul(qo, gram, false, false)), qo)), 0))
		zs := must(LogPos(must(RowDot(must(MatMul(qs, gram, false, false)), qs)), 0))
		l := must(Sub(must(Add(zo, zs)), must(Scale(num, 2))))
		loss = must(Dot(l, wn))
	} else {
		lo := must(LogSoftmaxNLL(must(MatMul(qo, E, false, true)), o))
		ls := must(LogSoftmaxNLL(must(MatMul(qs, E, false, true)), s))
		loss = must(Dot(must(Add(lo, ls)), wn))
	}
	grads, err := Backward(loss, E, W)
	if err != nil {
		b.Fatal(err)
	}
	st.prog, err = Compile(append(G.Nodes{loss}, grads...)...)
	if err != nil {
		b.Fatal(err)
	}
	st.params, st.gradNodes = []*tensor.Dense{Ev, Wv}, grads
	return st
}

func (st *cpStep) run(b testing.TB, rng *rand.Rand, ne, nr int) {
	for i := range st.s {
		st.s[i], st.r[i], st.o[i] = rng.IntN(ne), rng.IntN(nr), rng.IntN(ne)
	}
	if err := st.prog.Run(); err != nil {
		b.Fatal(err)
	}
	st.grads = st.grads[:0]
	for _, gn := range st.gradNodes {
		st.grads = append(st.grads, gn.Value().(*tensor.Dense))
	}
	if _, err := st.adam.Step(st.params, st.grads); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkRawCPStep times forward, backward and Adam of the graph-level
// CP PLL step, the same computation as ../shared/bench/torch_peer.py.
func BenchmarkRawCPStep(b *testing.B) {
	for _, sq := range []bool{false, true} {
		for _, d := range []int{200, 1000} {
			name := fmt.Sprintf("cp/d=%d", d)
			if sq {
				name = fmt.Sprintf("cp2/d=%d", d)
			}
			b.Run(name, func(b *testing.B) {
				const ne, nr, batch = 14541, 237, 500
				st := newCPStep(b, ne, nr, d, batch, sq)
				rng := rand.New(rand.NewPCG(9, 9))
				st.run(b, rng, ne, nr) // warm-up allocates the buffers
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					st.run(b, rng, ne, nr)
				}
			})
		}
	}
}

// BenchmarkSgemm measures the machine's float32 matrix-product rate through
// graph's BLAS path (OpenBLAS here, see openblas_test.go), the yardstick for
// how close a training step runs to the hardware: GFLOP/s is reported.
func BenchmarkSgemm(b *testing.B) {
	for _, n := range []int{1000, 2000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			x := make([]float32, n*n)
			for i := range x {
				x[i] = float32(i%7) * 0.1
			}
			c := make([]float32, n*n)
			gemm(false, false, n, n, n, 1, x, n, x, n, 0, c, n)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				gemm(false, false, n, n, n, 1, x, n, x, n, 0, c, n)
			}
			b.ReportMetric(2*float64(n)*float64(n)*float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// SgemmRate agrees with BenchmarkSgemm's figure in kind: a positive,
// finite rate (its value is the host's, not a test's to fix).
func TestSgemmRateIsARate(t *testing.T) {
	if r := SgemmRate(); !(r > 0.1) || r > 1e6 {
		t.Errorf("SgemmRate() = %v GFLOP/s", r)
	}
}
