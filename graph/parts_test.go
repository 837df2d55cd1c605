package graph

import (
	"math"
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// complexTable is the complex product as part products: re = a_re·b_re −
// a_im·b_im, im = a_re·b_im + a_im·b_re.
var complexTable = []PartTerm{{0, 0, 0, 1}, {1, 1, 0, -1}, {0, 1, 1, 1}, {1, 0, 1, 1}}

// threePartTable is an arbitrary table over three parts, one part
// written by no term.
var threePartTable = []PartTerm{{0, 2, 1, 1}, {2, 2, 1, -0.5}, {1, 0, 0, 2}, {2, 1, 1, 1}}

// PartProduct with the complex table is ComplexMul, broadcast rows
// included, and with any table the sum of its terms written out.
func TestPartProductMatchesTerms(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct {
		parts        int
		terms        []PartTerm
		rowsX, rowsY int
	}{{2, complexTable, 4, 4}, {2, complexTable, 1, 4}, {3, threePartTable, 5, 5}, {3, threePartTable, 5, 1}} {
		const k = 3
		n := c.parts * k
		g := G.NewGraph()
		xv, yv := randDense(rng, false, c.rowsX, n), randDense(rng, false, c.rowsY, n)
		x := G.NewMatrix(g, tensor.Float64, G.WithShape(c.rowsX, n), G.WithValue(xv), G.WithName("x"))
		y := G.NewMatrix(g, tensor.Float64, G.WithShape(c.rowsY, n), G.WithValue(yv), G.WithName("y"))
		z := must(PartProduct(x, y, c.parts, c.terms))
		nodes := G.Nodes{z}
		if c.parts == 2 {
			nodes = append(nodes, must(ComplexMul(x, y, false)))
		}
		prog, err := Compile(nodes...)
		if err != nil {
			t.Fatal(err)
		}
		if err := prog.Run(); err != nil {
			t.Fatal(err)
		}
		got := z.Value().Data().([]float64)
		rows := max(c.rowsX, c.rowsY)
		xd, yd := xv.Data().([]float64), yv.Data().([]float64)
		for i := range rows {
			xi, yi := xd[(i%c.rowsX)*n:], yd[(i%c.rowsY)*n:]
			want := make([]float64, n)
			for _, term := range c.terms {
				for j := range k {
					want[term.Out*k+j] += term.Sign * xi[term.A*k+j] * yi[term.B*k+j]
				}
			}
			for j := range n {
				if math.Abs(got[i*n+j]-want[j]) > 1e-12 {
					t.Fatalf("%d parts, rows %d×%d: z[%d,%d] = %v, want %v", c.parts, c.rowsX, c.rowsY, i, j, got[i*n+j], want[j])
				}
			}
		}
		if c.parts == 2 {
			cm := nodes[1].Value().Data().([]float64)
			for j := range got {
				if math.Abs(got[j]-cm[j]) > 1e-12 {
					t.Fatalf("rows %d×%d: PartProduct %v, ComplexMul %v at %d", c.rowsX, c.rowsY, got[j], cm[j], j)
				}
			}
		}
	}
	if _, err := PartProduct(G.NewMatrix(G.NewGraph(), tensor.Float64, G.WithShape(2, 6)), G.NewMatrix(G.NewGraph(), tensor.Float64, G.WithShape(2, 6)), 2, []PartTerm{{0, 2, 1, 1}}); err == nil {
		t.Error("a term outside the parts is accepted")
	}
}

// SignedBlockContract is Σ over all (s, r, o) of φ², φ written from its
// terms, for tables whose rows are s, r and o.
func TestSignedBlockContractIsSumOfSquares(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const parts, k = 3, 2
	terms := []TriTerm{{0, 1, 2, 1}, {2, 2, 0, -1}, {1, 0, 1, 0.5}, {0, 0, 0, 1}}
	n := parts * k
	tabs := [3]*tensor.Dense{randDense(rng, false, 4, n), randDense(rng, false, 3, n), randDense(rng, false, 5, n)}
	g := G.NewGraph()
	var grams [3]*G.Node
	for i, tab := range tabs {
		grams[i] = must(Gram(G.NewMatrix(g, tensor.Float64, G.WithShape(tab.Shape()...), G.WithValue(tab))))
	}
	z := must(SignedBlockContract(grams[0], grams[1], grams[2], parts, terms))
	prog, err := Compile(z)
	if err != nil {
		t.Fatal(err)
	}
	if err := prog.Run(); err != nil {
		t.Fatal(err)
	}
	row := func(t *tensor.Dense, i int) []float64 { return t.Data().([]float64)[i*n : (i+1)*n] }
	var want float64
	for s := range 4 {
		for r := range 3 {
			for o := range 5 {
				var phi float64
				for _, term := range terms {
					for j := range k {
						phi += term.Sign * row(tabs[0], s)[term.S*k+j] * row(tabs[1], r)[term.R*k+j] * row(tabs[2], o)[term.O*k+j]
					}
				}
				want += phi * phi
			}
		}
	}
	if got := Scalar(z.Value()); math.Abs(got-want) > 1e-9*math.Abs(want) {
		t.Errorf("SignedBlockContract %v, Σφ² %v", got, want)
	}
}

// GatedLogParts caps every later part at c times the first: with log c =
// −0.8, exp(out_p) = exp(a)·c·σ(b_p).
func TestGatedLogPartsValues(t *testing.T) {
	x := []float64{0.3, -1, 2, 0.5, -0.2, 4}
	g := G.NewGraph()
	in := G.NewMatrix(g, tensor.Float64, G.WithShape(1, 6), G.WithValue(tensor.New(tensor.WithShape(1, 6), tensor.WithBacking(x))))
	out := must(GatedLogParts(in, 3, -0.8))
	prog, err := Compile(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := prog.Run(); err != nil {
		t.Fatal(err)
	}
	got := out.Value().Data().([]float64)
	for j, a := range x[:2] {
		if got[j] != a {
			t.Errorf("first part %d: %v, want %v", j, got[j], a)
		}
		for p := 1; p < 3; p++ {
			b := x[2*p+j]
			want := a - 0.8 - math.Log1p(math.Exp(-b))
			if math.Abs(got[2*p+j]-want) > 1e-12 {
				t.Errorf("part %d column %d: %v, want %v", p, j, got[2*p+j], want)
			}
		}
	}
}
