package graph

import (
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

func TestBytes(t *testing.T) {
	g := G.NewGraph()
	x := G.NewMatrix(g, tensor.Float32, G.WithShape(7, 3), G.WithName("x"))
	y := G.NewMatrix(g, tensor.Float32, G.WithShape(3, 5), G.WithName("y"))
	xy := G.Must(G.Mul(x, y))     // 7 x 5
	sq := G.Must(G.Square(xy))    // 7 x 5
	s := G.Must(G.Sum(sq))        // scalar
	unused := G.Must(G.Square(x)) // 7 x 3, not an ancestor of s
	for _, c := range []struct {
		name    string
		outputs []*G.Node
		want    int64
	}{
		{"inputs own nothing", []*G.Node{x}, 0},
		{"one product", []*G.Node{xy}, 7 * 5 * 4},
		{"chain to a scalar", []*G.Node{s}, (7*5 + 7*5 + 1) * 4},
		{"two outputs share their ancestors once", []*G.Node{s, unused}, (7*5 + 7*5 + 1 + 7*3) * 4},
		{"none", nil, 0},
	} {
		if got := Bytes(c.outputs...); got != c.want {
			t.Errorf("%s: Bytes = %d, want %d", c.name, got, c.want)
		}
	}
}
