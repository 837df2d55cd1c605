package graph

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// signedLSEPos and signedLSENeg are the column counts of signedLSERows.
const signedLSEPos, signedLSENeg = 3, 2

// signedLSERows returns six rows of 3 positive and 2 negative log-terms:
// a moderate row, rows whose negative mass is 0.9 and 0.999 of the
// positive (cancellation), and those three shifted by +shift, +shift and
// −shift, beyond where exp over- or underflows without the row max.
func signedLSERows(shift float64) []float64 {
	withNeg := func(ratio float64, pos ...float64) []float64 {
		var s float64
		for _, x := range pos {
			s += math.Exp(x)
		}
		return append(pos, math.Log(0.3*ratio*s), math.Log(0.7*ratio*s))
	}
	rows := [][]float64{
		{0.3, -0.5, 1.1, -1.0, -0.7},
		withNeg(0.9, 0, 0.2, -0.1),
		withNeg(0.999, 0.4, -0.3, 0.1),
	}
	for i, sh := range []float64{shift, shift, -shift} {
		r := append([]float64(nil), rows[i]...)
		for j := range r {
			r[j] += sh
		}
		rows = append(rows, r)
	}
	var out []float64
	for _, r := range rows {
		out = append(out, r...)
	}
	return out
}

// signedLSELoop is the plain definition in float64: y_i = m + log(Σ_pos
// e^{t−m} − Σ_neg e^{t−m}) with m the row max, and the gradient of Σ w∘y,
// w_i·±e^{t_ij−y_i}. cond_i = (Σ_pos + Σ_neg)/(Σ_pos − Σ_neg) is the
// condition number of the difference, by which rounding errors grow.
func signedLSELoop(t, w []float64, rows, k, neg int) (y, grad, cond []float64) {
	y, grad, cond = make([]float64, rows), make([]float64, rows*k), make([]float64, rows)
	for i := 0; i < rows; i++ {
		r := t[i*k : (i+1)*k]
		m := math.Inf(-1)
		for _, x := range r {
			m = math.Max(m, x)
		}
		var sp, sn float64
		for j, x := range r {
			if j < k-neg {
				sp += math.Exp(x - m)
			} else {
				sn += math.Exp(x - m)
			}
		}
		y[i] = m + math.Log(sp-sn)
		cond[i] = (sp + sn) / (sp - sn)
		for j, x := range r {
			s := 1.0
			if j >= k-neg {
				s = -1
			}
			grad[i*k+j] = w[i] * s * math.Exp(x-y[i])
		}
	}
	return y, grad, cond
}

// signedLSEProgram builds, in dtype dt, y = SignedRowLogSumExp(t, neg), the
// composite it replaces, p + Log1mExp(n − p) over the sliced parts, and
// the gradients of Σ w∘y of both.
type signedLSEProgram struct {
	y, old, gy, gold *G.Node
}

func newSignedLSEProgram(t *testing.T, dt tensor.Dtype, vals, w []float64, rows, k, neg int) *signedLSEProgram {
	t.Helper()
	g := G.NewGraph()
	tn := G.NewMatrix(g, dt, G.WithShape(rows, k), G.WithName("t"), G.WithValue(denseOf(dt, vals, rows, k)))
	wd := denseOf(dt, w, rows, 1)
	wn := G.NewVector(g, dt, G.WithShape(rows), G.WithName("w"), G.WithValue(tensor.New(tensor.Of(dt), tensor.WithShape(rows), tensor.WithBacking(wd.Data()))))
	p := &signedLSEProgram{y: must(SignedRowLogSumExp(tn, neg))}
	if !p.y.Shape().Eq(tensor.Shape{rows}) {
		t.Fatalf("shape %v, want (%d)", p.y.Shape(), rows)
	}
	pos, negPart := must(RowLogSumExp(must(SliceCols(tn, 0, k-neg)))), must(RowLogSumExp(must(SliceCols(tn, k-neg, k))))
	p.old = must(Add(pos, must(Log1mExp(must(Sub(negPart, pos))))))
	gy, err := Backward(must(Dot(p.y, wn)), tn)
	if err != nil {
		t.Fatal(err)
	}
	gold, err := Backward(must(Dot(p.old, wn)), tn)
	if err != nil {
		t.Fatal(err)
	}
	p.gy, p.gold = gy[0], gold[0]
	runScalar(t, p.y, p.old, p.gy, p.gold)
	return p
}

// roundTo returns x rounded to dtype dt, so a float64 reference sees the
// float32 op's inputs.
func roundTo(dt tensor.Dtype, x []float64) []float64 {
	out := append([]float64(nil), x...)
	if dt == tensor.Float32 {
		for i, v := range out {
			out[i] = float64(float32(v))
		}
	}
	return out
}

// SignedRowLogSumExp and its gradient match the plain loop and the
// composite of slices it replaces, in both dtypes, with cancellation and
// at magnitudes where exp alone over- or underflows (±80 in float32, ±700
// in float64). The error allowed is a few units of rounding of the
// dtype, grown by each row's magnitude and condition number.
func TestSignedRowLogSumExpMatchesLoop(t *testing.T) {
	const rows, k, neg = 6, signedLSEPos + signedLSENeg, signedLSENeg
	w := []float64{0.7, -1.3, 0.4, 2.1, -0.6, 1.5}
	for _, c := range []struct {
		dt    tensor.Dtype
		shift float64
		eps   float64
	}{{tensor.Float64, 700, 0x1p-52}, {tensor.Float32, 80, 0x1p-23}} {
		t.Run(fmt.Sprint(c.dt), func(t *testing.T) {
			vals := roundTo(c.dt, signedLSERows(c.shift))
			p := newSignedLSEProgram(t, c.dt, vals, w, rows, k, neg)
			wantY, wantG, cond := signedLSELoop(vals, roundTo(c.dt, w), rows, k, neg)
			y, old, gy, gold := values(p.y), values(p.old), values(p.gy), values(p.gold)
			for i := range wantY {
				tol := 16 * c.eps * (1 + math.Abs(wantY[i]) + cond[i])
				if !(math.Abs(y[i]-wantY[i]) <= tol) {
					t.Errorf("y[%d] = %.17g, loop %.17g", i, y[i], wantY[i])
				}
				// The composite rounds p and n at the scale of |y| before
				// their difference is amplified by cond.
				if !(math.Abs(y[i]-old[i]) <= 16*c.eps*(1+math.Abs(wantY[i]))*(1+cond[i])) {
					t.Errorf("y[%d] = %.17g, composite %.17g", i, y[i], old[i])
				}
				for j := i * k; j < (i+1)*k; j++ {
					// exp(t − y) inherits y's error and that of t − y.
					gtol := tol + 16*c.eps*(1+math.Abs(vals[j]))
					if !(math.Abs(gy[j]-wantG[j]) <= gtol*math.Abs(wantG[j])) {
						t.Errorf("grad[%d] = %.17g, loop %.17g", j, gy[j], wantG[j])
					}
					if !(math.Abs(gy[j]-gold[j]) <= 16*c.eps*(1+math.Abs(vals[j])+math.Abs(wantY[i]))*(1+cond[i])*math.Abs(wantG[j])) {
						t.Errorf("grad[%d] = %.17g, composite %.17g", j, gy[j], gold[j])
					}
				}
			}
		})
	}
}

// Where the difference is not positive, or an input is not finite, the op
// gives what the composite p + Log1mExp(n − p) gives: −Inf for equal
// masses, NaN for a larger negative one, NaN for a row all −Inf; negative
// columns all −Inf give the positive part's log-sum-exp.
func TestSignedRowLogSumExpEdges(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	const k, neg = 4, 2
	rows := []struct {
		t    [k]float64
		want float64
	}{
		{[k]float64{0.5, -1.5, 0.5, -1.5}, -inf},                                      // equal masses
		{[k]float64{0.5, -1.5, 0.6, -1.5}, nan},                                       // more negative mass
		{[k]float64{-inf, -inf, -inf, -inf}, nan},                                     // no mass at all
		{[k]float64{0.5, -1.5, -inf, -inf}, math.Log(math.Exp(0.5) + math.Exp(-1.5))}, // no negative mass
		{[k]float64{-inf, -inf, 0, 1}, nan},                                           // only negative mass
		{[k]float64{inf, 0, 0, 1}, inf},                                               // +Inf positive term
		{[k]float64{inf, 0, inf, 1}, nan},                                             // +Inf on both sides
		{[k]float64{3, 0, inf, 1}, nan},                                               // +Inf negative term
		{[k]float64{3, nan, 0, 1}, nan},                                               // NaN
	}
	var vals, w []float64
	for _, r := range rows {
		vals = append(vals, r.t[:]...)
		w = append(w, 1)
	}
	// same reports whether a and b are equal within tol, both NaN, or the
	// same infinity.
	same := func(a, b, tol float64) bool {
		if math.IsNaN(a) || math.IsNaN(b) || math.IsInf(b, 0) {
			return math.IsNaN(a) && math.IsNaN(b) || a == b
		}
		return math.Abs(a-b) <= tol
	}
	for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
		t.Run(fmt.Sprint(dt), func(t *testing.T) {
			p := newSignedLSEProgram(t, dt, vals, w, len(rows), k, neg)
			y, old := values(p.y), values(p.old)
			for i, r := range rows {
				if !same(y[i], r.want, 1e-6) {
					t.Errorf("row %v: %v, want %v", r.t, y[i], r.want)
				}
				if !same(y[i], old[i], 1e-6) {
					t.Errorf("row %v: %v, composite %v", r.t, y[i], old[i])
				}
				// No finite value, no finite gradient (the float32
				// exponential clamps, so this is checked, not assumed).
				if math.IsNaN(r.want) || math.IsInf(r.want, 0) {
					for j, gj := range values(p.gy)[i*k : (i+1)*k] {
						if !math.IsNaN(gj) {
							t.Errorf("row %v: gradient %d is %v, want NaN", r.t, j, gj)
						}
					}
				}
			}
		})
	}
}

// A NaN in a full vector lane of the AVX2 kernel (not only in its scalar
// tail) makes the row NaN.
func TestSignedRowLogSumExpNaNInVectorLane(t *testing.T) {
	const k, neg = 24, 8
	for _, at := range []int{3, 12, 20} { // both positive lanes and the negative one
		vals := make([]float64, k)
		for j := range vals {
			vals[j] = -float64(j) / 10
		}
		vals[at] = math.NaN()
		p := newSignedLSEProgram(t, tensor.Float32, vals, []float64{1}, 1, k, neg)
		if y := values(p.y)[0]; !math.IsNaN(y) {
			t.Errorf("NaN at column %d: %v, want NaN", at, y)
		}
	}
}

// The AVX2 float32 kernel agrees with its Go twin, on rows whose lengths
// and splits leave vector tails on both sides, and on the edge cases.
func TestSignedLSERowsF32MatchesGo(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	inf := float32(math.Inf(1))
	for _, c := range []struct{ k, neg int }{{4, 1}, {13, 5}, {40, 10}, {37, 19}} {
		rows := 7
		x := make([]float32, rows*c.k)
		for i := range x {
			x[i] = float32(rng.NormFloat64())
		}
		// Heavier positive terms keep most rows defined; row 0 has no
		// negative mass, row 1 no mass, row 2 a +Inf positive term.
		for i := 0; i < rows; i++ {
			for j := 0; j < c.k-c.neg; j++ {
				x[i*c.k+j] += 2
			}
		}
		for j := 0; j < c.k; j++ {
			if j >= c.k-c.neg {
				x[j] = -inf
			}
			x[c.k+j] = -inf
		}
		x[2*c.k] = inf
		got := make([]float32, rows)
		if !signedLSERowsF32(x, rows, c.k, c.neg, got) {
			t.Skip("no AVX2 kernel on this CPU")
		}
		for i := 0; i < rows; i++ {
			want := signedLSERow(x[i*c.k:(i+1)*c.k], c.k-c.neg)
			g := float64(got[i])
			ok := math.IsNaN(g) && math.IsNaN(want) || g == want || math.Abs(g-want) <= 1e-5*(1+math.Abs(want))
			if !ok {
				t.Errorf("k=%d neg=%d row %d: kernel %v, Go %v", c.k, c.neg, i, g, want)
			}
		}
	}
}

// In float32 too, the gradient matches central differences of Σ w∘y (y
// from the float32 op, the sum in float64). TestGradients checks float64.
func TestSignedRowLogSumExpGradientFloat32(t *testing.T) {
	const rows, k, neg, h = 6, signedLSEPos + signedLSENeg, signedLSENeg, 1e-2
	w := []float64{0.7, -1.3, 0.4, 2.1, -0.6, 1.5}
	g := G.NewGraph()
	td := denseOf(tensor.Float32, signedLSERows(80), rows, k)
	tn := G.NewMatrix(g, tensor.Float32, G.WithShape(rows, k), G.WithName("t"), G.WithValue(td))
	wd := denseOf(tensor.Float32, w, rows, 1)
	wn := G.NewVector(g, tensor.Float32, G.WithShape(rows), G.WithName("w"), G.WithValue(tensor.New(tensor.WithShape(rows), tensor.WithBacking(wd.Data()))))
	y := must(SignedRowLogSumExp(tn, neg))
	grads, err := Backward(must(Dot(y, wn)), tn)
	if err != nil {
		t.Fatal(err)
	}
	runScalar(t, y, grads[0])
	analytic := append([]float64(nil), values(grads[0])...)
	fwd, err := Compile(y)
	if err != nil {
		t.Fatal(err)
	}
	cost := func() float64 {
		if err := fwd.Run(); err != nil {
			t.Fatal(err)
		}
		var s float64
		for i, v := range values(y) {
			s += w[i] * v
		}
		return s
	}
	checkCentralDiff32(t, "t", td.Data().([]float32), analytic, cost, h, 1e-2)
}

// checkCentralDiff32 compares the analytic gradient of cost with respect to
// the float32 values v (a parameter named name) with central differences
// of step h, entry by entry, to a relative tolerance rtol.
func checkCentralDiff32(t *testing.T, name string, v []float32, analytic []float64, cost func() float64, h, rtol float64) {
	t.Helper()
	for j := range v {
		old := v[j]
		v[j] = old + float32(h)
		up := cost()
		v[j] = old - float32(h)
		down := cost()
		v[j] = old
		num := (up - down) / (2 * h)
		if math.Abs(num-analytic[j]) > rtol*math.Max(1, math.Abs(num)) {
			t.Errorf("d/d%s[%d]: analytic %.6g, numeric %.6g", name, j, analytic[j], num)
		}
	}
}
