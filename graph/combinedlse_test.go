package graph

import (
	"math"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// rowsElsewhere are columns of the rows of a 3×4 x held "on another
// process": combining with their log-sum-exps makes the rows [x | them].
var rowsElsewhere = [3][]float64{{0.5, -1}, {2, 3}, {-40, 1.5}}

func combineElsewhere(lse []float64) error {
	for i := range lse {
		lse[i] = lseOf(append([]float64{lse[i]}, rowsElsewhere[i]...))
	}
	return nil
}

func lseOf(x []float64) float64 {
	m := math.Inf(-1)
	for _, v := range x {
		m = math.Max(m, v)
	}
	var s float64
	for _, v := range x {
		s += math.Exp(v - m)
	}
	return m + math.Log(s)
}

// CombinedRowLogSumExp of x combined with the other columns' log-sum-exps
// is the log-sum-exp of the whole rows, in float64 and float32.
func TestCombinedRowLogSumExpValue(t *testing.T) {
	x := []float64{1, 2, 3, 4, -5, 0, 5, 10, 100, -100, 0, 1}
	for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
		g := G.NewGraph()
		var back any = append([]float64(nil), x...)
		if dt == tensor.Float32 {
			f := make([]float32, len(x))
			for i, v := range x {
				f[i] = float32(v)
			}
			back = f
		}
		xn := G.NewMatrix(g, dt, G.WithShape(3, 4), G.WithName("x"), G.WithValue(tensor.New(tensor.WithShape(3, 4), tensor.WithBacking(back))))
		y := must(CombinedRowLogSumExp(xn, combineElsewhere))
		runScalar(t, y)
		for i := range 3 {
			want := lseOf(append(append([]float64(nil), x[4*i:4*i+4]...), rowsElsewhere[i]...))
			if got := scalarAt(y.Value(), i); math.Abs(got-want) > 1e-5*math.Max(1, math.Abs(want)) {
				t.Errorf("%v row %d: %v, want %v", dt, i, got, want)
			}
		}
	}
}

// Its gradient at x is the whole rows' softmax at x's columns.
func TestCombinedRowLogSumExpGradient(t *testing.T) {
	checkGradients(t, gradCase{name: "CombinedRowLogSumExp", shapes: [][]int{{3, 4}, {3}},
		build: func(g *G.ExprGraph, p G.Nodes) (*G.Node, error) {
			y, err := CombinedRowLogSumExp(p[0], combineElsewhere)
			if err != nil {
				return nil, err
			}
			return G.Sum(must(G.HadamardProd(y, p[1])))
		}})
}
