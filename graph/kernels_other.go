//go:build !amd64

package graph

func lseRowsF32(x []float32, rows, cols, ld int, out []float32) bool              { return false }
func signedLSERowsF32(x []float32, rows, cols, neg int, out []float32) bool       { return false }
func softmaxScaleF32(x, lse, g []float32, rows, cols, ld int, out []float32) bool { return false }
func expShiftF32(x []float32, rows, cols int, rowShift, colShift []float32, out []float32) bool {
	return false
}
func adamF32(p, g, m, v []float32, lr, beta1, beta2, eps, bias1, bias2 float32) (int, bool) {
	return 0, false
}

func adagradF32(p, g, sum []float32, lr, eps float32) (int, bool)         { return 0, false }
func sgdF32(p, g, buf []float32, lr, momentum float32) (int, bool)        { return 0, false }
func unaryF32(kind unaryKind, c float32, x, out []float32) bool           { return false }
func unaryGradF32(kind unaryKind, c float32, g, x, y, out []float32) bool { return false }
func colSumExpF32(x []float32, rows, cols int, shift, acc []float32) bool { return false }

func subnormalsFlushed() bool { return false }
