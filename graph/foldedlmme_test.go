package graph

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// FoldedLogMatMulExp and its gradients match a float64 loop over the
// explicit candidate columns, in both dtypes, for ComplEx+'s block
// patterns (object, relation, subject target) and one without negative
// terms, on entries with cancellation (some of them NaN) and rows shifted
// by ±80 (float32) or ±700 (float64); they also match SignedLogMatMulExp of
// the concatenated blocks the fold avoids building.
func TestFoldedLogMatMulExpMatchesLoop(t *testing.T) {
	const m, n, w = 4, 6, 3
	for _, c := range []struct {
		dt    tensor.Dtype
		shift float64
		eps   float64
	}{{tensor.Float64, 700, 0x1p-52}, {tensor.Float32, 80, 0x1p-23}} {
		for _, p := range []struct {
			blocks []int
			neg    int
		}{{[]int{0, 1, 1, 0}, w}, {[]int{0, 0, 1, 1}, w}, {[]int{0, 1, 0, 1}, w}, {[]int{1, 0, 2}, 0}} {
			t.Run(fmt.Sprintf("%v/%v/neg=%d", c.dt, p.blocks, p.neg), func(t *testing.T) {
				nb, np := len(p.blocks), 0
				for _, b := range p.blocks {
					np = max(np, b+1)
				}
				kq, kf := nb*w, np*w
				rng := rand.New(rand.NewPCG(14, uint64(nb*10+p.neg)))
				Q, F := make([]float64, m*kq), make([]float64, n*kf)
				for i := range Q {
					Q[i] = rng.NormFloat64()
					if i%kq >= kq-p.neg { // heavier negative terms: some cancel closely, some go negative
						Q[i] -= 0.3
					}
				}
				for i := range F {
					F[i] = rng.NormFloat64()
				}
				for l := 0; l < kq; l++ {
					Q[1*kq+l] += c.shift
					Q[2*kq+l] -= c.shift
				}
				Q, F = roundTo(c.dt, Q), roundTo(c.dt, F)
				W := make([]float64, m*n)
				for i := range W {
					W[i] = rng.NormFloat64()
				}
				W = roundTo(c.dt, W)
				C := concatBlocks(F, n, w, kf, p.blocks)

				g := G.NewGraph()
				qn := G.NewMatrix(g, c.dt, G.WithShape(m, kq), G.WithName("q"), G.WithValue(denseOf(c.dt, Q, m, kq)))
				fn := G.NewMatrix(g, c.dt, G.WithShape(n, kf), G.WithName("f"), G.WithValue(denseOf(c.dt, F, n, kf)))
				cn := G.NewMatrix(g, c.dt, G.WithShape(n, kq), G.WithName("c"), G.WithValue(denseOf(c.dt, C, n, kq)))
				wn := G.NewMatrix(g, c.dt, G.WithShape(m, n), G.WithName("w"), G.WithValue(denseOf(c.dt, W, m, n)))
				y := must(FoldedLogMatMulExp(qn, fn, p.blocks, p.neg))
				grads, err := Backward(must(Dot(y, wn)), qn, fn)
				if err != nil {
					t.Fatal(err)
				}
				ref := must(SignedLogMatMulExp(qn, cn, false, true, p.neg))
				refGrads, err := Backward(must(Dot(ref, wn)), qn, cn)
				if err != nil {
					t.Fatal(err)
				}
				runScalar(t, y, grads[0], grads[1], ref, refGrads[0], refGrads[1])
				refQ, refF := values(refGrads[0]), foldBack(values(refGrads[1]), n, w, kf, p.blocks)

				wantY, cond := make([]float64, m*n), make([]float64, m*n)
				wantQ, wantF := make([]float64, m*kq), make([]float64, n*kf)
				defined := 0
				for i := 0; i < m; i++ {
					for j := 0; j < n; j++ {
						mx := math.Inf(-1)
						for l := 0; l < kq; l++ {
							mx = math.Max(mx, Q[i*kq+l]+C[j*kq+l])
						}
						var sp, sn float64
						for l := 0; l < kq; l++ {
							if e := math.Exp(Q[i*kq+l] + C[j*kq+l] - mx); l < kq-p.neg {
								sp += e
							} else {
								sn += e
							}
						}
						yv := mx + math.Log(sp-sn)
						wantY[i*n+j], cond[i*n+j] = yv, (sp+sn)/(sp-sn)
						if math.IsNaN(yv) {
							continue
						}
						defined++
						for b, part := range p.blocks {
							for l := 0; l < w; l++ {
								s := 1.0
								if b*w+l >= kq-p.neg {
									s = -1
								}
								d := W[i*n+j] * s * math.Exp(Q[i*kq+b*w+l]+F[j*kf+part*w+l]-yv)
								wantQ[i*kq+b*w+l] += d
								wantF[j*kf+part*w+l] += d
							}
						}
					}
				}
				if p.neg > 0 && (defined == m*n || defined < m*n/2) {
					t.Fatalf("%d of %d entries defined; want some but not all NaN", defined, m*n)
				}
				gotY, refY := values(y), values(ref)
				maxCond := 0.0
				for i, want := range wantY {
					if math.IsNaN(want) {
						if !math.IsNaN(gotY[i]) || !math.IsNaN(refY[i]) {
							t.Errorf("y[%d] = %v (concatenated: %v), want NaN", i, gotY[i], refY[i])
						}
						continue
					}
					maxCond = math.Max(maxCond, cond[i])
					tol := 16 * c.eps * (1 + math.Abs(want)) * (1 + cond[i])
					if !(math.Abs(gotY[i]-want) <= tol) {
						t.Errorf("y[%d] = %.17g, loop %.17g", i, gotY[i], want)
					}
					if !(math.Abs(gotY[i]-refY[i]) <= tol) {
						t.Errorf("y[%d] = %.17g, concatenated %.17g", i, gotY[i], refY[i])
					}
				}
				gtol := 64 * c.eps * (1 + c.shift) * (1 + maxCond)
				for _, gc := range []struct {
					name           string
					got, want, ref []float64
				}{{"q", values(grads[0]), wantQ, refQ}, {"f", values(grads[1]), wantF, refF}} {
					for i, want := range gc.want {
						if d := math.Abs(gc.got[i] - want); !(d <= gtol*(1+math.Abs(want))) {
							t.Errorf("d/d%s[%d] = %.10g, loop %.10g", gc.name, i, gc.got[i], want)
						}
						if d := math.Abs(gc.got[i] - gc.ref[i]); !(d <= gtol*(1+math.Abs(want))) {
							t.Errorf("d/d%s[%d] = %.10g, through the concatenation %.10g", gc.name, i, gc.got[i], gc.ref[i])
						}
					}
				}
			})
		}
	}
}

// concatBlocks returns the explicit candidates the fold avoids building:
// row j of the n × kf features F as [F_j,blocks[0] | F_j,blocks[1] | …].
func concatBlocks(F []float64, n, w, kf int, blocks []int) []float64 {
	kq := len(blocks) * w
	C := make([]float64, n*kq)
	for j := 0; j < n; j++ {
		for b, part := range blocks {
			copy(C[j*kq+b*w:j*kq+(b+1)*w], F[j*kf+part*w:j*kf+(part+1)*w])
		}
	}
	return C
}

// foldBack sums the gradient dC (n × len(blocks)·w) of the concatenated
// candidates onto the features' blocks (n × kf) they copy.
func foldBack(dC []float64, n, w, kf int, blocks []int) []float64 {
	kq := len(blocks) * w
	dF := make([]float64, n*kf)
	for j := 0; j < n; j++ {
		for b, part := range blocks {
			for l := 0; l < w; l++ {
				dF[j*kf+part*w+l] += dC[j*kq+b*w+l]
			}
		}
	}
	return dF
}

// At a ranking's shape (large enough for the kernels to split rows
// across goroutines, and for float32's vectorised exp), the op and its
// gradients are those of SignedLogMatMulExp over the concatenation, and a
// NaN in one query leaves the other rows alone.
func TestFoldedLogMatMulExpLarge(t *testing.T) {
	const m, n, w = 300, 250, 100
	blocks := []int{0, 1, 1, 0}
	kq, kf := 4*w, 2*w
	for _, c := range []struct {
		dt  tensor.Dtype
		tol float64
	}{{tensor.Float64, 1e-12}, {tensor.Float32, 1e-4}} {
		t.Run(c.dt.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(15, 16))
			Q, F, W := make([]float64, m*kq), make([]float64, n*kf), make([]float64, m*n)
			for i := range Q {
				Q[i] = rng.NormFloat64()
				if i%kq >= kq-w {
					Q[i] -= 3 // the negative term well below the positive ones: no entry cancels
				}
			}
			for i := range F {
				F[i] = rng.NormFloat64()
			}
			for i := range W {
				W[i] = rng.NormFloat64()
			}
			Q[7*kq+5] = math.NaN()
			C := concatBlocks(F, n, w, kf, blocks)
			g := G.NewGraph()
			qn := G.NewMatrix(g, c.dt, G.WithShape(m, kq), G.WithName("q"), G.WithValue(denseOf(c.dt, Q, m, kq)))
			fn := G.NewMatrix(g, c.dt, G.WithShape(n, kf), G.WithName("f"), G.WithValue(denseOf(c.dt, F, n, kf)))
			cn := G.NewMatrix(g, c.dt, G.WithShape(n, kq), G.WithName("c"), G.WithValue(denseOf(c.dt, C, n, kq)))
			wn := G.NewMatrix(g, c.dt, G.WithShape(m, n), G.WithName("w"), G.WithValue(denseOf(c.dt, W, m, n)))
			y := must(FoldedLogMatMulExp(qn, fn, blocks, w))
			ref := must(SignedLogMatMulExp(qn, cn, false, true, w))
			gy, err := Backward(must(Dot(y, wn)), qn, fn)
			if err != nil {
				t.Fatal(err)
			}
			gr, err := Backward(must(Dot(ref, wn)), qn, cn)
			if err != nil {
				t.Fatal(err)
			}
			runScalar(t, y, ref, gy[0], gy[1], gr[0], gr[1])
			close := func(what string, got, want []float64) {
				t.Helper()
				bad := 0
				for i := range want {
					if math.IsNaN(want[i]) != math.IsNaN(got[i]) || !math.IsNaN(want[i]) && !(math.Abs(got[i]-want[i]) <= c.tol*(1+math.Abs(want[i]))) {
						if bad++; bad <= 3 {
							t.Errorf("%s[%d] = %.9g, through the concatenation %.9g", what, i, got[i], want[i])
						}
					}
				}
			}
			close("y", values(y), values(ref))
			close("dq", values(gy[0]), values(gr[0]))
			close("df", values(gy[1]), foldBack(values(gr[1]), n, w, kf, blocks))
			got := values(y)
			for j := 0; j < n; j++ {
				if !math.IsNaN(got[7*n+j]) || math.IsNaN(got[6*n+j]) {
					t.Fatalf("y[7,%d] = %v, y[6,%d] = %v: want NaN only in the row of the NaN query", j, got[7*n+j], j, got[6*n+j])
				}
			}
		})
	}
}

// A NaN entry makes its query's row NaN, a row with no mass gives −Inf,
// and operands that do not fit the blocks are errors naming the op.
func TestFoldedLogMatMulExpEdges(t *testing.T) {
	g := G.NewGraph()
	q := []float64{0, 1, 2, 3, math.NaN(), 0, 0, 0, math.Inf(-1), math.Inf(-1), math.Inf(-1), math.Inf(-1)}
	qn := G.NewMatrix(g, tensor.Float32, G.WithShape(3, 4), G.WithName("q"), G.WithValue(denseOf(tensor.Float32, q, 3, 4)))
	fn := G.NewMatrix(g, tensor.Float32, G.WithShape(2, 2), G.WithName("f"), G.WithValue(denseOf(tensor.Float32, []float64{0, -1, 1, 0}, 2, 2)))
	y := must(FoldedLogMatMulExp(qn, fn, []int{0, 1, 1, 0}, 1))
	runScalar(t, y)
	got := values(y)
	for j := 0; j < 2; j++ {
		if !math.IsNaN(got[2+j]) {
			t.Errorf("y[1,%d] = %v, want NaN (its query holds a NaN)", j, got[2+j])
		}
		if !math.IsInf(got[4+j], -1) {
			t.Errorf("y[2,%d] = %v, want −Inf (no mass)", j, got[4+j])
		}
	}
	for _, c := range []struct {
		blocks []int
		neg    int
		want   string
	}{
		{[]int{0, 1, 1}, 1, "graph.FoldedLogMatMulExp: 4 query columns in 3 blocks"},
		{[]int{0, 2, 1, 0}, 1, "graph.FoldedLogMatMulExp: 2 feature columns, want 3 blocks of 1"},
		{[]int{0, -1, 1, 0}, 1, "graph.FoldedLogMatMulExp: negative block -1 in [0 -1 1 0]"},
		{[]int{0, 0, 0, 0}, 1, "graph.FoldedLogMatMulExp: 2 feature columns, want 1 blocks of 1"},
		{[]int{0, 1, 1, 0}, 4, "graph.FoldedLogMatMulExp: 4 negative inner indices of 4"},
		{nil, 0, "graph.FoldedLogMatMulExp: 4 query columns in 0 blocks"},
	} {
		if _, err := FoldedLogMatMulExp(qn, fn, c.blocks, c.neg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("blocks %v, neg %d: %v, want an error containing %q", c.blocks, c.neg, err, c.want)
		}
	}
	// A block of the features that no query block meets could hold a
	// row's maximum, which would shift the others to nothing.
	f3 := G.NewMatrix(g, tensor.Float32, G.WithShape(2, 3), G.WithName("f3"), G.WithValue(denseOf(tensor.Float32, []float64{0, 1000, 0, 0, 0, 0}, 2, 3)))
	want := "graph.FoldedLogMatMulExp: block 1 of the features is in none of the blocks [0 2 2 0]"
	if _, err := FoldedLogMatMulExp(qn, f3, []int{0, 2, 2, 0}, 1); err == nil || err.Error() != want {
		t.Errorf("an unused block: %v, want %q", err, want)
	}
}
