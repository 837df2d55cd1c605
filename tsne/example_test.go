package tsne_test

import (
	"fmt"
	"log"

	"gekc/tsne"

	"gonum.org/v1/gonum/mat"
)

// Two groups of four points in three dimensions, far apart, stay apart in
// the plane.
func ExampleEmbed() {
	x := mat.NewDense(8, 3, []float64{
		0, 0, 0, 0.1, 0, 0, 0, 0.1, 0, 0, 0, 0.1,
		9, 9, 9, 9.1, 9, 9, 9, 9.1, 9, 9, 9, 9.1,
	})
	opt := tsne.DefaultOptions()
	opt.Perplexity, opt.Seed = 3, 1
	opt.LearningRate = 5 // the automatic rate (50 at least) is for hundreds of points
	res, err := tsne.Embed(x, opt)
	if err != nil {
		log.Fatal(err)
	}
	centre := func(from int) (x, y float64) {
		for i := from; i < from+4; i++ {
			x, y = x+res.Y.At(i, 0)/4, y+res.Y.At(i, 1)/4
		}
		return x, y
	}
	ax, ay := centre(0)
	bx, by := centre(4)
	spread := 0.0
	for i := range 8 {
		cx, cy := ax, ay
		if i >= 4 {
			cx, cy = bx, by
		}
		spread = max(spread, (res.Y.At(i, 0)-cx)*(res.Y.At(i, 0)-cx)+(res.Y.At(i, 1)-cy)*(res.Y.At(i, 1)-cy))
	}
	gap := (ax-bx)*(ax-bx) + (ay-by)*(ay-by)
	fmt.Println("groups further apart than any point from its group's centre:", gap > 4*spread)
	// Output:
	// groups further apart than any point from its group's centre: true
}
